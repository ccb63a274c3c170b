"""`langchain_kimi.testing.FakeKimiGateway`: the scripted gateway users test their agents on.

Its replies are checked against the published response schemas (`tests/schema_validation.py`,
the project's own validator, not the kit's), on both protocols, as JSON and as event streams.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from langchain_kimi import (
    ChatKimi,
    KimiAuthenticationError,
    KimiInvalidRequestError,
    KimiRateLimitError,
)
from langchain_kimi.testing import FakeKimiGateway, ScriptError
from tools.schema_validation import validate_error, validate_response
from tools.sse_text import parse_sse

# Issue 31: each test also runs on replies without the optional keys that say nothing.
pytestmark = pytest.mark.usefixtures("both_reply_forms")

PROTOCOLS = ["openai", "anthropic"]
MODELS = ["kimi-k3.1-pro", "kimi-k3"]
USAGE = {"input_tokens": 40, "output_tokens": 12, "reasoning_tokens": 7, "cache_read": 10}


def _call(model: ChatKimi, style: str, prompt: Any = "Capital of France?") -> AIMessage:
    if style == "invoke":
        return model.invoke(prompt)
    if style == "ainvoke":
        return asyncio.run(model.ainvoke(prompt))
    if style == "stream":
        chunks = list(model.stream(prompt))
    else:

        async def collect() -> list[AIMessageChunk]:
            return [c async for c in model.astream(prompt)]

        chunks = asyncio.run(collect())
    assert len(chunks) > 2, "a stream arrives in pieces"
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


@pytest.mark.parametrize("style", ["invoke", "ainvoke", "stream", "astream"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("model_name", MODELS)
def test_a_reply_arrives_with_reasoning_and_usage(
    protocol: str, style: str, model_name: str
) -> None:
    gw = FakeKimiGateway().add_reply(text="Paris.", reasoning="The capital of France.", usage=USAGE)
    reply = _call(gw.chat_model(model=model_name, protocol=protocol), style)
    assert reply.content == "Paris."
    assert reply.additional_kwargs["reasoning_content"] == "The capital of France."
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["input_tokens"] == 40
    assert reply.usage_metadata["output_tokens"] == 12
    assert reply.usage_metadata["input_token_details"]["cache_read"] == 10
    assert reply.usage_metadata["output_token_details"]["reasoning"] == 7
    (body,) = gw.requests
    assert body["model"] == model_name
    assert body.get("stream", False) == style.endswith("stream")
    assert gw.paths == ["/v1/messages" if protocol == "anthropic" else "/v1/chat/completions"]
    if protocol == "anthropic":
        (block,) = reply.additional_kwargs["thinking_blocks"]
        assert block["thinking"] == "The capital of France."
        assert len(block["signature"]) > 40


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("model_name", MODELS)
@pytest.mark.parametrize("tools", [False, True])
def test_replies_and_streams_are_what_the_documents_publish(
    protocol: str, model_name: str, tools: bool
) -> None:
    """The raw replies, read through the gateway's transport, against the response schemas;
    the streams' events in the documented order."""
    import httpx

    gw = FakeKimiGateway()
    calls = [{"name": "get_weather", "args": {"city": "Paris"}}] if tools else None
    gw.add_reply(text="" if tools else "Paris.", tool_calls=calls, usage=USAGE)
    gw.add_reply(text="Paris.", tool_calls=calls)
    client = httpx.Client(transport=gw.transport)
    path = "/v1/messages" if protocol == "anthropic" else "/v1/chat/completions"
    body: dict[str, Any] = {"model": model_name, "messages": [{"role": "user", "content": "Hi"}]}
    if protocol == "anthropic":
        body["max_tokens"] = 100
    if tools:  # a call to an undeclared tool is a ScriptError (no service could send it)
        parameters = {"type": "object", "properties": {"city": {"type": "string"}}}
        body["tools"] = [
            {"name": "get_weather", "input_schema": parameters}
            if protocol == "anthropic"
            else {"type": "function", "function": {"name": "get_weather", "parameters": parameters}}
        ]
    headers = {"authorization": "Bearer k"}
    reply = client.post(f"https://gw.test{path}", json=body, headers=headers)
    assert reply.status_code == 200
    validate_response(reply.json(), protocol, model_name)
    streamed = client.post(f"https://gw.test{path}", json={**body, "stream": True}, headers=headers)
    assert streamed.headers["content-type"] == "text/event-stream"
    events = parse_sse([streamed.content])
    if protocol == "anthropic":
        names = [name for name, _ in events]
        assert names[0] == "message_start"
        assert names[-2:] == ["message_delta", "message_stop"]
        assert all(json.loads(data)["type"] == name for name, data in events)
        start = json.loads(events[0][1])["message"]
        validate_response({**start, "stop_reason": "end_turn"}, protocol, model_name)
        assert start["usage"]["input_tokens"] > 0
    else:
        assert events[-1][1] == "[DONE]"
        chunks = [json.loads(data) for _, data in events[:-1]]
        assert chunks[-1]["choices"] == []
        assert chunks[-1]["usage"]["prompt_tokens"] > 0
        assert all(c["object"] == "chat.completion.chunk" for c in chunks)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_error_bodies_are_the_documented_ones(protocol: str) -> None:
    import httpx

    gw = FakeKimiGateway().add_error(429, "slow down", retry_after=2)
    path = "/v1/messages" if protocol == "anthropic" else "/v1/chat/completions"
    reply = httpx.Client(transport=gw.transport).post(
        f"https://gw.test{path}",
        json={
            "model": "kimi-k3.1-pro",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": "x"}],
        },
        headers={"authorization": "Bearer k"},
    )
    assert reply.status_code == 429
    assert reply.headers["retry-after"] == "2"
    validate_error(reply.json(), protocol)


