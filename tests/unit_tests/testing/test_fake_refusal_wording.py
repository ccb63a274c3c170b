"""The exact refusals of the multi-turn rules (issue 31: rules.py mutants survived because no test
read the whole message). Each history breaks one or more rules; the 400's message lists every
problem, in order, in the service's wording (Anthropic's for tool_use / tool_result, Kimi's for a
tool-call turn without reasoning), with the index of the message at fault."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from langchain_kimi.testing import FakeKimiGateway
from tests.unit_tests.testing.raw import error_message, post, user

TOOLS_MESSAGES = [{"name": "get_weather", "input_schema": {"type": "object"}}]
TOOLS_CHAT = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
WITHOUT_RESULT = (
    "messages.{}: tool_use ids were found without tool_result blocks immediately after: {}. "
    "Each tool_use block must have a corresponding tool_result block in the next message."
)
MISSING = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1"
)
PLACEHOLDER = {"type": "thinking", "thinking": "p"}


def _use(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "get_weather", "input": {}}


def _result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "x"}


def _messages(*history: dict[str, Any]) -> dict[str, Any]:
    return {**user("x", protocol="anthropic"), "tools": TOOLS_MESSAGES, "messages": list(history)}


def _call(call_id: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": "{}"},
    }


def _chat(*history: dict[str, Any]) -> dict[str, Any]:
    return {**user("x"), "tools": TOOLS_CHAT, "messages": list(history)}


Q = {"role": "user", "content": "q"}
MESSAGES_CASES = {
    "no thinking, no result": (
        _messages(
            Q, {"role": "assistant", "content": [_use("t1")]}, {"role": "user", "content": "next"}
        ),
        f"{MISSING}; {WITHOUT_RESULT.format(1, ['t1'])}",
    ),
    "unexpected and missing result": (
        _messages(
            Q,
            {"role": "assistant", "content": [PLACEHOLDER, _use("t1")]},
            {"role": "user", "content": [_result("t2")]},
        ),
        "messages.2: unexpected tool_use_id found in tool_result blocks: ['t2']. Each tool_result "
        "block must have a corresponding tool_use block in the previous message.; "
        + WITHOUT_RESULT.format(1, ["t1"]),
    ),
    "two assistant turns in a row (placeholder strict)": (
        _messages(
            Q,
            {"role": "assistant", "content": [PLACEHOLDER, _use("t1")]},
            {"role": "assistant", "content": "again"},
            {"role": "user", "content": "q2"},
        ),
        "messages.1: a tool-use turn whose thinking is an unsigned placeholder [assumed: "
        f"messages-tool-turn-thinking, strict]; {WITHOUT_RESULT.format(1, ['t1'])}",
    ),
    "a malformed signature, a last turn unanswered": (
        _messages(
            Q, {"role": "assistant", "content": [{**PLACEHOLDER, "signature": "short"}, _use("t1")]}
        ),
        "messages.1.content.0: Invalid `signature` in `thinking` block (thinking must be sent back "
        f"unchanged with its signature); {WITHOUT_RESULT.format(1, ['t1'])}",
    ),
    "the second tool turn unanswered": (
        _messages(
            Q,
            {"role": "assistant", "content": [PLACEHOLDER, _use("t1")]},
            {"role": "user", "content": [_result("t1")]},
            {"role": "assistant", "content": [PLACEHOLDER, _use("t3")]},
        ),
        WITHOUT_RESULT.format(3, ["t3"]),
    ),
}


@pytest.mark.parametrize("case", MESSAGES_CASES)
def test_messages_refusals_word_for_word(case: str) -> None:
    body, expected = MESSAGES_CASES[case]
    gw = FakeKimiGateway(assume={"messages-tool-turn-thinking": "strict"})
    if "strict" not in case:
        gw = FakeKimiGateway()
    response = post(gw, "anthropic", body)
    assert response.status_code == 400
    assert error_message(response) == expected
    assert gw.refusals == [expected]


def test_chat_refusals_word_for_word() -> None:
    body = _chat(
        Q,
        {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
        {"role": "user", "content": "n"},
        {"role": "tool", "tool_call_id": "c9", "content": "x"},
    )
    assert error_message(post(FakeKimiGateway(), "openai", body)) == (
        f"{MISSING}; messages[1]: an assistant message with tool_calls must be followed by tool "
        "messages answering each tool_call_id; not answered: ['c1', 'c2']; messages[3]: tool "
        "message with tool_call_id 'c9' answers no tool call of the assistant message before it"
    )


def test_the_placeholder_and_the_search_answer_word_for_word() -> None:
    placeholder = _chat(
        Q,
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "(reasoning not available)",
            "tool_calls": [_call("c1")],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "x"},
    )
    gw = FakeKimiGateway(assume={"chat-tool-turn-reasoning": "strict"})
    assert error_message(post(gw, "openai", placeholder)) == (
        "messages[1]: a tool-call turn with the placeholder reasoning_content [assumed: "
        "chat-tool-turn-reasoning, strict]"
    )
    (use,) = gw.assumed
    assert (use.question, use.request, use.outcome) == ("chat-tool-turn-reasoning", 1, "refused")
    search = {
        "id": "s1",
        "type": "builtin_function",
        "function": {"name": "$web_search", "arguments": '{"query":"q"}'},
    }
    body = {
        **_chat(
            Q,
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "r",
                "tool_calls": [search],
            },
            {"role": "tool", "tool_call_id": "s1", "content": "other"},
        ),
        "tools": [{"type": "web_search"}],
    }
    gw = FakeKimiGateway(assume={"web-search-limit-answer": "strict"})
    assert error_message(post(gw, "openai", body)) == (
        "messages[2]: a $web_search call answered with other text than its arguments [assumed: "
        "web-search-limit-answer, strict]"
    )
    assert [(u.question, u.request) for u in gw.assumed] == [("web-search-limit-answer", 1)]


def test_both_changes_of_an_issued_chat_turn_are_named() -> None:
    gw = FakeKimiGateway().add_reply(
        reasoning="r", tool_calls=[{"name": "get_weather", "args": {}}]
    )
    issued = post(gw, "openai", {**user("q"), "tools": TOOLS_CHAT}).json()["choices"][0]["message"]
    edited = {
        **issued,
        "reasoning_content": "other",
        "tool_calls": [
            {**issued["tool_calls"][0], "function": {"name": "get_weather", "arguments": '{"a":1}'}}
        ],
    }
    body = _chat(
        Q, edited, {"role": "tool", "tool_call_id": issued["tool_calls"][0]["id"], "content": "x"}
    )
    assert error_message(post(gw, "openai", body)) == (
        "messages[1]: reasoning_content and tool_calls of an assistant turn must be sent back "
        "unchanged in later turns"
    )


def test_an_earlier_replys_thinking_stays_known_after_another_reply() -> None:
    """Every thinking text issued is remembered (not only the last reply's)."""
    gw = FakeKimiGateway().add_reply(text="one", reasoning="first thought").add_reply(text="two")
    first = post(gw, "anthropic", user("a", protocol="anthropic")).json()["content"]
    post(gw, "anthropic", user("b", protocol="anthropic"))
    stripped = {"type": "thinking", "thinking": first[0]["thinking"]}
    body = {
        **user("c", protocol="anthropic"),
        "messages": [
            Q,
            {"role": "assistant", "content": [stripped, first[1]]},
            {"role": "user", "content": "c"},
        ],
    }
    assert error_message(post(gw, "anthropic", body)) == (
        "messages.1.content.0: `signature` missing from a signed `thinking` block (stripped)"
    )


def test_an_edited_issued_search_result_is_refused() -> None:
    """Issued blocks are known by `id` and, for results, by `tool_use_id`."""
    gw = FakeKimiGateway().add_web_search("kimi").add_reply(text="found")
    tools = [{"type": "web_search_20250305", "name": "web_search"}]
    content = post(gw, "anthropic", {**user("s", protocol="anthropic"), "tools": tools}).json()[
        "content"
    ]
    result = next(i for i, b in enumerate(content) if b["type"] == "web_search_tool_result")
    content[result] = {**content[result], "content": []}
    body = {
        **user("s", protocol="anthropic"),
        "tools": tools,
        "messages": [
            Q,
            {"role": "assistant", "content": content},
            {"role": "user", "content": "more"},
        ],
    }
    assert error_message(post(gw, "anthropic", body)) == (
        f"messages.1.content.{result}: a web_search_tool_result block of an assistant turn must be "
        "sent back unchanged in later turns"
    )


@pytest.mark.parametrize(
    ("signature", "verdict"),
    [
        ("A" * 32, "unverified"),
        ("A" * 31, "refused"),
        ("a-b_" * 8 + "c", "unverified"),  # base64url, not valid standard base64
        (base64.b64encode(b"\x12\x0cfake-kimi-gw" + bytes(48)).decode(), "refused"),  # ours, forged
    ],
)
def test_the_shape_of_a_foreign_signature(signature: str, verdict: str) -> None:
    gw = FakeKimiGateway().add_reply(text="ok")
    thinking = {"type": "thinking", "thinking": "t", "signature": signature}
    body = {
        **user("c", protocol="anthropic"),
        "messages": [
            Q,
            {"role": "assistant", "content": [thinking, {"type": "text", "text": "a"}]},
            {"role": "user", "content": "c"},
        ],
    }
    response = post(gw, "anthropic", body)
    assert response.status_code == (200 if verdict == "unverified" else 400)
    assert gw.unverified == (["request #1 messages.1.content.0"] if verdict == "unverified" else [])


def test_the_signature_is_a_fixed_function_of_the_text() -> None:
    """Reproducible across gateways and runs (a history recorded on one fake replays on another)."""
    from langchain_kimi.testing.rules import sign

    assert (
        sign("x")
        == "EgxmYWtlLWtpbWktZ3eD2/GqjkTjB+9LHGgn4tGwm20ctHepxiS74TUtxCnt9IPb8aqOROMH70scaCfi0bA="
    )


def test_a_chat_history_ending_on_an_unanswered_tool_call_turn() -> None:
    body = _chat(
        Q,
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "r",
            "tool_calls": [_call("c1")],
        },
    )
    assert error_message(post(FakeKimiGateway(), "openai", body)) == (
        "messages[1]: an assistant message with tool_calls must be followed by tool messages "
        "answering each tool_call_id; not answered: ['c1']"
    )


