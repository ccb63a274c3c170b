"""Issue 27 item 5 (and issue 31's gaps in rules.py): thinking signatures and replayed turns.

000 / 001 `ThinkingBlock.thinking`: "Devuélvelo sin cambios junto con la firma en conversaciones
de varios turnos" (send it back unchanged with its signature in multi-turn conversations); 004
`reasoning_content` / `tool_calls`: "Devuélvelo(as) sin cambios" (unchanged). The fake cannot
verify a signature the service made: it accepts a well-formed one and says so in `gw.unverified`.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from langchain_kimi.testing import FakeKimiGateway
from tests.unit_tests.testing.raw import error_message, post, user

TOOLS_MESSAGES = [{"name": "get_weather", "input_schema": {"type": "object"}}]
TOOLS_CHAT = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
FOREIGN_SIGNATURE = base64.b64encode(b"\x12\x08service-signed" + bytes(range(64))).decode()
WEATHER = [{"name": "get_weather", "args": {"city": "Paris"}}]


def _messages_turn(gw: FakeKimiGateway) -> list[dict[str, Any]]:
    """An issued Messages tool-use turn (thinking + tool_use)."""
    gw.add_reply(reasoning="I need the weather.", tool_calls=WEATHER)
    body = {**user("Weather?", protocol="anthropic"), "tools": TOOLS_MESSAGES}
    content: list[dict[str, Any]] = post(gw, "anthropic", body).json()["content"]
    return content


def _messages_history(content: list[dict[str, Any]]) -> dict[str, Any]:
    use = next(b for b in content if b["type"] == "tool_use")
    result = {"type": "tool_result", "tool_use_id": use["id"], "content": "18°C"}
    return {
        **user("Weather?", protocol="anthropic"),
        "tools": TOOLS_MESSAGES,
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": content},
            {"role": "user", "content": [result]},
        ],
    }


def test_an_unchanged_messages_turn_is_accepted() -> None:
    gw = FakeKimiGateway()
    content = _messages_turn(gw)
    gw.add_reply(text="18°C.")
    assert post(gw, "anthropic", _messages_history(content)).status_code == 200
    assert gw.unverified == []


def test_a_stripped_signature_of_its_own_is_refused() -> None:
    gw = FakeKimiGateway()
    content = _messages_turn(gw)
    stripped = [{k: v for k, v in b.items() if k != "signature"} for b in content]
    response = post(gw, "anthropic", _messages_history(stripped))
    assert response.status_code == 400
    assert "signature` missing" in error_message(response)


def test_an_altered_signature_of_its_own_is_refused() -> None:
    gw = FakeKimiGateway()
    content = _messages_turn(gw)
    content[0] = {**content[0], "thinking": content[0]["thinking"] + " (edited)"}
    response = post(gw, "anthropic", _messages_history(content))
    assert response.status_code == 400
    assert "Invalid `signature`" in error_message(response)


def test_a_dropped_thinking_block_of_its_own_is_refused_as_on_chat() -> None:
    """ChatKimi then sends its unsigned placeholder: a bug in the app, refused on both sides."""
    gw = FakeKimiGateway()
    content = _messages_turn(gw)
    placeholder = {"type": "thinking", "thinking": "(reasoning not available)"}
    for replaced in ([placeholder, content[1]], [content[1]]):
        response = post(gw, "anthropic", _messages_history(replaced))
        assert response.status_code == 400
        assert "dropped or replaced" in error_message(response)


def test_an_edited_tool_use_of_its_own_is_refused() -> None:
    gw = FakeKimiGateway()
    content = _messages_turn(gw)
    content[1] = {**content[1], "input": {"city": "Lyon"}}
    response = post(gw, "anthropic", _messages_history(content))
    assert response.status_code == 400
    assert "tool_use block of an assistant turn must be sent back unchanged" in error_message(
        response
    )


def test_a_well_formed_foreign_signature_is_accepted_and_recorded() -> None:
    """A history recorded from the service (kimi_cassette): the fake cannot verify it."""
    gw = FakeKimiGateway().add_reply(text="Again: Paris.")
    thinking = {"type": "thinking", "thinking": "Recalled.", "signature": FOREIGN_SIGNATURE}
    body = {
        **user("Again?", protocol="anthropic"),
        "messages": [
            {"role": "user", "content": "Capital of France?"},
            {"role": "assistant", "content": [thinking, {"type": "text", "text": "Paris."}]},
            {"role": "user", "content": "Again?"},
        ],
    }
    assert post(gw, "anthropic", body).status_code == 200
    assert gw.unverified == ["request #1 messages.1.content.0"]


@pytest.mark.parametrize("signature", ["", "not base64!", "@@@"])
def test_a_malformed_signature_is_refused(signature: str) -> None:
    gw = FakeKimiGateway().add_reply(text="never served")
    thinking = {"type": "thinking", "thinking": "Recalled.", "signature": signature}
    body = {
        **user("Again?", protocol="anthropic"),
        "messages": [
            {"role": "user", "content": "Capital?"},
            {"role": "assistant", "content": [thinking, {"type": "text", "text": "Paris."}]},
            {"role": "user", "content": "Again?"},
        ],
    }
    assert post(gw, "anthropic", body).status_code == 400


def _chat_turn(gw: FakeKimiGateway) -> dict[str, Any]:
    gw.add_reply(reasoning="I need the weather.", tool_calls=WEATHER)
    body = {**user("Weather?"), "tools": TOOLS_CHAT}
    message: dict[str, Any] = post(gw, "openai", body).json()["choices"][0]["message"]
    return message


def _chat_history(assistant: dict[str, Any]) -> dict[str, Any]:
    answers = [
        {"role": "tool", "tool_call_id": c["id"], "content": "18°C"}
        for c in assistant["tool_calls"]
    ]
    return {
        **user("Weather?"),
        "tools": TOOLS_CHAT,
        "messages": [{"role": "user", "content": "Weather?"}, assistant, *answers],
    }


def test_edited_reasoning_content_of_its_own_is_refused_on_chat() -> None:
    gw = FakeKimiGateway()
    assistant = _chat_turn(gw)
    edited = {**assistant, "reasoning_content": "Something else."}
    response = post(gw, "openai", _chat_history(edited))
    assert response.status_code == 400
    assert "reasoning_content of an assistant turn must be sent back unchanged" in (
        error_message(response)
    )


def test_dropped_reasoning_content_is_refused_on_chat() -> None:
    gw = FakeKimiGateway()
    assistant = _chat_turn(gw)
    dropped = {k: v for k, v in assistant.items() if k != "reasoning_content"}
    response = post(gw, "openai", _chat_history(dropped))
    assert response.status_code == 400
    assert "reasoning_content is missing" in error_message(response)


def test_every_problem_of_one_request_is_reported() -> None:
    """Two broken rules in one request: both named (a later check must not drop an earlier)."""
    gw = FakeKimiGateway()
    assistant = _chat_turn(gw)
    edited = {**assistant, "reasoning_content": "Something else."}
    body = _chat_history(edited)
    body["messages"].append({"role": "tool", "tool_call_id": "call_nobody", "content": "x"})
    message = error_message(post(gw, "openai", body))
    assert "must be sent back unchanged" in message
    assert "'call_nobody' answers no tool call" in message
