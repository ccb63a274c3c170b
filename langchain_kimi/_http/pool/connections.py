"""The connections of one gateway, shared by every key: one sync client for every thread, one
async client per event loop (httpx connections are bound to the loop that opened them).

The key travels in each request's `Authorization` header (`config.build_headers`), never on a
client, so every key of a gateway can share its connections; what is per key (admission, pacing,
cool-down) lives in `shared.SharedPool`.

A loop's client is reachable only from that loop while it sits idle: the registry maps the loop
(weakly) to a weak reference, and the client is kept alive by its calls in flight or by its
transport's keep-alive timer, which the loop holds (`spread.ASpread`). A loop dropped without
`close()` is collected with its client and sockets; one that ends in `asyncio.run` closes its
client in `shutdown_asyncgens` (`_close_at_loop_shutdown`).
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import threading
import weakref
from collections.abc import AsyncGenerator

import httpx

from langchain_kimi._http.config import DEFAULT_TIMEOUT
from langchain_kimi._http.pool.spread import ASpread, Spread

CONNECTIONS_PER_POOL = 2
"""Connections per httpcore pool behind the clients (`spread.Spread` opens as many such pools as the
requests in flight need): httpcore's cost per request grows with the connections of its pool, so
they stay few. Measured on loopback, client CPU per `ainvoke` at 100 concurrent: 6.2 ms with one
200-connection pool, 2.9 ms with pools of 16, 2.1 ms of 8, 1.4-1.5 ms of 4 or 2, 1.2 ms of 1; at 500
and 2,000 concurrent, 1.5-1.8 ms for 1, 2 and 4 (docs/benchmarks.md, "Many connections")."""
# Every request carries its own `httpx.Timeout` (Transport sets it per request); the clients'
# default (`DEFAULT_TIMEOUT`) only applies to requests that do not, and there are none.

_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
_ENVIRONMENT = (
    *(name for proxy in _PROXY_VARIABLES for name in (proxy, proxy.upper())),
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)
"""The variables a new httpx client reads (`trust_env`): the usual proxy ones, the CA ones."""


def environment() -> tuple[tuple[str, str], ...]:
    """What a new client takes from the environment. Part of a gateway's identity: a model made
    after it changes gets new clients. (Named variables only: `urllib.request.getproxies()` reads
    every variable, or the system's settings, and costs each new model ~0.4 ms.)"""
    return tuple((name, os.environ[name]) for name in _ENVIRONMENT if name in os.environ)


def _tls_context() -> ssl.SSLContext:
    """One TLS context for every client of every gateway: httpx would build one per client, and
    loading the CA bundle takes ~90 ms, paid by every `asyncio.run` (a new loop needs a new client).
    Keyed by the two variables httpx's default context honours, so setting them still works."""
    return _tls_context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=4)
def _tls_context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:  # noqa: ARG001
    # The arguments are the cache key only: httpx reads the same two variables itself.
    return httpx.create_ssl_context()


class _LoopClient:
    """One event loop's client and the parked generator that closes it."""

    __slots__ = ("__weakref__", "client", "closer")

    def __init__(self, client: httpx.AsyncClient, closer: AsyncGenerator[None, None]) -> None:
        self.client = client
        self.closer = closer


async def _close_at_loop_shutdown(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    """Parked async generator that closes `client` on its own loop.

    The loop tracks unfinished async generators, and `asyncio.run` (like `asyncio.Runner`) finalizes
    them in `shutdown_asyncgens()` before closing, so a client is closed even when the caller never
    calls `aclose()`; a loop dropped without that step just drops the connections.
    """
    try:
        yield
    finally:
        await client.aclose()


class Connections:
    """The clients of one gateway (or the caller's own clients, used as they are). Thread-safe;
    usable from several loops."""

    def __init__(
        self,
        http_client: httpx.Client | None = None,
        http_async_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._injected = http_client
        self._injected_async = http_async_client
        self.users = 0
        """The registered key pools on this gateway (kept by `shared`'s registry)."""
        self.leases = 0
        """The leases of all those pools: the last one returned by a close closes the clients."""
        self._client: httpx.Client | None = None
        # The values are weak too: a loop's client refers to its loop (see the module's doc).
        self._async_clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, weakref.ref[_LoopClient]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def sync_client(self) -> httpx.Client:
        if self._injected is not None:
            return self._injected
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    timeout=DEFAULT_TIMEOUT, transport=Spread(CONNECTIONS_PER_POOL, _tls_context())
                )
            return self._client

    async def async_client(self) -> httpx.AsyncClient:
        if self._injected_async is not None:
            return self._injected_async
        loop = asyncio.get_running_loop()
        with self._lock:
            known = self._async_clients.get(loop)
            entry = known() if known is not None else None
            if entry is not None:
                return entry.client
            transport = ASpread(CONNECTIONS_PER_POOL, _tls_context())
            client = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT, transport=transport)
            entry = _LoopClient(client, _close_at_loop_shutdown(client))
            transport.keeper = entry  # alive as long as its client and transport are
            self._async_clients[loop] = weakref.ref(entry)
        await anext(entry.closer)  # runs up to its `yield` without suspending: nothing interleaves
        return client

    def async_clients(self) -> list[httpx.AsyncClient]:
        """The clients of the loops that used this gateway and are not closed."""
        with self._lock:
            entries = [
                known() for loop, known in self._async_clients.items() if not loop.is_closed()
            ]
        return [entry.client for entry in entries if entry is not None]

    def detach(self) -> tuple[httpx.Client | None, AsyncGenerator[None, None] | None]:
        """Forget our clients; return the sync one and the current loop's closer to close."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            client, self._client = self._client, None
            known = self._async_clients.pop(loop, None) if loop is not None else None
            # Other loops' clients close when their loop shuts down (see `_close_at_loop_shutdown`).
            self._async_clients.clear()
        entry = known() if known is not None else None
        return client, entry.closer if entry is not None else None

    def close_sync(self) -> None:
        """Close the sync client (at interpreter exit: its sockets would warn when collected)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
