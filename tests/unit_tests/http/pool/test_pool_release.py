"""What a process holds follows its models and calls, not the keys, loops and bursts it has seen:
a key's gate is forgotten with its last model, a loop's client is closed once idle and goes with
a loop dropped without closing, and one TLS context serves every client."""

from __future__ import annotations

import asyncio
import gc
import os
import time
import warnings
from collections.abc import Iterator

import certifi
import httpx
import pytest

from langchain_kimi import ChatKimi
from langchain_kimi._http.pool import clients, registry
from tests.support.echo_gateway import EchoServer
from tests.support.fake_transport import idle_clients, loop_clients
from tests.support.loopback import running

pytestmark = [
    pytest.mark.enable_socket,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),  # loops dropped unclosed, on purpose
]


@pytest.fixture
def gateway() -> Iterator[EchoServer]:
    with running(EchoServer()) as server:
        assert isinstance(server, EchoServer)
        yield server


def _model(url: str, key: str) -> ChatKimi:
    return ChatKimi(api_key=key, base_url=url, timeout=10, max_retries=0)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _settled_fds(at_most: int) -> int:
    """Open descriptors once the server threads have seen their clients go (bounded wait)."""
    deadline = time.monotonic() + 10
    while (count := _open_fds()) > at_most and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.05)
    return count


def _gates(model: ChatKimi) -> int:
    gateway_key = model._transport()._gateway_key
    return len(registry._GATEWAYS[gateway_key].gates)


def test_a_keys_gate_is_forgotten_with_its_last_model(gateway: EchoServer) -> None:
    gc.collect()
    fds = _open_fds()
    for i in range(400):
        model = _model(gateway.url, f"sk-tenant-{i:04d}-0123456789abcdef")
        assert model.invoke(f"tenant {i}").content == f"tenant {i}"
        del model
    gc.collect()
    last = _model(gateway.url, "sk-tenant-last-0123456789abcdef")
    assert last.invoke("last").content == "last"
    assert _gates(last) == 1  # the 400 keys' gates are gone: only the last model's is left
    assert _settled_fds(fds + 4) <= fds + 4  # the gateway's one connection, both ends


def test_a_gate_in_use_is_kept_while_the_others_go(gateway: EchoServer) -> None:
    kept = _model(gateway.url, "sk-kept-0123456789abcdef")
    kept.invoke("warm")
    share = kept._transport()._shared()
    for i in range(3):
        _model(gateway.url, f"sk-gone-{i}-0123456789abcdef").invoke("once")
    gc.collect()
    assert kept._transport()._shared() is share
    assert _gates(kept) == 1
    assert kept.invoke("still").content == "still"


def test_event_loops_dropped_without_close_do_not_keep_their_clients(gateway: EchoServer) -> None:
    model = _model(gateway.url, "sk-loops-0123456789abcdef")
    asyncio.run(model.ainvoke("warm"))
    gc.collect()
    fds = _open_fds()
    for i in range(60):
        loop = asyncio.new_event_loop()
        assert loop.run_until_complete(model.ainvoke(f"loop {i}")).content == f"loop {i}"
        del loop  # never closed: its selector, self-pipe and connection stay open until collected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    assert len(loop_clients(model._transport())) == 0
    # A loop costs 4 descriptors here (selector, self-pipe pair, one connection) + the server's.
    assert _settled_fds(fds + 8) <= fds + 8


def test_a_loops_client_is_closed_once_idle_for_httpxs_keep_alive_expiry(
    gateway: EchoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clients, "LIMITS", httpx.Limits(max_connections=1, keepalive_expiry=0.05))
    model = _model(gateway.url, "sk-idle-loop-0123456789abcdef")

    async def call_then_idle() -> tuple[httpx.AsyncClient, bool, int]:
        assert (await model.ainvoke("busy")).content == "busy"
        client = loop_clients(model._transport())[0]
        open_while_idle = not client.is_closed
        await asyncio.sleep(0.3)  # the loop lives on, idle
        return client, open_while_idle, len(loop_clients(model._transport()))

    client, open_while_idle, left = asyncio.run(call_then_idle())
    assert open_while_idle
    assert client.is_closed
    assert left == 0


def test_a_loops_client_in_use_is_not_closed_when_idle_time_passes(
    gateway: EchoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clients, "LIMITS", httpx.Limits(max_connections=1, keepalive_expiry=0.05))
    model = _model(gateway.url, "sk-busy-loop-0123456789abcdef")
    gateway.on_request = lambda body: time.sleep(0.2)  # each answer outlasts the expiry

    async def calls() -> list[str]:
        replies = await asyncio.gather(*(model.ainvoke(f"slow {i}") for i in range(3)))
        return [str(reply.content) for reply in replies]

    assert asyncio.run(calls()) == [f"slow {i}" for i in range(3)]


def _ssl_context_of(client: httpx.Client | httpx.AsyncClient) -> object:
    return client._transport._pool._ssl_context  # type: ignore[attr-defined]


def test_a_new_loop_client_is_cheap(gateway: EchoServer) -> None:
    """No per-client TLS context: every client shares one (it takes ~90 ms to load the CA
    bundle; a new loop would pay it on every `asyncio.run`)."""
    model = _model(gateway.url, "sk-cheap-0123456789abcdef")

    async def client_context() -> object:
        await model.ainvoke("hi")
        return _ssl_context_of(loop_clients(model._transport())[0])

    first, second = asyncio.run(client_context()), asyncio.run(client_context())
    assert first is second
    model.invoke("sync")
    assert _ssl_context_of(idle_clients(model._transport())[0]) is first


def test_the_shared_tls_context_follows_the_ca_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx's default context reads SSL_CERT_FILE / SSL_CERT_DIR: a variable set after the first
    client (a test's own CA, a corporate bundle) is still honoured."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    default = clients.tls_context()
    assert clients.tls_context() is default
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    own = clients.tls_context()
    assert own is not default
    assert clients.tls_context() is own
