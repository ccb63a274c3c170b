"""The httpx clients of one gateway, shared by every key: clients of one connection each, as
many as the calls in flight, for every thread's sync calls and per event loop (httpx connections
belong to the loop that opened them). A call takes an idle client, or makes one, and gives it back
when done (a stream: when closed); at most `idle_connections` idle ones are kept, latest first.

Why one connection each: httpcore scans every connection of its pool at each request and counts
the idle ones once per idle one, so one pool of 100 connections costs twice the client CPU per
call of 100 pools of one (measured: docs/benchmarks.md).

Plain httpx clients otherwise: proxies and CA settings are httpx's to read from the environment.
As a client serves many keys, the key travels in each request's header and the clients keep no
cookies. One TLS context, made as httpx makes it, serves them all (loading the CA bundle takes
~90 ms). A loop's clients live while it has calls in flight, then for httpx's keep-alive expiry,
and are closed on the loop; meanwhile only the loop holds them (through that timer), and
`asyncio.run` closes them (`shutdown_asyncgens`). The caller's own clients are never closed.
"""

from __future__ import annotations

import asyncio
import functools
import http.cookiejar
import os
import ssl
import threading
import weakref
from collections.abc import AsyncGenerator, Callable
from typing import Any, Generic, TypeVar

import httpx

from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._settings import DEFAULT_TIMEOUT

LIMITS = httpx.Limits(max_connections=1, max_keepalive_connections=1)
"""One connection per client (see the module), expiring as httpx expires it."""
Client = TypeVar("Client", httpx.Client, httpx.AsyncClient)


def no_cookies() -> http.cookiejar.CookieJar:
    """A jar that takes no cookie: what a client shared by several keys must keep."""
    return http.cookiejar.CookieJar(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))


def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context, made once per value of the variables it reads."""
    return _tls_context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=4)
def _tls_context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:  # noqa: ARG001
    # The arguments are the cache key only: httpx reads the same two variables itself.
    return httpx.create_ssl_context()


def _client_settings() -> dict[str, Any]:
    return {
        "timeout": DEFAULT_TIMEOUT,
        "limits": LIMITS,
        "verify": tls_context(),
        "cookies": no_cookies(),
    }


class Idle(Generic[Client]):
    """The idle clients of one kind, the latest given back first. Thread-safe."""

    def __init__(self, make: Callable[[], Client]) -> None:
        self._make: Callable[[], Client] = make
        self._idle: list[Client] = []
        self._closed = False
        self._lock = threading.Lock()

    def take(self) -> Client:
        with self._lock:
            client = self._idle.pop() if self._idle else None
        return self._make() if client is None else client

    def give_back(self, client: Client) -> Client | None:
        """Keep `client` for the next call; the client to close when there is no room."""
        with self._lock:
            if self._closed or len(self._idle) >= KNOBS.idle_connections:
                return client
            self._idle.append(client)
            return None

    def close(self) -> list[Client]:
        """No more clients kept: the idle ones, to close (those in use close when given back)."""
        with self._lock:
            self._closed = True
            clients, self._idle = self._idle, []
        return clients


class LoopClients:
    """One event loop's clients, counted while in use; closed on the loop once idle."""

    __slots__ = ("__weakref__", "_closer", "_forget", "_timer", "idle", "in_use")

    def __init__(self, forget: weakref.ref[GatewayClients]) -> None:
        self.idle: Idle[httpx.AsyncClient] = Idle(lambda: httpx.AsyncClient(**_client_settings()))
        self.in_use = 0
        self._timer: asyncio.TimerHandle | None = None
        self._forget = forget
        self._closer = _close_at_loop_shutdown(self)

    async def start(self) -> None:
        await anext(self._closer)  # runs to its `yield` without suspending: nothing interleaves

    def take(self) -> tuple[httpx.AsyncClient, Callable[[], None]]:
        self.in_use += 1
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        client = self.idle.take()
        return client, lambda: self._give_back(client)

    def _give_back(self, client: httpx.AsyncClient) -> None:
        loop = asyncio.get_running_loop()
        surplus = self.idle.give_back(client)
        if surplus is not None:
            _in_background(loop.create_task(surplus.aclose()))
        self.in_use -= 1
        if not self.in_use:
            self._timer = loop.call_later(LIMITS.keepalive_expiry or 0.0, self._expire)

    def _expire(self) -> None:
        gateway = self._forget()
        if gateway is not None:
            gateway.forget(asyncio.get_running_loop(), self)
        _in_background(asyncio.get_running_loop().create_task(self.aclose()))

    async def aclose(self) -> None:
        await self._closer.aclose()


async def _close_at_loop_shutdown(clients: LoopClients) -> AsyncGenerator[None, None]:
    """Parked async generator that closes a loop's idle clients on the loop: the loop tracks
    unfinished async generators, and `asyncio.run` finalizes them before it closes the loop."""
    try:
        yield
    finally:
        for client in clients.idle.close():
            await client.aclose()


class GatewayClients:
    """The clients of one gateway (or the caller's own). Thread-safe; usable from any loop."""

    def __init__(
        self,
        http_client: httpx.Client | None = None,
        http_async_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._injected = http_client
        self._injected_async = http_async_client
        self._sync: Idle[httpx.Client] = Idle(lambda: httpx.Client(**_client_settings()))
        # A loop's entry is held by its calls in flight and its idle timer, not here (see above).
        self._loops: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, weakref.ref[LoopClients]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def take(self) -> tuple[httpx.Client, Callable[[], None]]:
        """A sync client, and what gives it back (or the caller's own client)."""
        if self._injected is not None:
            return self._injected, lambda: None
        client = self._sync.take()
        return client, lambda: _close(self._sync.give_back(client))

    async def atake(self) -> tuple[httpx.AsyncClient, Callable[[], None]]:
        """A client of this loop, and what gives it back (or the caller's own client)."""
        if self._injected_async is not None:
            return self._injected_async, lambda: None
        loop = asyncio.get_running_loop()
        with self._lock:
            known = self._loops.get(loop)
            entry = known() if known is not None else None
            fresh = entry is None
            if entry is None:
                entry = LoopClients(weakref.ref(self))
                self._loops[loop] = weakref.ref(entry)
        if fresh:
            await entry.start()
        return entry.take()

    def forget(self, loop: asyncio.AbstractEventLoop, entry: LoopClients) -> None:
        with self._lock:
            known = self._loops.get(loop)
            if known is not None and known() is entry:
                del self._loops[loop]

    def close(self) -> LoopClients | None:
        """Close the idle sync clients and forget the loops'; returns the current loop's, for
        the caller to close there (the others close when their loops end or go idle)."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            known = self._loops.pop(loop, None) if loop is not None else None
            self._loops.clear()
        for client in self._sync.close():
            client.close()
        return known() if known is not None else None


_CLOSING: set[asyncio.Task[None]] = set()
"""Clients closing on their loops: a task nobody refers to may be collected before it ends."""


def _in_background(task: asyncio.Task[None]) -> None:
    _CLOSING.add(task)
    task.add_done_callback(_CLOSING.discard)


def _close(client: httpx.Client | None) -> None:
    if client is not None:
        client.close()
