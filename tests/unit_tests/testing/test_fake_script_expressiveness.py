"""Issue 27 item 8 / Build 3: what the script can say the service does, each reply validated
against the published response schema (`documents.response_problems`, and the project's own
validator in tools/schema_validation.py).

000 `stop_reason`: end_turn, max_tokens, tool_use, refusal, null; 004 `finish_reason`: stop,
length, tool_calls. 000 `cache_creation`: "Las dos categorías de escritura de
cache_creation_input_tokens, facturadas según su TTL real" (the 5m / 1h split);
`web_search_tool_result` content: "Objeto de error de búsqueda con
type=web_search_tool_result_error" (a search error object).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import tool

from langchain_kimi.testing import FakeKimiGateway, ScriptError
from tests.unit_tests.testing.raw import post, user
from tools.schema_validation import validate_response

# Issue 31: each test also runs on replies without the optional keys that say nothing.
pytestmark = pytest.mark.usefixtures("both_reply_forms")

PROTOCOLS = ["openai", "anthropic"]
WEB_SEARCH_MESSAGES = {"type": "web_search_20250305", "name": "web_search"}


@tool
def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"{city}: 18°C"


def _valid(reply: dict[str, Any], protocol: str, model: str = "kimi-k3.1-pro") -> dict[str, Any]:
    validate_response(reply, protocol, model)
    return reply


@pytest.mark.parametrize("stream", [False, True])
def test_raw_arguments_that_are_not_json_on_chat(stream: bool) -> None:
    gw = FakeKimiGateway().add_reply(
        tool_calls=[{"name": "get_weather", "arguments": "{city: Paris}"}]
    )
    model = gw.chat_model(streaming=stream).bind_tools([get_weather])
    reply = model.invoke("Weather?")
    assert reply.tool_calls == []
    (invalid,) = reply.invalid_tool_calls
    assert invalid["name"] == "get_weather"
    assert invalid["args"] == "{city: Paris}"


def test_raw_arguments_on_a_messages_stream_are_its_partial_json() -> None:
    gw = FakeKimiGateway().add_reply(
        tool_calls=[{"name": "get_weather", "arguments": "{city: Paris}"}]
    )
    model = gw.chat_model(protocol="anthropic", streaming=True).bind_tools([get_weather])
    reply = model.invoke("Weather?")
    assert reply.tool_calls == []
    assert len(reply.invalid_tool_calls) == 1


def test_raw_arguments_that_are_an_object_are_served_as_such() -> None:
    gw = FakeKimiGateway().add_reply(
        tool_calls=[{"name": "get_weather", "arguments": '{"city":"Paris"}'}]
    )
    model = gw.chat_model(protocol="anthropic").bind_tools([get_weather])
    assert model.invoke("Weather?").tool_calls[0]["args"] == {"city": "Paris"}


def test_malformed_arguments_cannot_be_a_messages_json_reply() -> None:
    gw = FakeKimiGateway().add_reply(tool_calls=[{"name": "get_weather", "arguments": "{oops"}])
    model = gw.chat_model(protocol="anthropic").bind_tools([get_weather])
    with pytest.raises(ScriptError, match=r"ToolUseBlock\.input"):
        model.invoke("Weather?")


def test_args_and_raw_arguments_together_are_refused() -> None:
    with pytest.raises(ValueError, match="raw string"):
        FakeKimiGateway().add_reply(tool_calls=[{"name": "f", "args": {}, "arguments": "{}"}])


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_reply_longer_than_max_tokens_is_cut(protocol: str, stream: bool) -> None:
    gw = FakeKimiGateway().add_reply(text="word " * 100, reasoning="short", tool_calls=None)
    reply = gw.chat_model(protocol=protocol, max_tokens=10, streaming=stream).invoke("Talk")
    assert len(reply.content) <= 40 - len("short")
    assert reply.content == ("word " * 100)[: 40 - len("short")]
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["output_tokens"] == 10
    expected = "max_tokens" if protocol == "anthropic" else "length"
    raw = "stop_reason" if protocol == "anthropic" else "finish_reason"
    assert reply.response_metadata[raw] == expected


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_cut_reply_validates_and_drops_its_tool_calls(protocol: str) -> None:
    gw = FakeKimiGateway().add_reply(reasoning="r" * 200, tool_calls=[{"name": "f", "args": {}}])
    body = {**user("Hi", protocol=protocol), "max_tokens": 8}
    body["tools"] = (
        [{"name": "f", "input_schema": {"type": "object"}}]
        if protocol == "anthropic"
        else [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    )
    reply = _valid(post(gw, protocol, body).json(), protocol)
    if protocol == "anthropic":
        assert reply["stop_reason"] == "max_tokens"
        assert [b["type"] for b in reply["content"]] == ["thinking"]
        assert reply["usage"]["output_tokens"] == 8
    else:
        assert reply["choices"][0]["finish_reason"] == "length"
        assert "tool_calls" not in reply["choices"][0]["message"]
        assert reply["usage"]["completion_tokens"] == 8


def test_max_completion_tokens_is_the_chat_budget() -> None:
    gw = FakeKimiGateway().add_reply(text="x" * 100)
    reply = post(gw, "openai", {**user("Hi"), "max_completion_tokens": 30}).json()
    assert reply["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize("stream", [False, True])
def test_a_refusal_on_k3_1_messages(stream: bool) -> None:
    gw = FakeKimiGateway().add_reply(text="I can't help with that.", refusal=True)
    reply = gw.chat_model(protocol="anthropic", streaming=stream).invoke("Something bad")
    assert reply.response_metadata["stop_reason"] == "refusal"
    gw.add_reply(text="No.", refusal=True)
    _valid(post(gw, "anthropic", user("Bad", protocol="anthropic")).json(), "anthropic")


@pytest.mark.parametrize(
    ("protocol", "model"), [("openai", "kimi-k3.1-pro"), ("anthropic", "kimi-k3")]
)
def test_a_refusal_where_the_document_has_none_is_a_script_error(protocol: str, model: str) -> None:
    gw = FakeKimiGateway().add_reply(text="No.", refusal=True)
    with pytest.raises(ScriptError, match="refusal"):
        gw.chat_model(protocol=protocol, model=model).invoke("Bad")


def test_the_cache_write_split_by_ttl() -> None:
    usage = {"input_tokens": 1000, "output_tokens": 10, "cache_write": 600, "cache_write_1h": 400}
    gw = FakeKimiGateway().add_reply(text="ok", usage=usage)
    reply = _valid(post(gw, "anthropic", user("Hi", protocol="anthropic")).json(), "anthropic")
    assert reply["usage"]["cache_creation"] == {
        "ephemeral_5m_input_tokens": 200,
        "ephemeral_1h_input_tokens": 400,
    }
    assert reply["usage"]["cache_creation_input_tokens"] == 600
    gw.add_reply(text="ok", usage=usage)
    message = gw.chat_model(protocol="anthropic").invoke("Hi")
    assert message.usage_metadata is not None
    details = message.usage_metadata["input_token_details"]
    assert details["ephemeral_1h_input_tokens"] == 400
    assert details["ephemeral_5m_input_tokens"] == 200
    assert message.usage_metadata["input_tokens"] == 1000


def test_a_1h_split_on_kimi_k3_is_a_script_error() -> None:
    usage = {"input_tokens": 100, "output_tokens": 10, "cache_write": 60, "cache_write_1h": 40}
    gw = FakeKimiGateway().add_reply(text="ok", usage=usage)
    with pytest.raises(ScriptError, match="cache TTL"):
        post(gw, "anthropic", user("Hi", model="kimi-k3", protocol="anthropic"))


def test_the_1h_part_cannot_exceed_the_writes() -> None:
    with pytest.raises(ValueError, match="cache_write_1h"):
        FakeKimiGateway().add_reply(
            usage={"input_tokens": 10, "output_tokens": 1, "cache_write_1h": 1}
        )


def test_a_web_search_error_object_on_messages() -> None:
    gw = (
        FakeKimiGateway()
        .add_web_search("kimi", error_code="max_uses_exceeded")
        .add_reply(text="No results.")
    )
    body = {**user("Search", protocol="anthropic"), "tools": [WEB_SEARCH_MESSAGES]}
    reply = _valid(post(gw, "anthropic", body).json(), "anthropic")
    result = next(b for b in reply["content"] if b["type"] == "web_search_tool_result")
    assert result["content"] == {
        "type": "web_search_tool_result_error",
        "error_code": "max_uses_exceeded",
    }
    gw.add_web_search("kimi", error_code="unavailable").add_reply(text="No results.")
    message = gw.chat_model(protocol="anthropic").bind_tools(["web_search"]).invoke("Search")
    assert message.content == "No results." or "No results." in str(message.content)


def test_a_web_search_error_on_chat_is_a_script_error() -> None:
    gw = FakeKimiGateway().add_web_search("kimi", error_code="unavailable").add_reply(text="x")
    with pytest.raises(ScriptError, match="no search error object"):
        gw.chat_model().bind_tools(["web_search"]).invoke("Search")


@pytest.mark.parametrize("stream", [False, True])
def test_two_web_search_calls_in_one_chat_round(stream: bool) -> None:
    gw = FakeKimiGateway()
    gw.add_web_search("python release").add_web_search("python changelog", same_round=True)
    gw.add_reply(text="Python 3.14.")
    reply = gw.chat_model(streaming=stream).bind_tools(["web_search"]).invoke("Latest Python?")
    assert reply.content == "Python 3.14."
    assert len(gw.requests) == 2
    roles = [m["role"] for m in gw.requests[1]["messages"]]
    assert roles == ["user", "assistant", "tool", "tool"]
    calls = gw.requests[1]["messages"][1]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["$web_search", "$web_search"]
    answered = [m["content"] for m in gw.requests[1]["messages"][2:]]
    assert answered == [
        c["function"]["arguments"] for c in calls
    ]  # 004: reenvía function.arguments


def test_a_search_round_validates() -> None:
    gw = FakeKimiGateway().add_web_search("a").add_web_search("b", same_round=True)
    body = {**user("Search"), "tools": [{"type": "web_search"}]}
    reply = _valid(post(gw, "openai", body).json(), "openai")
    assert len(reply["choices"][0]["message"]["tool_calls"]) == 2
