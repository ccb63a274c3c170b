"""The httpx clients of one gateway, shared by every key: one for every thread's sync calls, one
per event loop (httpx connections belong to the loop that opened them).

Plain httpx clients: proxies (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`, either case)
and CA settings (`SSL_CERT_FILE`, `SSL_CERT_DIR`) are httpx's to read from the environment. As one
client serves many keys, the key travels in each request's header, and the clients keep no
cookies (an API needs none; one set for a key must never go out with another's). One TLS context,
made as httpx makes it, serves them all: loading the CA bundle takes ~90 ms per client.

A loop's client lives while it has calls in flight, then for httpx's keep-alive expiry, and is
closed on its loop. Meanwhile only the loop holds it (through that timer): a loop dropped unclosed
takes its client and sockets with it; `asyncio.run` closes it (`shutdown_asyncgens`). The caller's
own clients are used as they are, never closed.
"""

from __future__ import annotations

import asyncio
import functools
import http.cookiejar
import os
import ssl
import threading
import weakref
from collections.abc import AsyncGenerator

import httpx

from langchain_kimi._http.config import DEFAULT_TIMEOUT
from langchain_kimi._http.limits.knobs import KNOBS

LIMITS = httpx.Limits(max_connections=None, max_keepalive_connections=KNOBS.idle_connections)
"""No cap on connections: the calls in flight are the cap (one connection each, as many as your
`max_concurrency` allows), so httpcore never queues a request (it rescans its queue against every
connection at each event). httpx's own keep-alive expiry."""


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


def _client_settings() -> dict[str, object]:
    return {"timeout": DEFAULT_TIMEOUT, "limits": LIMITS, "verify": tls_context()}


class LoopClient:
    """One event loop's client, counted while in use; closed on its loop once idle."""

    __slots__ = ("__weakref__", "_closer", "_forget", "_timer", "client", "in_use")

    def __init__(self, client: httpx.AsyncClient, forget: weakref.ref[GatewayClients]) -> None:
        self.client = client
        self.in_use = 0
        self._timer: asyncio.TimerHandle | None = None
        self._forget = forget
        self._closer = _close_at_loop_shutdown(client)

    async def start(self) -> None:
        await anext(self._closer)  # runs to its `yield` without suspending: nothing interleaves

    def take(self) -> httpx.AsyncClient:
        self.in_use += 1
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return self.client

    def give_back(self) -> None:
        self.in_use -= 1
        if not self.in_use:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(LIMITS.keepalive_expiry or 0.0, self._expire)

    def _expire(self) -> None:
        gateway = self._forget()
        if gateway is not None:
            gateway.forget(asyncio.get_running_loop(), self)
        asyncio.get_running_loop().create_task(self.aclose())

    async def aclose(self) -> None:
        await self._closer.aclose()


async def _close_at_loop_shutdown(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    """Parked async generator that closes `client` on its own loop: the loop tracks unfinished
    async generators, and `asyncio.run` finalizes them before it closes the loop."""
    try:
        yield
    finally:
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
        self._client: httpx.Client | None = None
        # A loop's entry is held by its calls in flight and its idle timer, not here (see above).
        self._loops: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, weakref.ref[LoopClient]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def sync_client(self) -> httpx.Client:
        if self._injected is not None:
            return self._injected
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(cookies=no_cookies(), **_client_settings())  # type: ignore[arg-type]
            return self._client

    async def loop_client(self) -> LoopClient | httpx.AsyncClient:
        """This loop's client (take and give it back), or the caller's own client."""
        if self._injected_async is not None:
            return self._injected_async
        loop = asyncio.get_running_loop()
        with self._lock:
            known = self._loops.get(loop)
            entry = known() if known is not None else None
            if entry is not None:
                return entry
            client = httpx.AsyncClient(cookies=no_cookies(), **_client_settings())  # type: ignore[arg-type]
            entry = LoopClient(client, weakref.ref(self))
            self._loops[loop] = weakref.ref(entry)
        await entry.start()
        return entry

    def forget(self, loop: asyncio.AbstractEventLoop, entry: LoopClient) -> None:
        with self._lock:
            known = self._loops.get(loop)
            if known is not None and known() is entry:
                del self._loops[loop]

    def close(self) -> LoopClient | None:
        """Close the sync client and forget the loops' clients; returns the current loop's, for
        the caller to close there (the others close when their loops end or go idle)."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            client, self._client = self._client, None
            known = self._loops.pop(loop, None) if loop is not None else None
            self._loops.clear()
        if client is not None:
            client.close()
        return known() if known is not None else None
