"""Assistant tool-call turns without reasoning (issue 11 item 10).

Kimi services reject them: "thinking is enabled but reasoning_content is missing in assistant
tool call message at index N" (an empty string counts as missing). Such turns reach ChatKimi from
other models (`with_fallbacks`, multi-agent histories), hand-written few-shot examples or
rebuilt stores. Chat Completions gets `FOREIGN_TURN_REASONING` as `reasoning_content`; Messages
gets it as an unsigned `thinking` block (the K3.1 and K3 schemas require only `type` and
`thinking`). Whether the service accepts either is on the live mode's list of open questions.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langchain_kimi._contract import FOREIGN_TURN_REASONING
from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import K3, K31_PRO, capabilities
from langchain_kimi.protocols import anthropic_messages, openai_chat
from tools.schema_validation import validate_request

CALL = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}


def history(ai: AIMessage) -> list[Any]:
    return [
        HumanMessage("Weather in Paris?"),
        ai,
        ToolMessage("18 C", tool_call_id="call_1"),
    ]


def build(protocol: str, model: str, ai: AIMessage) -> dict[str, Any]:
    adapter = openai_chat if protocol == "openai" else anthropic_messages
    body = adapter.build_request(history(ai), RequestOptions(caps=capabilities(model, protocol)))  # type: ignore[arg-type]
    validate_request(body, protocol, model)
    return body


def test_placeholder_is_short_and_not_empty() -> None:
    assert FOREIGN_TURN_REASONING.strip()
    assert len(FOREIGN_TURN_REASONING) < 120


@pytest.mark.parametrize("model", [K31_PRO, K3])
@pytest.mark.parametrize("reasoning", [None, ""])
def test_chat_tool_call_turn_without_reasoning_gets_the_placeholder(
    model: str, reasoning: str | None
) -> None:
    kwargs = {} if reasoning is None else {"reasoning_content": reasoning}
    ai = AIMessage("", tool_calls=[CALL], additional_kwargs=kwargs)
    assistant = build("openai", model, ai)["messages"][1]
    assert assistant["tool_calls"][0]["id"] == "call_1"
    assert assistant["reasoning_content"] == FOREIGN_TURN_REASONING


def test_chat_own_reasoning_is_never_replaced() -> None:
    ai = AIMessage("", tool_calls=[CALL], additional_kwargs={"reasoning_content": "Look it up."})
    assistant = build("openai", K31_PRO, ai)["messages"][1]
    assert assistant["reasoning_content"] == "Look it up."


def test_chat_turn_without_tool_calls_gets_no_placeholder() -> None:
    body = openai_chat.build_request(
        [HumanMessage("hi"), AIMessage("hello"), HumanMessage("again")],
        RequestOptions(caps=capabilities(K31_PRO, "openai")),
    )
    assert "reasoning_content" not in body["messages"][1]


@pytest.mark.parametrize("model", [K31_PRO, K3])
def test_messages_tool_call_turn_without_thinking_gets_an_unsigned_placeholder(model: str) -> None:
    ai = AIMessage("Checking.", tool_calls=[CALL])
    blocks = build("anthropic", model, ai)["messages"][1]["content"]
    assert blocks[0] == {"type": "thinking", "thinking": FOREIGN_TURN_REASONING}
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use"]


def test_messages_own_thinking_is_never_replaced() -> None:
    thinking = {"type": "thinking", "thinking": "Look it up.", "signature": "sig"}
    ai = AIMessage(
        "",
        tool_calls=[CALL],
        additional_kwargs={"reasoning_content": "Look it up.", "thinking_blocks": [thinking]},
    )
    blocks = build("anthropic", K31_PRO, ai)["messages"][1]["content"]
    assert blocks[0] == thinking
    assert FOREIGN_TURN_REASONING not in str(blocks)


def test_authored_cassettes_use_the_same_placeholder() -> None:
    from tools.authoring._wire import FOREIGN_REASONING, FOREIGN_THINKING

    assert FOREIGN_REASONING == FOREIGN_TURN_REASONING
    assert FOREIGN_THINKING == {"type": "thinking", "thinking": FOREIGN_TURN_REASONING}
