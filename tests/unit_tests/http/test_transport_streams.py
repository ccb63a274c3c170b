"""SSE event streams through httpx.MockTransport: corpus bodies, opening retries, faults."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from langchain_kimi._errors import (
    KimiAPIError,
    KimiError,
    KimiInvalidRequestError,
    KimiRateLimitError,
    KimiStreamError,
    KimiTimeoutError,
)
from langchain_kimi._http.transport import Transport
from tests.support import fake_transport
from tests.support.fake_transport import Script, scripted_transport
from tools.paths import CORPUS

KEY = "sk-test-SECRET-5d0c"
PRIMARY = "https://direct.evolink.ai"
FALLBACK = "https://api.evolink.ai"
PATH = "/v1/messages"
# A body the gateway accepts (the fake judges it before its script answers).
BODY: dict[str, Any] = {**fake_transport.BODY, "stream": True}
SSE = {"content-type": "text/event-stream; charset=utf-8"}
FIRST = b'event: message_start\ndata: {"type":"message_start"}\n\n'


class Faulty(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body that delivers `chunks`, then fails the way a dropped connection does."""

    def __init__(self, chunks: list[bytes], exc: Exception) -> None:
        self.chunks = chunks
        self.exc = exc

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks
        raise self.exc

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
        raise self.exc


def make(
    script: Script, *, fallback: str | None = FALLBACK, **config: Any
) -> tuple[Transport, list[float]]:
    return scripted_transport(script, base_url=PRIMARY, key=KEY, fallback=fallback, **config)


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def collect(transport: Transport, mode: str) -> tuple[str, str | None, list[tuple[str, str]]]:
    if mode == "sync":
        with transport.stream_events(PATH, BODY) as events:
            return events.base_url, events.request_id, list(events)
    async with transport.astream_events(PATH, BODY) as aevents:
        return aevents.base_url, aevents.request_id, [e async for e in aevents]


async def drain(transport: Transport, mode: str, seen: list[tuple[str, str]]) -> None:
    if mode == "sync":
        with transport.stream_events(PATH, BODY) as events:
            for event in events:
                seen.append(event)
    else:
        async with transport.astream_events(PATH, BODY) as aevents:
            async for event in aevents:
                seen.append(event)


async def collect_until_error(
    transport: Transport, mode: str
) -> tuple[list[tuple[str, str]], KimiError]:
    seen: list[tuple[str, str]] = []
    with pytest.raises(KimiError) as info:
        await drain(transport, mode, seen)
    return seen, info.value


def corpus_body(name: str) -> str:
    record = json.loads((CORPUS / name).read_text())
    assert record["response"]["content_type"].startswith("text/event-stream")
    return str(record["response"]["body"])


ANTHROPIC_STREAM = "anthropic-messages/pydantic-ai.test_anthropic_model_thinking_part_stream.0.json"
CHAT_STREAM = "chat-completions/pydantic-ai.test_deepseek_model_thinking_stream.0.json"


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
async def test_anthropic_corpus_stream(mode: str, newline: str) -> None:
    raw = corpus_body(ANTHROPIC_STREAM)
    body = raw.replace("\n", newline).encode()
    script = Script(httpx.Response(200, headers={**SSE, "request-id": "req_s"}, content=body))
    transport, _ = make(script)
    base, request_id, events = await collect(transport, mode)
    assert (base, request_id) == (PRIMARY, "req_s")
    names = [name for name, _ in events]
    assert names[0] == "message_start"
    assert names[-1] == "message_stop"
    assert "ping" in names
    assert len(events) == raw.count("event: ")
    for name, data in events:
        # The recorded JSON carries trailing spaces before its closing brace; it still parses.
        assert json.loads(data)["type"] == name
        assert "\r" not in data


async def test_chat_completions_corpus_stream(mode: str) -> None:
    raw = corpus_body(CHAT_STREAM)
    script = Script(httpx.Response(200, headers=SSE, content=raw.encode()))
    transport, _ = make(script)
    _, _, events = await collect(transport, mode)
    assert {name for name, _ in events} == {"message"}
    assert events[-1] == ("message", "[DONE]")
    assert len(events) == raw.count("data: ")
    assert json.loads(events[0][1])["object"] == "chat.completion.chunk"


async def test_keepalives_skipped_named_events_kept(mode: str) -> None:
    body = b": keepalive\n\n\n\nevent: ping\ndata:\n\nid: 7\n\ndata: a\ndata: b\n\ndata: [DONE]\n\n"
    transport, _ = make(Script(httpx.Response(200, headers=SSE, content=body)))
    _, _, events = await collect(transport, mode)
    assert events == [("ping", ""), ("message", "a\nb"), ("message", "[DONE]")]


async def test_stream_request_headers(mode: str) -> None:
    script = Script(httpx.Response(200, headers=SSE, content=FIRST))
    transport, _ = make(script)
    await collect(transport, mode)
    headers = script.requests[0].headers
    assert headers["accept"] == "text/event-stream"
    assert headers["content-type"] == "application/json"
    assert headers["authorization"] == f"Bearer {KEY}"


async def test_stream_opened_with_503_then_200_is_retried(mode: str) -> None:
    script = Script(
        httpx.Response(503, headers={"retry-after": "2"}, text="busy"),
        httpx.Response(200, headers=SSE, content=FIRST),
    )
    transport, delays = make(script)
    base, _, events = await collect(transport, mode)
    assert events == [("message_start", '{"type":"message_start"}')]
    assert len(script.requests) == 2
    assert delays == [2.0]
    assert base == PRIMARY