@pytest.mark.parametrize("style", ["invoke", "stream"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_tool_calls_come_back_as_langchain_tool_calls(protocol: str, style: str) -> None:
    gw = FakeKimiGateway().add_reply(
        tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}}]
    )
    model = gw.chat_model(protocol=protocol).bind_tools([get_weather])
    reply = _call(model, style)  # type: ignore[arg-type]
    (call,) = reply.tool_calls
    assert (call["name"], call["args"]) == ("get_weather", {"city": "Paris"})
    assert call["id"]
    assert reply.response_metadata.get("finish_reason") in ("tool_calls", "tool_use")


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return {"Paris": "Paris: 18°C, cloudy", "Oslo": "Oslo: -3°C, snow"}[city]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_agent_loop_with_tools_runs_on_it(protocol: str, stream: bool) -> None:
    gw = FakeKimiGateway()
    gw.add_reply(
        reasoning="I need the weather.",
        tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}}],
    )
    gw.add_reply(
        reasoning="Now Oslo.", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}}]
    )
    gw.add_reply(text="Paris is 18°C, Oslo -3°C.", reasoning="I have both.")
    agent = create_agent(gw.chat_model(protocol=protocol, streaming=stream), tools=[get_weather])
    result = agent.invoke({"messages": [HumanMessage("Weather in Paris and Oslo?")]})
    assert result["messages"][-1].content == "Paris is 18°C, Oslo -3°C."
    assert gw.refusals == []
    assert gw.remaining == 0
    assert len(gw.requests) == 3
    # The third request replays both earlier turns: accepted, so reasoning, signatures and tool
    # calls came back unchanged and every tool call was answered.
    assert [m.content for m in result["messages"] if isinstance(m, ToolMessage)] == [
        "Paris: 18°C, cloudy",
        "Oslo: -3°C, snow",
    ]


