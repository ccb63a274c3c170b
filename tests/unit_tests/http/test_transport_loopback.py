"""Real sockets on 127.0.0.1: mid-stream resets, silent streams, concurrency, loops, threads.

A tiny threaded HTTP/1.1 server runs inside the test process; only these tests may open sockets,
and only to 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from langchain_kimi._errors import KimiConnectionError, KimiError, KimiStreamError, KimiTimeoutError
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.transport import JsonReply, Transport
from tests.support.fake_transport import idle_clients, loop_clients, transport_config
from tests.support.loopback import LoopbackServer, QuietHandler, running

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

KEY = "sk-test-SECRET-loop"
FIRST = b'event: message_start\ndata: {"type":"message_start"}\n\n'


class Handler(QuietHandler):
    server: Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with self.server.lock:
            self.server.connections.add(self.client_address)
            self.server.auth.add(self.headers["Authorization"])
        if self.path == "/ok":
            payload = json.dumps({"echo": json.loads(body)}).encode()
            self._head("application/json", len(payload))
            self.wfile.write(payload)
        elif self.path == "/reset":
            self._head("text/event-stream", 100_000)
            self.wfile.write(FIRST)
            self.wfile.flush()
            time.sleep(0.05)
            # SO_LINGER 0: close() sends RST instead of FIN, like a crashed proxy.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif self.path == "/silent":
            self._head("text/event-stream", 100_000)
            self.wfile.write(FIRST)
            self.wfile.flush()
            self.server.release.wait(5.0)
            self.close_connection = True

    def _head(self, content_type: str, length: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        self.end_headers()


class Server(LoopbackServer):
    def __init__(self) -> None:
        super().__init__(Handler)
        self.lock = threading.Lock()
        self.connections: set[tuple[str, int]] = set()
        self.auth: set[str] = set()


@pytest.fixture
def server() -> Iterator[Server]:
    with running(Server()) as srv:
        yield srv


def make(base: str, *, fallback: str | None = None, read: float = 5.0) -> Transport:
    async def no_sleep(_: float) -> None:
        return None

    cfg = transport_config(
        base_url=base,
        fallback_base_url=fallback,
        api_key=SecretStr(KEY),
        timeout=httpx.Timeout(5.0, read=read),
        sleep=lambda _: None,
        async_sleep=no_sleep,
    )
    return Transport(cfg)


async def drain(transport: Transport, path: str, mode: str) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    if mode == "sync":
        with transport.stream_events(path, {}) as events:
            seen.extend(events)
    else:
        async with transport.astream_events(path, {}) as aevents:
            async for event in aevents:
                seen.append(event)
    return seen


async def post(transport: Transport, mode: str, body: dict[str, Any] | None = None) -> JsonReply:
    if mode == "sync":
        return transport.post_json("/ok", body or {})
    return await transport.apost_json("/ok", body or {})


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_connection_reset_mid_stream(server: Server, mode: str) -> None:
    transport = make(server.url)
    with pytest.raises(KimiStreamError) as info:
        await asyncio.wait_for(drain(transport, "/reset", mode), timeout=5.0)
    assert "127.0.0.1" in str(info.value)
    assert info.value.partial is None
    await transport.aclose()


async def test_silent_stream_times_out_quickly(server: Server, mode: str) -> None:
    transport = make(server.url, read=0.3)
    started = time.monotonic()
    with pytest.raises(KimiTimeoutError) as info:
        await asyncio.wait_for(drain(transport, "/silent", mode), timeout=5.0)
    assert time.monotonic() - started < 2.0
    assert "127.0.0.1" in str(info.value)
    server.release.set()
    await transport.aclose()


async def test_120_concurrent_posts_on_one_loop(server: Server) -> None:
    transport = make(server.url)
    replies = await asyncio.wait_for(
        asyncio.gather(*(transport.apost_json("/ok", {"i": i}) for i in range(120))), timeout=30.0
    )
    assert sorted(r.body["echo"]["i"] for r in replies) == list(range(120))
    assert {r.base_url for r in replies} == {server.url}
    assert len(transport._shared().clients._loops) == 1  # one loop's clients
    idle = loop_clients(transport)
    assert 1 <= len(idle) <= KNOBS.idle_connections  # one connection each, kept for the next
    assert len(server.connections) <= 120
    assert server.auth == {f"Bearer {KEY}"}
    await transport.aclose()
    assert all(client.is_closed for client in idle)


def test_same_transport_across_two_asyncio_runs(server: Server) -> None:
    transport = make(server.url)
    clients: list[httpx.AsyncClient] = []

    async def once(i: int) -> Any:
        reply = await transport.apost_json("/ok", {"i": i})
        clients.extend(loop_clients(transport))
        return reply.body["echo"]["i"]

    assert asyncio.run(once(1)) == 1
    assert asyncio.run(once(2)) == 2  # the first loop's clients are closed-loop garbage by now
    assert len(clients) == 2
    assert clients[0] is not clients[1]
    # asyncio.run finalized the parked closer before closing each loop.
    assert all(client.is_closed for client in clients)
    transport.close()


def test_sync_use_from_16_threads(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[httpx.Client] = []
    real_client = httpx.Client

    def counting_client(*args: Any, **kwargs: Any) -> httpx.Client:
        client = real_client(*args, **kwargs)
        created.append(client)
        return client

    monkeypatch.setattr(httpx, "Client", counting_client)
    transport = make(server.url)
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda i: transport.post_json("/ok", {"i": i}).body, range(64)))
    assert [r["echo"]["i"] for r in results] == list(range(64))
    assert 1 <= len(created) <= 16  # one per call in flight at once, kept for the next calls
    transport.close()
    assert all(client.is_closed for client in created)


async def test_unreachable_primary_falls_back_over_real_sockets(server: Server, mode: str) -> None:
    with socket.socket() as probe:  # a port that nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    transport = make(dead, fallback=server.url)
    reply = await post(transport, mode, {"x": 1})
    assert reply.base_url == server.url
    assert reply.body == {"echo": {"x": 1}}

    alone = make(dead)
    with pytest.raises(KimiConnectionError) as info:
        await post(alone, mode)
    assert "127.0.0.1" in str(info.value)
    assert KEY not in str(info.value)
    await transport.aclose()
    await alone.aclose()


async def test_context_managers_close_clients(server: Server) -> None:
    with make(server.url) as transport:
        transport.post_json("/ok", {})
        [client] = idle_clients(transport)
    assert client.is_closed
    async with make(server.url) as atransport:
        await atransport.apost_json("/ok", {})
        aclient = loop_clients(atransport)[0]
    assert aclient.is_closed
    with pytest.raises(KimiError):
        # Still usable after close: a fresh client is created lazily.
        await asyncio.wait_for(drain(atransport, "/reset", "async"), 5.0)
