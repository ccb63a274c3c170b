"""The fake gateway's judgement helpers of `langchain_kimi.testing.rules`, called directly."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_kimi import FOREIGN_TURN_REASONING
from langchain_kimi.testing import rules
from langchain_kimi.testing.assumptions import Assumed


@pytest.mark.parametrize(
    ("signature", "kind"),
    [
        (rules.sign("I thought."), "ours"),
        ("A" * 43 + "=", "foreign"),
        ("x" * 32, "foreign"),
        ("short", "malformed"),
        (None, "malformed"),
        ("not base64 at all, with spaces and more than 32 characters", "malformed"),
    ],
)
def test_signature_kinds(signature: Any, kind: str) -> None:
    assert rules.signature_kind(signature) == kind


def test_a_base64url_character_inside_our_signature_makes_it_foreign() -> None:
    """Strict base64: `-` is not skipped, so the token is not one this fake issued."""
    ours = rules.sign("I thought.")
    assert rules.signature_kind(ours[:20] + "-" + ours[20:]) == "foreign"


def test_cache_control_is_no_edit_of_a_block() -> None:
    block = {"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}
    assert rules._without_marks(block) == {"type": "text", "text": "Hi"}


def test_the_tool_blocks_an_issued_turn_is_remembered_by() -> None:
    issued = rules.Issued()
    thinking = {"type": "thinking", "thinking": "Plan.", "signature": rules.sign("Plan.")}
    use = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    issued.remember_anthropic([thinking, use])
    assert issued.anthropic_blocks == {"tool_use:toolu_1": use}
    assert issued.anthropic_thinking == {"toolu_1": [thinking]}
    assert issued.reasoning == {"Plan."}


def test_a_redacted_thinking_block_sent_back_counts_as_the_turns_thinking() -> None:
    issued = rules.Issued()
    redacted = {"type": "redacted_thinking", "data": "b" * 40}
    use = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    issued.anthropic_thinking["toolu_1"] = [redacted]
    kept = rules._turn_thinking(1, [redacted, use], issued, rules.Judged())
    assert kept == []
    dropped = rules._turn_thinking(1, [use], issued, rules.Judged())
    assert len(dropped) == 1
    assert "was dropped or replaced" in dropped[0]


USE = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


def test_a_message_that_is_no_object_does_not_end_the_judgement() -> None:
    anthropic = {"messages": ["junk", {"role": "assistant", "content": [USE]}]}
    found = rules.problems(anthropic, "anthropic", rules.Issued())
    assert any(p.startswith("messages.1: tool_use ids were found without") for p in found)
    assistant = {"role": "assistant", "reasoning_content": "Plan.", "tool_calls": [CALL]}
    openai = {"messages": ["junk", assistant]}
    found = rules.problems(openai, "openai", rules.Issued())
    assert any(p.startswith("messages[1]: an assistant message with tool_calls") for p in found)


def test_a_message_without_content_or_a_tool_message_first_is_judged_not_crashed() -> None:
    assert rules.problems({"messages": [{"role": "user"}]}, "anthropic", rules.Issued()) == []
    first = {"messages": [{"role": "tool", "tool_call_id": "call_9", "content": "x"}]}
    assert rules.problems(first, "openai", rules.Issued()) == [
        "messages[0]: tool message with tool_call_id 'call_9' answers no tool call of the"
        " assistant message before it"
    ]


SEARCH = {
    "id": "ws_1",
    "type": "function",
    "function": {"name": "$web_search", "arguments": '{"query": "x"}'},
}


@pytest.mark.parametrize("choice", ["strict", "lenient"])
def test_a_web_search_call_is_answered_with_its_own_arguments(choice: str) -> None:
    def judge(answer: str) -> list[str]:
        judged = rules.Judged(assumed=Assumed({"web-search-limit-answer": choice}))
        messages = [
            {"role": "assistant", "reasoning_content": "Search.", "tool_calls": [SEARCH]},
            {"role": "tool", "tool_call_id": "ws_1", "content": answer},
        ]
        return rules.problems({"messages": messages}, "openai", rules.Issued(), judged)

    assert judge('{"query": "x"}') == []
    refused = [
        "messages[1]: a $web_search call answered with other text than its arguments"
        " [assumed: web-search-limit-answer, strict]"
    ]
    assert judge("the results") == (refused if choice == "strict" else [])


def test_the_placeholder_reasoning_accepted_leaves_no_problem() -> None:
    judged = rules.Judged(assumed=Assumed({"chat-tool-turn-reasoning": "lenient"}))
    messages = [
        {"role": "assistant", "reasoning_content": FOREIGN_TURN_REASONING, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "done"},
    ]
    assert rules.problems({"messages": messages}, "openai", rules.Issued(), judged) == []


def test_an_issued_tool_use_block_edited_in_a_later_turn_is_a_problem() -> None:
    issued = rules.Issued()
    thinking = {"type": "thinking", "thinking": "Plan.", "signature": rules.sign("Plan.")}
    issued.remember_anthropic([thinking, USE])
    edited = {**USE, "input": {"city": "Paris"}}
    messages = [
        {"role": "assistant", "content": [thinking, edited]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]},
    ]
    assert rules.problems({"messages": messages}, "anthropic", issued) == [
        "messages.0.content.1: a tool_use block of an assistant turn must be sent back unchanged"
        " in later turns"
    ]


def test_only_an_assistant_message_carries_tool_calls() -> None:
    odd = {"role": "user", "content": "Hi", "tool_calls": [CALL]}
    assert rules.problems({"messages": [odd]}, "openai", rules.Issued()) == []
