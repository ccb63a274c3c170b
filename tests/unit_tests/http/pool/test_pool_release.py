"""Pools are freed: a pool whose last model is gone, or a client whose event loop is gone, gives
its connections back after an idle expiry (issue 23, item 4). One model per tenant key, or one
event loop per request, must not grow file descriptors and memory without bound.

The expiry is set to 0 here (`IDLE_SECONDS`); the next registry change or new loop sweeps.
"""

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
from langchain_kimi._http.pool import connections, shared
from tests.support.echo_gateway import EchoServer
from tests.support.loopback import running

pytestmark = [
    pytest.mark.enable_socket,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),  # loops dropped unclosed, on purpose
]


@pytest.fixture
def gateway(monkeypatch: pytest.MonkeyPatch) -> Iterator[EchoServer]:
    monkeypatch.setattr(shared, "IDLE_SECONDS", 0.0)
    with running(EchoServer()) as server:
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


def test_one_model_per_key_gives_its_pool_back_when_the_models_are_gone(
    gateway: EchoServer,
) -> None:
    gc.collect()
    fds, pools = _open_fds(), len(shared._POOLS)
    for i in range(400):
        model = _model(gateway.url, f"sk-tenant-{i:04d}-0123456789abcdef")
        assert model.invoke(f"tenant {i}").content == f"tenant {i}"
        del model
    gc.collect()
    last = _model(gateway.url, "sk-tenant-last-0123456789abcdef")  # a registry change sweeps
    assert last.invoke("last").content == "last"
    assert len(shared._POOLS) <= pools + 1
    assert _settled_fds(fds + 4) <= fds + 4  # the last model's connection, both ends


def test_a_pool_in_use_is_kept_while_idle_ones_go(gateway: EchoServer) -> None:
    kept = _model(gateway.url, "sk-kept-0123456789abcdef")
    kept.invoke("warm")
    pool = kept._transport()._pool()
    for i in range(3):
        _model(gateway.url, f"sk-gone-{i}-0123456789abcdef").invoke("once")
    gc.collect()
    _model(gateway.url, "sk-another-0123456789abcdef").invoke("sweep")
    assert kept._transport()._pool() is pool  # still registered, still warm
    assert pool in shared._POOLS.values()
    assert not pool.sync_client().is_closed
    assert kept.invoke("still").content == "still"


def test_event_loops_dropped_without_close_do_not_keep_their_clients(gateway: EchoServer) -> None:
    model = _model(gateway.url, "sk-loops-0123456789abcdef")
    asyncio.run(model.ainvoke("warm"))  # the pool and its first async client exist
    gc.collect()
    fds = _open_fds()
    for i in range(60):
        loop = asyncio.new_event_loop()
        assert loop.run_until_complete(model.ainvoke(f"loop {i}")).content == f"loop {i}"
        del loop  # never closed: its selector, self-pipe and connection stay open until swept
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        asyncio.run(model.ainvoke("sweep"))
        gc.collect()
    pool = model._transport()._pool()
    assert len(pool.connections.async_clients()) <= 1
    # A loop costs 4 descriptors here (selector, self-pipe pair, one connection) + the server's.
    assert _settled_fds(fds + 8) <= fds + 8


def _ssl_context_of(client: httpx.Client | httpx.AsyncClient) -> object:
    """The TLS context of the first httpcore pool behind a client's spread transport."""
    places = client._transport._places  # type: ignore[union-attr]
    index = places.take()  # opens its first httpcore pool, as a request would
    places.give_back(index)
    return places.pools[index]._pool._ssl_context


def test_a_new_loop_client_is_cheap(gateway: EchoServer) -> None:
    """No per-client TLS context: every client of every pool shares one (it takes ~90 ms to load
    the CA bundle; a new loop would pay it on every `asyncio.run`)."""
    model = _model(gateway.url, "sk-cheap-0123456789abcdef")
    pool = model._transport()._pool()

    async def client_context() -> object:
        return _ssl_context_of(await pool.async_client())

    first, second = asyncio.run(client_context()), asyncio.run(client_context())
    assert first is second
    assert _ssl_context_of(pool.sync_client()) is first


def test_the_shared_tls_context_follows_the_ca_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx's default context reads SSL_CERT_FILE / SSL_CERT_DIR: a variable set after the first
    client (a test's own CA, a corporate bundle) is still honoured."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    default = connections._tls_context()
    assert connections._tls_context() is default
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    own = connections._tls_context()
    assert own is not default
    assert connections._tls_context() is own
