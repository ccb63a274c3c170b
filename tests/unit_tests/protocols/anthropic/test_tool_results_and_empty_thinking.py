"""Two forms other integrations hand to the Messages builder (issue 51 items 13 and 15).

- A `ToolMessage` whose content already is `tool_result` blocks (ChatAnthropic accepts it and
  sends the blocks as they are): sent as those blocks, their content read as a ToolMessage's
  (text and images where the row allows them, a string on kimi-k3), each answering a call of
  the history.
- A reasoning or thinking block with no text and no signature says nothing: not sent
  (docs/reasoning.md: an empty reasoning counts as none), so a tool-call turn holding only such
  a block gets the placeholder like any turn without reasoning.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_kimi._contract import FOREIGN_TURN_REASONING
from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import K3, K31_PRO, capabilities
from langchain_kimi.protocols.anthropic_messages import build_request
from tools.schema_validation import validate_request

CALLS = [
    {"name": "f", "args": {}, "id": "call_1", "type": "tool_call"},
    {"name": "f", "args": {}, "id": "call_2", "type": "tool_call"},
]
PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


def build(messages: list[BaseMessage], model: str = K31_PRO) -> dict[str, Any]:
    body = build_request(messages, RequestOptions(caps=capabilities(model, "anthropic")))
    validate_request(body, "anthropic", model)
    return body


def answered_by(*tool_messages: ToolMessage) -> list[BaseMessage]:
    return [HumanMessage("Run both."), AIMessage("", tool_calls=CALLS), *tool_messages]


def test_tool_result_blocks_are_sent_as_they_are() -> None:
    results = [
        {"type": "tool_result", "content": "one", "tool_use_id": "call_1"},
        {"type": "tool_result", "content": "two", "tool_use_id": "call_2", "is_error": True},
    ]
    body = build(answered_by(ToolMessage(results, tool_call_id="call_1")))
    assert body["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "one"},
            {"type": "tool_result", "tool_use_id": "call_2", "content": "two", "is_error": True},
        ],
    }


@pytest.mark.parametrize(
    ("model", "content"),
    [
        (K31_PRO, [{"type": "text", "text": "a"}, {"type": "image", "source": PNG}]),
        (K3, "ab"),  # kimi-k3's tool_result content is a string only
    ],
)
def test_a_tool_result_blocks_content_is_read_as_a_tool_messages(model: str, content: Any) -> None:
    parts = [{"type": "text", "text": "a"}, "b"] if model == K3 else content
    result = {"type": "tool_result", "tool_use_id": "call_1", "content": parts}
    message = ToolMessage([result], tool_call_id="call_1")
    body = build(answered_by(message, ToolMessage("x", tool_call_id="call_2")), model)
    assert body["messages"][2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": content,
    }


def test_a_tool_result_block_answering_no_call_is_refused() -> None:
    result = {"type": "tool_result", "tool_use_id": "call_9", "content": "x"}
    with pytest.raises(ValueError, match="tool_call_id 'call_9' matches no tool call"):
        build(answered_by(ToolMessage([result], tool_call_id="call_1")))


def test_a_tool_result_block_without_content_sends_an_empty_result() -> None:
    result = {"type": "tool_result", "tool_use_id": "call_1"}
    body = build(answered_by(ToolMessage([result], tool_call_id="call_1")))
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": ""}
    ]


@pytest.mark.parametrize("content", [None, 3, {"text": "x"}])
def test_a_tool_result_block_whose_content_is_no_string_or_list_is_refused(content: Any) -> None:
    result = {"type": "tool_result", "tool_use_id": "call_1", "content": content}
    kind = type(content).__name__
    with pytest.raises(ValueError, match=f"string or a list of blocks, got a {kind}$"):
        build(answered_by(ToolMessage([result], tool_call_id="call_1")))


def test_tool_result_blocks_mixed_with_other_parts_stay_refused() -> None:
    parts = [{"type": "tool_result", "tool_use_id": "call_1", "content": "x"}, "text"]
    with pytest.raises(ValueError, match="'tool_result' in a tool message"):
        build(answered_by(ToolMessage(parts, tool_call_id="call_1")))


def test_a_plain_tool_message_keeps_its_error_status() -> None:
    body = build(answered_by(ToolMessage("boom", tool_call_id="call_1", status="error")))
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "boom", "is_error": True}
    ]


# --- reasoning with no text ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "empty",
    [
        {"type": "reasoning", "reasoning": ""},
        {"type": "reasoning"},
        {"type": "thinking", "thinking": ""},
        {"type": "thinking", "thinking": "", "index": 0},
    ],
)
def test_reasoning_with_no_text_and_no_signature_is_not_sent(empty: dict[str, Any]) -> None:
    chat = build([HumanMessage("hi"), AIMessage([empty, {"type": "text", "text": "yo"}])])
    assert chat["messages"][1]["content"] == [{"type": "text", "text": "yo"}]
    # A tool-call turn with only that: no reasoning of its own, so the placeholder.
    tool_turn = AIMessage([empty], tool_calls=CALLS[:1])
    body = build([HumanMessage("hi"), tool_turn, ToolMessage("x", tool_call_id="call_1")])
    assert body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": FOREIGN_TURN_REASONING,
    }


@pytest.mark.parametrize(
    ("block", "sent"),
    [
        (
            {"type": "reasoning", "reasoning": "", "extras": {"signature": "c2ln"}},
            {"type": "thinking", "thinking": "", "signature": "c2ln"},
        ),
        (
            {"type": "thinking", "thinking": "", "signature": "c2ln"},
            {"type": "thinking", "thinking": "", "signature": "c2ln"},
        ),
        ({"type": "reasoning", "reasoning": "r"}, {"type": "thinking", "thinking": "r"}),
    ],
)
def test_a_signed_or_written_thinking_is_sent(block: dict[str, Any], sent: Any) -> None:
    body = build([HumanMessage("hi"), AIMessage([block, {"type": "text", "text": "yo"}])])
    assert body["messages"][1]["content"][0] == sent