async def test_stream_unreachable_primary_served_by_fallback(mode: str) -> None:
    exc = httpx.ConnectError("refused")
    script = Script(exc, exc, exc, httpx.Response(200, headers=SSE, content=FIRST))
    transport, _ = make(script)
    base, _, events = await collect(transport, mode)
    assert base == FALLBACK
    assert [r.url.host for r in script.requests][-1] == "api.evolink.ai"
    assert len(events) == 1


async def test_stream_rate_limited_raises_once_its_budget_is_spent(mode: str) -> None:
    error = {"type": "error", "error": {"type": "rate_limit_error", "message": "too fast"}}
    script = Script(httpx.Response(429, json=error, headers={"retry-after": "2"}))
    transport, delays = make(script, rate_limit_timeout=5.0)
    seen, err = await collect_until_error(transport, mode)
    assert isinstance(err, KimiRateLimitError)
    # The error body was read before raising.
    assert (
        err.message
        == "too fast (waited 4s for the gateway's rate limit, and rate_limit_timeout=5s)"
    )
    assert seen == []
    assert delays == [2.0, 2.0]
    assert len(script.requests) == 3


async def test_stream_400_not_retried(mode: str) -> None:
    script = Script(httpx.Response(400, json={"error": {"message": "bad effort"}}))
    transport, _ = make(script)
    _, err = await collect_until_error(transport, mode)
    assert isinstance(err, KimiInvalidRequestError)
    assert "bad effort" in str(err)
    assert len(script.requests) == 1


@pytest.mark.parametrize(
    "exc",
    [httpx.RemoteProtocolError("peer closed connection"), httpx.ReadError("reset by peer")],
    ids=["remote-protocol", "read-error"],
)
async def test_drop_after_first_event_is_not_retried(mode: str, exc: Exception) -> None:
    script = Script(httpx.Response(200, headers=SSE, stream=Faulty([FIRST], exc)))
    transport, delays = make(script)
    seen, err = await collect_until_error(transport, mode)
    assert seen == [("message_start", '{"type":"message_start"}')]
    assert type(err) is KimiStreamError
    assert err.partial is None
    assert "direct.evolink.ai" in str(err)
    assert err.__context__ is None
    assert len(script.requests) == 1
    assert delays == []


@pytest.mark.parametrize(
    "exc",
    [httpx.RemoteProtocolError("peer closed connection"), httpx.ReadError("reset by peer")],
    ids=["remote-protocol", "read-error"],
)
async def test_drop_before_the_first_event_is_retried(mode: str, exc: Exception) -> None:
    # The issue: "streams are retried only before the first event" - headers alone don't count.
    script = Script(
        httpx.Response(200, headers=SSE, stream=Faulty([b": keepalive\n\n"], exc)),
        httpx.Response(200, headers=SSE, content=FIRST),
    )
    transport, delays = make(script)
    _, _, events = await collect(transport, mode)
    assert events == [("message_start", '{"type":"message_start"}')]
    assert len(script.requests) == 2
    assert len(delays) == 1


async def test_silence_mid_stream_is_a_timeout(mode: str) -> None:
    script = Script(httpx.Response(200, headers=SSE, stream=Faulty([FIRST], httpx.ReadTimeout(""))))
    transport, _ = make(script)
    seen, err = await collect_until_error(transport, mode)
    assert len(seen) == 1
    assert isinstance(err, KimiTimeoutError)
    assert "direct.evolink.ai" in str(err)
    assert len(script.requests) == 1


async def test_200_json_error_body_on_stream_request(mode: str) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    script = Script(httpx.Response(200, json=error, headers={"x-request-id": "req_j"}))
    transport, _ = make(script)
    _, err = await collect_until_error(transport, mode)
    assert isinstance(err, KimiAPIError)
    assert err.status_code == 529
    assert err.message == "Overloaded"
    assert err.request_id == "req_j"
    assert len(script.requests) == 1


async def test_200_non_stream_body_on_stream_request(mode: str) -> None:
    page = "<html><body>Welcome to the captive portal</body></html>"
    script = Script(httpx.Response(200, text=page, headers={"content-type": "text/html"}))
    transport, _ = make(script)
    _, err = await collect_until_error(transport, mode)
    assert type(err) is KimiStreamError
    assert "captive portal" in err.message
    assert "text/html" in err.message
    assert len(script.requests) == 1


async def test_breaking_out_early_closes_the_response(mode: str) -> None:
    closed: list[bool] = []

    class Tracking(Faulty):
        def close(self) -> None:
            closed.append(True)

        async def aclose(self) -> None:
            closed.append(True)

    body = Tracking([FIRST, FIRST, FIRST], httpx.ReadError("never reached"))
    transport, _ = make(Script(httpx.Response(200, headers=SSE, stream=body)))
    if mode == "sync":
        with transport.stream_events(PATH, BODY) as events:
            first = next(iter(events))
    else:
        async with transport.astream_events(PATH, BODY) as aevents:
            first = await anext(aiter(aevents))
    assert first[0] == "message_start"
    for thread in threading.enumerate():  # a sync stream's rest is drained in the background
        if thread.name == "langchain-kimi-drain":
            thread.join(5)
    assert closed