def _history(protocol: str) -> tuple[FakeKimiGateway, list[Any]]:
    gw = FakeKimiGateway()
    gw.add_reply(
        reasoning="I call the tool.",
        tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}}],
    )
    gw.add_reply(text="18°C.")
    model = gw.chat_model(protocol=protocol).bind_tools([get_weather])
    first = model.invoke("Weather in Paris?")
    answer = ToolMessage("Paris: 18°C, cloudy", tool_call_id=first.tool_calls[0]["id"])
    return gw, [HumanMessage("Weather in Paris?"), first, answer]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_unchanged_history_is_accepted(protocol: str) -> None:
    gw, history = _history(protocol)
    assert (
        gw.chat_model(protocol=protocol).bind_tools([get_weather]).invoke(history).content
        == "18°C."
    )
    assert gw.refusals == []


def test_a_changed_signature_is_refused_as_the_service_would() -> None:
    gw, history = _history("anthropic")
    turn = history[1]
    blocks = [dict(b) for b in turn.additional_kwargs["anthropic_blocks"]]
    blocks[0]["signature"] = blocks[0]["signature"][:-4] + "AAAA"
    history[1] = turn.model_copy(
        update={
            "additional_kwargs": {
                **turn.additional_kwargs,
                "anthropic_blocks": blocks,
                "thinking_blocks": [blocks[0]],
            }
        }
    )
    with pytest.raises(
        KimiInvalidRequestError, match="Invalid `signature` in `thinking` block"
    ) as info:
        gw.chat_model(protocol="anthropic").bind_tools([get_weather]).invoke(history)
    assert info.value.status_code == 400
    assert info.value.request_id == "req_fake_0002"
    assert gw.remaining == 1, "a refused request uses no step"


def test_changed_tool_call_arguments_are_refused_on_chat_completions() -> None:
    gw, history = _history("openai")
    turn = history[1]
    raw = json.loads(json.dumps(turn.additional_kwargs["tool_calls"]))
    raw[0]["function"]["arguments"] = '{"city": "Lyon"}'
    history[1] = turn.model_copy(
        update={"additional_kwargs": {**turn.additional_kwargs, "tool_calls": raw}}
    )
    with pytest.raises(
        KimiInvalidRequestError, match="tool_calls of an assistant turn must be sent back unchanged"
    ):
        gw.chat_model(protocol="openai").bind_tools([get_weather]).invoke(history)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_tool_call_left_unanswered_is_refused(protocol: str) -> None:
    gw, history = _history(protocol)
    with pytest.raises(KimiInvalidRequestError, match=r"without tool_result|not answered") as info:
        gw.chat_model(protocol=protocol).bind_tools([get_weather]).invoke(
            [*history[:2], HumanMessage("Go on")]
        )
    assert info.value.status_code == 400
    assert len(gw.refusals) == 1