def test_problems_of_two_tool_turns_are_all_kept() -> None:
    body = _chat(
        Q,
        {"role": "assistant", "content": None, "tool_calls": [_call("c1")]},
        {"role": "user", "content": "n"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c2")]},
        {"role": "tool", "tool_call_id": "c2", "content": "x"},
    )
    assert error_message(post(FakeKimiGateway(), "openai", body)) == (
        f"{MISSING}; messages[1]: an assistant message with tool_calls must be followed by tool "
        "messages answering each tool_call_id; not answered: ['c1']; thinking is enabled but "
        "reasoning_content is missing in assistant tool call message at index 3"
    )


def test_a_search_answer_refusal_keeps_the_problems_before_it() -> None:
    search = {
        "id": "s1",
        "type": "builtin_function",
        "function": {"name": "$web_search", "arguments": "{}"},
    }
    body = {
        **_chat(
            Q,
            {"role": "assistant", "content": None, "tool_calls": [_call("c1")]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "r",
                "tool_calls": [search],
            },
            {"role": "tool", "tool_call_id": "s1", "content": "other"},
        ),
        "tools": [*TOOLS_CHAT, {"type": "web_search"}],
    }
    message = error_message(
        post(FakeKimiGateway(assume={"web-search-limit-answer": "strict"}), "openai", body)
    )
    assert message.startswith(MISSING + "; messages[4]: a $web_search call answered")


def test_two_bad_thinking_blocks_in_one_turn_are_both_named() -> None:
    bad = {"type": "thinking", "thinking": "t", "signature": "short"}
    body = _messages(
        Q,
        {
            "role": "assistant",
            "content": [bad, {**bad, "thinking": "u"}, {"type": "text", "text": "a"}],
        },
        {"role": "user", "content": "c"},
    )
    invalid = "Invalid `signature` in `thinking` block (thinking must be sent back unchanged with its signature)"
    assert error_message(post(FakeKimiGateway(), "anthropic", body)) == (
        f"messages.1.content.0: {invalid}; messages.1.content.1: {invalid}"
    )


def test_an_issued_turn_with_the_placeholder_text_is_not_foreign() -> None:
    """A turn the gateway issued is judged as issued, whatever its reasoning says."""
    gw = FakeKimiGateway(assume={"chat-tool-turn-reasoning": "strict"})
    gw.add_reply(
        reasoning="(reasoning not available)", tool_calls=[{"name": "get_weather", "args": {}}]
    )
    gw.add_reply(text="ok")
    issued = post(gw, "openai", {**user("q"), "tools": TOOLS_CHAT}).json()["choices"][0]["message"]
    body = _chat(
        Q, issued, {"role": "tool", "tool_call_id": issued["tool_calls"][0]["id"], "content": "x"}
    )
    assert post(gw, "openai", body).status_code == 200


def test_a_foreign_turn_with_a_signed_thinking_block_is_no_placeholder() -> None:
    signed = {"type": "thinking", "thinking": "t", "signature": "A" * 40}
    body = _messages(
        Q,
        {"role": "assistant", "content": [signed, _use("t1")]},
        {"role": "user", "content": [_result("t1")]},
    )
    gw = FakeKimiGateway(assume={"messages-tool-turn-thinking": "strict"}).add_reply(text="ok")
    assert post(gw, "anthropic", body).status_code == 200
    placeholder = _messages(
        Q,
        {"role": "assistant", "content": [PLACEHOLDER, _use("t1")]},
        {"role": "user", "content": [_result("t1")]},
    )
    assert post(gw, "anthropic", placeholder).status_code == 400
    use = next(u for u in gw.assumed if u.question == "messages-tool-turn-thinking")
    assert (use.request, use.outcome) == (2, "refused")


def test_the_dropped_thinking_wording() -> None:
    gw = FakeKimiGateway().add_reply(
        reasoning="r", tool_calls=[{"name": "get_weather", "args": {}}]
    )
    content = post(
        gw, "anthropic", {**user("q", protocol="anthropic"), "tools": TOOLS_MESSAGES}
    ).json()["content"]
    body = _messages(
        Q,
        {"role": "assistant", "content": content[1:]},
        {"role": "user", "content": [_result(content[1]["id"])]},
    )
    assert error_message(post(gw, "anthropic", body)) == (
        "messages.1: the signed thinking block issued with this turn's tool_use was dropped or "
        "replaced (it must be sent back unchanged)"
    )


def test_rules_called_without_a_judgement_use_the_defaults() -> None:
    from langchain_kimi.testing import rules

    body = _messages(
        Q,
        {"role": "assistant", "content": [PLACEHOLDER, _use("t1")]},
        {"role": "user", "content": [_result("t1")]},
    )
    assert rules.problems(body, "anthropic", rules.Issued()) == []


def test_a_tool_result_after_a_user_message_answers_nothing() -> None:
    body = _messages(Q, {"role": "user", "content": [_result("t9")]})
    assert error_message(post(FakeKimiGateway(), "anthropic", body)) == (
        "messages.1: unexpected tool_use_id found in tool_result blocks: ['t9']. Each tool_result "
        "block must have a corresponding tool_use block in the previous message."
    )
