"""The offline token estimate (the gateway has no counting endpoint)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from langchain_kimi import ChatKimi
from langchain_kimi._langchain.token_estimate import PER_MESSAGE_OVERHEAD, estimate_text_tokens

MODEL = ChatKimi(api_key="placeholder")


def test_ascii_is_about_four_characters_per_token() -> None:
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens("abcd") == 1
    assert estimate_text_tokens("abcde") == 2
    assert MODEL.get_num_tokens("x" * 400) == 100


def test_non_ascii_counts_one_token_per_character() -> None:
    assert estimate_text_tokens("你好世界") == 4
    assert estimate_text_tokens("ab你好") == 1 + 2


def test_messages_add_overhead_reasoning_and_tool_calls() -> None:
    plain = MODEL.get_num_tokens_from_messages([HumanMessage("abcd")])
    assert plain == PER_MESSAGE_OVERHEAD + 1
    with_reasoning = AIMessage("abcd", additional_kwargs={"reasoning_content": "x" * 40})
    assert MODEL.get_num_tokens_from_messages([with_reasoning]) == plain + 10
    with_call = AIMessage(
        "abcd", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": "c1"}]
    )
    assert MODEL.get_num_tokens_from_messages([with_call]) > plain


def test_tuples_blocks_and_tools_are_accepted() -> None:
    messages = [("system", "Be terse."), ("human", [{"type": "text", "text": "abcd"}])]
    base = MODEL.get_num_tokens_from_messages(messages)  # type: ignore[arg-type]
    assert base == MODEL.get_num_tokens_from_messages(
        [SystemMessage("Be terse."), HumanMessage("abcd")]
    )
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    assert MODEL.get_num_tokens_from_messages(messages, tools=[tool]) > base  # type: ignore[arg-type]


def _per_character_estimate(text: str) -> int:
    """The original per-character rule, kept as the oracle for the fast implementation."""
    import math

    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 4.0) + (len(text) - ascii_chars)


def _varied_texts() -> list[str]:
    import random

    rng = random.Random(12)
    alphabets = [
        "abc xyz\n\t{}\"'\\",
        "äöüßéèñç",
        "你好世界日本語한국어",
        "🙂🚀👩‍💻🇳🇴",
        "\x00\x7f\x80\xff",
        "\ud800\udfff",  # lone surrogates: still one character each
    ]
    texts = ["", "a", "abcd", "abcde", "é", "\x7f", "\x80", "ab你好", "x" * 4_000_001]
    for size in (1, 2, 3, 5, 17, 256, 10_000):
        for _ in range(20):
            pool = "".join(rng.sample(alphabets, k=rng.randint(1, len(alphabets))))
            texts.append("".join(rng.choice(pool) for _ in range(size)))
    return texts


def test_fast_estimate_equals_the_per_character_rule() -> None:
    for text in _varied_texts():
        assert estimate_text_tokens(text) == _per_character_estimate(text), repr(text[:40])