def test_a_body_the_request_schema_forbids_is_refused() -> None:
    gw = FakeKimiGateway().add_reply(text="never sent")
    model = gw.chat_model(protocol="openai", extra_body={"prompt_cache_options": {"mode": "never"}})
    with pytest.raises(KimiInvalidRequestError, match="prompt_cache_options"):
        model.invoke("Hi")
    assert gw.remaining == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_errors_come_out_typed_with_the_request_id(protocol: str) -> None:
    gw = FakeKimiGateway().add_error(429, "Too many requests", retry_after=0.01).add_error(401)
    model = gw.chat_model(protocol=protocol)
    with pytest.raises(KimiRateLimitError) as info:
        model.invoke("Hi")
    assert (info.value.status_code, info.value.request_id) == (429, "req_fake_0001")
    assert "Too many requests" in info.value.message
    with pytest.raises(KimiAuthenticationError):
        list(model.stream("Hi"))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_retried_error_is_followed_by_the_next_step(protocol: str) -> None:
    gw = FakeKimiGateway().add_error(500, retry_after=0.01).add_reply(text="Recovered.")
    model = gw.chat_model(protocol=protocol, max_retries=1)
    assert model.invoke("Hi").content == "Recovered."
    assert len(gw.requests) == 2
    assert gw.requests[0] == gw.requests[1]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_web_search_rounds(protocol: str, stream: bool) -> None:
    gw = FakeKimiGateway()
    gw.add_web_search(
        "latest python release", results=[{"title": "Python 3.14", "url": "https://python.org"}]
    )
    gw.add_reply(text="Python 3.14.", reasoning="The result says 3.14.")
    gw.add_reply(text="3.13.")
    model = gw.chat_model(protocol=protocol, streaming=stream).bind_tools(["web_search"])
    reply = model.invoke("Latest Python?")
    assert reply.content == "Python 3.14." or reply.text == "Python 3.14."
    if protocol == "openai":  # the documented `$web_search` round trip
        _, second = gw.requests
        call = second["messages"][1]["tool_calls"][0]
        assert call["type"] == "builtin_function"
        assert call["function"]["name"] == "$web_search"
        assert second["messages"][2] == {
            "role": "tool",
            "tool_call_id": call["id"],
            "content": call["function"]["arguments"],
        }
    else:  # server blocks inside the one reply
        assert len(gw.requests) == 1
        kinds = [b["type"] for b in reply.additional_kwargs["anthropic_blocks"]]
        assert kinds == ["thinking", "server_tool_use", "web_search_tool_result", "text"]
        assert reply.usage_metadata is not None
    follow_up = model.invoke(["Latest Python?", reply, "And the one before?"])
    assert follow_up.content == "3.13." or follow_up.text == "3.13."
    assert gw.refusals == []


def test_a_web_search_needs_the_tool_declared() -> None:
    gw = FakeKimiGateway().add_web_search("x").add_reply(text="y")
    with pytest.raises(ScriptError, match="declares no web search tool"):
        gw.chat_model().invoke("Hi")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_request_beyond_the_script_fails_the_test_saying_so(protocol: str) -> None:
    gw = FakeKimiGateway()
    with pytest.raises(ScriptError, match=r"request #1 .* add one with gw.add_reply"):
        gw.chat_model(protocol=protocol).invoke("Hi")
    with pytest.raises(ScriptError):
        list(gw.chat_model(protocol=protocol).stream("Hi"))


def test_bad_script_input_is_refused_at_once() -> None:
    gw = FakeKimiGateway()
    with pytest.raises(ValueError, match="'name'"):
        gw.add_reply(tool_calls=[{"args": {}}])
    with pytest.raises(ValueError, match="4xx or 5xx"):
        gw.add_error(200)
    with pytest.raises(ValueError, match="unknown key"):
        gw.add_reply(usage={"input": 3})
    assert gw.remaining == 0


class Capital(BaseModel):
    city: str


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_structured_output_is_scripted_as_its_json_or_its_tool_call(
    protocol: str, method: str
) -> None:
    gw = FakeKimiGateway()
    if method == "json_schema":
        gw.add_reply(text='{"city": "Paris"}')
    else:
        gw.add_reply(tool_calls=[{"name": "Capital", "args": {"city": "Paris"}}])
    model = gw.chat_model(protocol=protocol).with_structured_output(Capital, method=method)  # type: ignore[arg-type]
    assert model.invoke("Capital of France?") == Capital(city="Paris")
    assert gw.refusals == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_concurrent_calls_each_take_one_step(protocol: str) -> None:
    """`batch` sends from threads in any order: each step bound to its prompt answers it."""
    gw = FakeKimiGateway()
    for prompt, answer in zip("abcd", ("one", "two", "three", "four"), strict=True):
        gw.add_reply(text=answer, when=prompt)
    replies = gw.chat_model(protocol=protocol).batch(["a", "b", "c", "d"])
    assert [r.content for r in replies] == ["one", "two", "three", "four"]
    assert len(gw.requests) == 4
    assert gw.remaining == 0
