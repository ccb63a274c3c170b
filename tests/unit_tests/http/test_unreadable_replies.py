"""Replies of the wrong shape and errors that echo the key, at ChatKimi's public boundary.

- A 200 reply (or stream event) the parser cannot read raises the typed error naming the field,
  with what arrived (`body` for a reply, `.partial` for a stream) — never a bare KeyError,
  TypeError, AttributeError, ValueError or pydantic ValidationError.
- Every error path removes the API key from what the error carries, whatever echoed it.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from langchain_kimi import ChatKimi, KimiAPIError, KimiError, KimiStreamError
from langchain_kimi.testing import FakeKimiGateway
from langchain_kimi.testing.raw_steps import RawAnswer as Reply

KEY = "sk-echoed-" + "0123456789abcdef"
SSE = {"content-type": "text/event-stream"}

CHAT_REPLY: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "kimi-k3",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Hello there"},
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
}
MESSAGES_REPLY: dict[str, Any] = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "kimi-k3",
    "content": [{"type": "text", "text": "Hello there"}], "stop_reason": "end_turn",
    "usage": {"input_tokens": 3, "output_tokens": 2},
}  # fmt: skip


def _model(protocol: str, reply: Reply) -> ChatKimi:
    """A model on a fake gateway answering `reply` (a raw step) to every request."""
    return FakeKimiGateway().add_raw(reply, repeat=True).chat_model(protocol=protocol, api_key=KEY)


def _json(body: Any, status: int = 200) -> Reply:
    return httpx.Response(status, json=body)


def _sse(raw: bytes) -> Reply:
    return httpx.Response(200, headers=SSE, content=raw)


def _chat_reply(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    body = copy.deepcopy(CHAT_REPLY)
    change(body)
    return body


def _message(body: dict[str, Any]) -> dict[str, Any]:
    return body["choices"][0]["message"]  # type: ignore[no-any-return]


def _set(path: Callable[[dict[str, Any]], dict[str, Any]], key: str, value: Any) -> Any:
    return lambda body: path(body).__setitem__(key, value)


CHAT_INVOKE = {
    "choices as an object": (_set(lambda b: b, "choices", {"0": {}}), "choices"),
    "message as a string": (
        _set(lambda b: b["choices"][0], "message", "hi"),
        "choices[0].message",
    ),
    "tool_calls: 7": (_set(_message, "tool_calls", 7), "choices[0].message.tool_calls"),
    "content: 7": (_set(_message, "content", 7), "choices[0].message.content"),
    "usage: 'x'": (_set(lambda b: b, "usage", "x"), "usage"),
    "prompt_tokens: 'abc'": (
        _set(lambda b: b["usage"], "prompt_tokens", "abc"),
        "usage.prompt_tokens",
    ),
    "a string function": (
        _set(_message, "tool_calls", [{"id": "c1", "type": "function", "function": "f"}]),
        "choices[0].message.tool_calls[0].function",
    ),
    "a tool name 7": (
        _set(
            _message,
            "tool_calls",
            [{"id": "c1", "type": "function", "function": {"name": 7, "arguments": "{}"}}],
        ),
        "choices[0].message.tool_calls[0].function.name",
    ),
}

MESSAGES_INVOKE = {
    "content: 7": ({"content": 7}, "content"),
    "a tool name 7": (
        {"content": [{"type": "tool_use", "id": "t1", "name": 7, "input": {}}]},
        "content[0].name",
    ),
}


async def _invoke(model: ChatKimi, mode: str) -> Any:
    return model.invoke("hi") if mode == "sync" else await model.ainvoke("hi")


async def _stream(model: ChatKimi, mode: str) -> list[Any]:
    if mode == "sync":
        return list(model.stream("hi"))
    return [chunk async for chunk in model.astream("hi")]


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("case", CHAT_INVOKE)
async def test_an_unreadable_chat_reply_names_the_field(case: str, mode: str) -> None:
    change, field = CHAT_INVOKE[case]
    body = _chat_reply(change)
    with pytest.raises(KimiAPIError) as info:
        await _invoke(_model("openai", _json(body)), mode)
    assert f"{field}: expected" in info.value.message
    assert info.value.body == json.dumps(body, ensure_ascii=False)  # what arrived


@pytest.mark.parametrize("case", MESSAGES_INVOKE)
async def test_an_unreadable_messages_reply_names_the_field(case: str, mode: str) -> None:
    change, field = MESSAGES_INVOKE[case]
    body = {**MESSAGES_REPLY, **change}
    with pytest.raises(KimiAPIError) as info:
        await _invoke(_model("anthropic", _json(body)), mode)
    assert f"{field}: expected" in info.value.message
    assert info.value.body == json.dumps(body, ensure_ascii=False)


async def test_messages_content_as_a_string_is_the_text(mode: str) -> None:
    body = {**MESSAGES_REPLY, "content": "Hello there"}
    reply = await _invoke(_model("anthropic", _json(body)), mode)
    assert reply.content == "Hello there"


# -- streams -------------------------------------------------------------------------------------

_CHUNK_HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "k"}


def _chat_stream(bad: dict[str, Any]) -> bytes:
    good = {**_CHUNK_HEAD, "choices": [{"index": 0, "delta": {"content": "Hel"}}]}
    events = [good, {**_CHUNK_HEAD, **bad}]
    body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
    return body + b"data: [DONE]\n\n"


def _delta(delta: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta}]}


def _call(function: Any) -> dict[str, Any]:
    return _delta(
        {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": function}]}
    )


CHAT_STREAM = {
    "choices as an object": ({"choices": {"0": {}}}, "choices"),
    "a string delta": (_delta("hi"), "choices[0].delta"),
    "tool_calls: 7": (_delta({"tool_calls": 7}), "choices[0].delta.tool_calls"),
    "content: 7": (_delta({"content": 7}), "choices[0].delta.content"),
    "usage: 'x'": ({"choices": [], "usage": "x"}, "usage"),
    "prompt_tokens: 'abc'": (
        {"choices": [], "usage": {"prompt_tokens": "abc"}},
        "usage.prompt_tokens",
    ),
    "a string function": (_call("f"), "choices[0].delta.tool_calls[0].function"),
    "a tool name 7": (
        _call({"name": 7, "arguments": ""}),
        "choices[0].delta.tool_calls[0].function.name",
    ),
}


def _messages_stream(bad: dict[str, Any]) -> bytes:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "k", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}},
        {"type": "content_block_stop", "index": 0},
        bad,
        {"type": "message_stop"},
    ]
    return b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + json.dumps(e).encode() + b"\n\n"
        for e in events
    )


MESSAGES_STREAM = {
    "content_block_start with text: 7": (
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": 7}},
        "content_block.text",
    ),
    "a tool name 7": (
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "t1", "name": 7, "input": {}},
        },
        "content_block.name",
    ),
}


STREAM_CASES = {
    **{
        f"openai, {name}": ("openai", _chat_stream(bad), field)
        for name, (bad, field) in CHAT_STREAM.items()
    },
    **{
        f"anthropic, {name}": ("anthropic", _messages_stream(bad), field)
        for name, (bad, field) in MESSAGES_STREAM.items()
    },
}


@pytest.mark.parametrize("case", STREAM_CASES)
async def test_an_unreadable_stream_event_names_the_field(case: str, mode: str) -> None:
    protocol, raw, field = STREAM_CASES[case]
    with pytest.raises(KimiStreamError) as info:
        await _stream(_model(protocol, _sse(raw)), mode)
    assert f"{field}: expected" in info.value.message
    assert info.value.partial is not None
    assert info.value.partial.content == "Hel"  # what arrived before


# -- the key never leaves in an error ------------------------------------------------------------


ECHO = f"the key {KEY} is not valid"
KEY_PATHS: dict[str, tuple[str, str, Reply]] = {
    "HTTP error, Messages shape": (
        "anthropic",
        "invoke",
        _json({"type": "error", "error": {"type": KEY, "message": ECHO}, "request_id": KEY}, 401),
    ),
    "HTTP error, Chat shape": (
        "openai",
        "invoke",
        _json({"error": {"message": ECHO, "type": KEY, "code": KEY}}, 500),
    ),
    "HTTP error, not JSON": ("openai", "stream", httpx.Response(502, text=ECHO)),
    "200 with an error body": (
        "openai",
        "invoke",
        _json({"error": {"message": ECHO, "type": KEY}}),
    ),
    "Messages event: error": (
        "anthropic",
        "stream",
        _sse(
            b'event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}\n\n'
            b"event: error\ndata: "
            + json.dumps({"type": "error", "error": {"type": KEY, "message": ECHO}}).encode()
            + b"\n\n"
        ),
    ),
    "Chat in-stream error object": (
        "openai",
        "stream",
        _sse(
            b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
            b"data: " + json.dumps({"error": {"message": ECHO, "type": KEY}}).encode() + b"\n\n"
        ),
    ),
    "malformed stream event": ("openai", "stream", _sse(b"data: {" + ECHO.encode() + b"\n\n")),
    "unreadable reply": (
        "openai",
        "invoke",
        _json({**CHAT_REPLY, "choices": [{"message": {"content": 7, "note": ECHO}}]}),
    ),
    "unreadable stream event": (
        "openai",
        "stream",
        _sse(b"data: " + json.dumps(_delta({"content": 7, "note": ECHO})).encode() + b"\n\n"),
    ),
    "transport error": ("openai", "invoke", httpx.ConnectError(ECHO)),
    "transport error mid-stream": ("anthropic", "stream", httpx.ReadError(ECHO)),
}


@pytest.mark.parametrize("case", KEY_PATHS)
async def test_no_error_carries_the_key(case: str, mode: str) -> None:
    protocol, how, reply = KEY_PATHS[case]
    model = _model(protocol, reply)
    call = _invoke if how == "invoke" else _stream
    with pytest.raises(KimiError) as info:
        await call(model, mode)
    error = info.value
    texts = [str(error), repr(error), error.message, error.body, error.error_type, error.request_id]
    assert not any(KEY in (text or "") for text in texts), texts
    assert KEY.encode() not in pickle.dumps(error)
    # Nothing chained either: the exception it came from (a JSONDecodeError keeps the whole
    # document, an httpx error its request) is pickled along by tblib, which Dask installs.
    assert error.__cause__ is None
    assert error.__context__ is None
    assert "***" in str(error) + (error.body or "") + (error.error_type or "")
