"""Transport edge cases: undecodable bodies, cancellation while waiting for the first event,
caller headers, cookies. Sync and async where both paths exist; no network."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from pydantic import SecretStr

from langchain_kimi._errors import KimiAPIError, KimiStreamError
from langchain_kimi._http.transport import Transport
from tests.support.fake_transport import idle_clients, our_clients_answered_by, transport_config

KEY = "sk-test-SECRET-edge-0001"
PATH = "/v1/messages"
BODY = {"model": "kimi-k3.1-pro", "stream": True}
GZIP_GARBAGE = {"content-encoding": "gzip"}


class Tracked(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A response body that records whether it was closed; optionally never yields."""

    def __init__(self, chunks: list[bytes], *, hang: bool = False) -> None:
        self.chunks, self.hang, self.closed = chunks, hang, False

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
        if self.hang:
            await asyncio.sleep(30)

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


def _transport(handler: object, **config: object) -> Transport:
    cfg = transport_config(
        base_url="https://direct.evolink.ai",
        fallback_base_url=None,
        api_key=SecretStr(KEY),
        timeout=httpx.Timeout(5.0),
        max_retries=0,
        **config,  # type: ignore[arg-type]
    )
    mock = httpx.MockTransport(handler)  # type: ignore[arg-type]
    return Transport(
        cfg,
        http_client=httpx.Client(transport=mock),
        http_async_client=httpx.AsyncClient(transport=mock),
    )


async def _drain(transport: Transport, mode: str) -> None:
    if mode == "sync":
        with transport.stream_events(PATH, BODY) as events:
            list(events)
    else:
        async with transport.astream_events(PATH, BODY) as aevents:
            [event async for event in aevents]


async def _post(transport: Transport, mode: str) -> None:
    if mode == "sync":
        transport.post_json(PATH, {"model": "kimi-k3.1-pro"})
    else:
        await transport.apost_json(PATH, {"model": "kimi-k3.1-pro"})


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_an_undecodable_stream_is_a_typed_error_and_the_response_is_closed(
    mode: str,
) -> None:
    body = Tracked([b"this is not gzip"])
    headers = {"content-type": "text/event-stream", **GZIP_GARBAGE}
    transport = _transport(lambda request: httpx.Response(200, headers=headers, stream=body))
    with pytest.raises(KimiStreamError, match="could not be decoded") as info:
        await _drain(transport, mode)
    assert body.closed
    assert KEY not in str(info.value)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_an_undecodable_reply_is_a_typed_error(mode: str) -> None:
    headers = {"content-type": "application/json", **GZIP_GARBAGE}
    transport = _transport(lambda request: httpx.Response(200, headers=headers, content=b"xx"))
    with pytest.raises(KimiAPIError, match="could not be decoded"):
        await _post(transport, mode)


async def test_cancelled_while_waiting_for_the_first_event_closes_the_response() -> None:
    body = Tracked([b": keepalive\n\n"], hang=True)
    headers = {"content-type": "text/event-stream"}
    transport = _transport(lambda request: httpx.Response(200, headers=headers, stream=body))

    async def open_stream() -> None:
        async with transport.astream_events(PATH, BODY) as aevents:
            [event async for event in aevents]

    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(open_stream(), timeout=0.2)
    assert body.closed


def test_caller_headers_replace_ours_case_insensitively(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True})

    cfg = transport_config(
        base_url="https://headers.gateway.example",
        fallback_base_url=None,
        api_key=SecretStr(KEY),
        timeout=httpx.Timeout(5.0),
        default_headers={"accept-encoding": "identity", "user-agent": "my-app/1.0"},
    )
    our_clients_answered_by(monkeypatch, handler)
    transport = Transport(cfg)
    transport.post_json(PATH, {"model": "kimi-k3.1-pro"})
    headers = seen[0].headers
    assert headers.get_list("accept-encoding") == ["identity"]
    assert headers.get_list("user-agent") == ["my-app/1.0"]
    assert headers["authorization"] == f"Bearer {KEY}"
    transport.close()


def test_cookies_set_by_the_gateway_are_never_sent_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # One client serves every key of a gateway: a cookie set in the answer to one key would go
    # out with the next key's request. An API needs none.
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True}, headers={"set-cookie": "AWSALB=sticky"})

    cfg = transport_config(
        base_url="https://cookies.gateway.example",
        fallback_base_url=None,
        api_key=SecretStr(KEY),
        timeout=httpx.Timeout(5.0),
    )
    our_clients_answered_by(monkeypatch, handler)
    transport = Transport(cfg)
    transport.post_json(PATH, {"model": "kimi-k3.1-pro"})
    transport.post_json(PATH, {"model": "kimi-k3.1-pro"})
    assert "cookie" not in seen[0].headers
    assert "cookie" not in seen[1].headers
    assert not any(client.cookies for client in idle_clients(transport))
    transport.close()


class _CutAfter(httpx.SyncByteStream, httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes], exc: Exception) -> None:
        self.chunks, self.exc = chunks, exc

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks
        raise self.exc

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
        raise self.exc


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_stream_that_times_out_mid_way_keeps_what_arrived(mode: str) -> None:
    from langchain_kimi import ChatKimi, KimiTimeoutError

    events = [
        {"choices": [{"index": 0, "delta": {"reasoning_content": "Thinking "}}]},
        {"choices": [{"index": 0, "delta": {"content": "Par"}}]},
    ]
    head = {
        "id": "chatcmpl-cut",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "kimi-k3.1-pro",
    }
    body = b"".join(b"data: " + json.dumps({**head, **e}).encode() + b"\n\n" for e in events)

    def handler(request: httpx.Request) -> httpx.Response:
        stream = _CutAfter([body], httpx.ReadTimeout("silent"))
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)

    mock = httpx.MockTransport(handler)
    model = ChatKimi(
        api_key="test-key-not-real",
        max_retries=0,
        http_client=httpx.Client(transport=mock),
        http_async_client=httpx.AsyncClient(transport=mock),
    )

    async def consume() -> None:
        if mode == "sync":
            list(model.stream("hi"))
        else:
            [chunk async for chunk in model.astream("hi")]

    with pytest.raises(KimiTimeoutError) as info:
        await consume()
    partial = info.value.partial
    assert partial is not None
    assert partial.content == "Par"
    assert partial.additional_kwargs["reasoning_content"] == "Thinking "
