"""A `redacted_thinking` block in a history (Claude's encrypted reasoning, as langchain-anthropic
keeps it) is not sent: the Messages documents' `ContentBlock` (000 and 001) has no such type, so
the gateway refuses the request, and Kimi could not read another provider's reasoning anyway.
Found by replaying the recorded langchain-anthropic history through the fake gateway."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from tests.support.gateways import answering, only_request

REDACTED = {"type": "redacted_thinking", "data": "EtECCkYICRgCKkAqdgVIADHR"}


def _sent(history: list[BaseMessage], model: str) -> list[dict[str, Any]]:
    gateway = answering()
    gateway.chat_model(protocol="anthropic", model=model).invoke(history)
    return list(only_request(gateway)["messages"])


@pytest.mark.parametrize("model", ["kimi-k3.1-pro", "kimi-k3"])
def test_a_claude_turn_with_redacted_thinking_is_sent_without_it(model: str) -> None:
    turn = AIMessage(content=[REDACTED, {"type": "text", "text": "Hello."}])
    messages = _sent([HumanMessage("Hi"), turn, HumanMessage("And?")], model)
    assert messages[1] == {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}


def test_a_tool_call_turn_keeps_a_thinking_block_in_its_place() -> None:
    turn = AIMessage(
        content=[REDACTED, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}],
        tool_calls=[{"id": "toolu_1", "name": "f", "args": {}}],
    )
    history = [HumanMessage("Hi"), turn, ToolMessage("done", tool_call_id="toolu_1")]
    blocks = _sent(history, "kimi-k3.1-pro")[1]["content"]
    assert [b["type"] for b in blocks] == ["thinking", "tool_use"]
    assert "signature" not in blocks[0]  # the unsigned placeholder of a foreign turn


def test_redacted_thinking_kept_as_received_is_not_replayed_either() -> None:
    stored = [REDACTED, {"type": "text", "text": "Hello."}]
    turn = AIMessage(
        content="Hello.",
        additional_kwargs={"anthropic_blocks": stored, "thinking_blocks": [REDACTED]},
    )
    messages = _sent([HumanMessage("Hi"), turn, HumanMessage("And?")], "kimi-k3.1-pro")
    assert [b["type"] for b in messages[1]["content"]] == ["text"]
