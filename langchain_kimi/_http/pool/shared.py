"""Connection pools shared by every ChatKimi (every `Transport`) with the same settings.

A pool is the httpx clients (one sync client, one async client per event loop: httpx connections
are bound to the loop that opened them) plus the `Admission` in front of them. Pools are shared
per (base URLs, API key, adaptive flag, clock, injected clients), as ChatOpenAI shares its default
httpx clients: a model created per request reuses warm connections, costs no new client, and
leaves no unclosed client behind to raise `ResourceWarning` when it is garbage collected. Sharing
the pool also shares what the gateway said about its rate limit, which is per key.

Each Transport holds a `Lease`. Closing a Transport returns its lease; the pool's clients are
closed only when the last lease is returned by an explicit close, so closing one model never breaks
another that shares its pool. A lease dropped by garbage collection is returned without closing
anything: the pool stays registered, warm for the next model.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import weakref
from collections import deque
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass

import httpx

from langchain_kimi._http.config import DEFAULT_TIMEOUT
from langchain_kimi._http.pool.admission import Admission
from langchain_kimi._http.pool.spread import ASpread, Spread

CAPACITY = 200
"""Connections per httpcore pool, and requests in flight per pool to start with (the FIFO queue
holds the rest, so httpcore's own queue, which it rescans against every connection on each pool
event, stays empty). Measured on loopback (docs/benchmarks.md): 1,000 connections, or more
keep-alive connections, made bursts slower: httpcore's idle-connection check is quadratic in the
connections it keeps. Slow answers grow the in-flight limit by another pool of this size
(`spread.Spread`), up to `MAX_IN_FLIGHT`."""
MAX_IN_FLIGHT = 4_000
_KEEPALIVE = 50
# Every request carries its own `httpx.Timeout` (Transport sets it per request); the clients'
# default (`DEFAULT_TIMEOUT`) only applies to requests that do not, and there are none.


@dataclass(frozen=True)
class PoolKey:
    bases: tuple[str, ...]
    key_digest: str
    adaptive: bool
    clock: Callable[[], float]
    http_client: httpx.Client | None
    http_async_client: httpx.AsyncClient | None

    @staticmethod
    def digest(api_key: str) -> str:
        """Pools are per key (rate limits are); the registry keeps a digest, never the key."""
        return hashlib.sha256(api_key.encode()).hexdigest()

    def __repr__(self) -> str:
        return f"PoolKey(bases={self.bases!r}, adaptive={self.adaptive})"


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


class SharedPool:
    """The clients and admission of one `PoolKey`. Thread-safe; usable from several loops."""

    def __init__(self, key: PoolKey) -> None:
        self.key = key
        injected = key.http_client is not None or key.http_async_client is not None
        self.admission = Admission(
            CAPACITY,
            adaptive=key.adaptive,
            clock=key.clock,
            max_capacity=CAPACITY if injected else MAX_IN_FLIGHT,  # the caller's limits stand
        )
        self.leases = 0
        self._client: httpx.Client | None = None
        self._async_clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, AsyncGenerator[None, None]]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SharedPool({self.key!r}, leases={self.leases}, {self.admission!r})"

    def sync_client(self) -> httpx.Client:
        if self.key.http_client is not None:
            return self.key.http_client
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    timeout=DEFAULT_TIMEOUT, transport=Spread(CAPACITY, _KEEPALIVE)
                )
            return self._client

    async def async_client(self) -> httpx.AsyncClient:
        if self.key.http_async_client is not None:
            return self.key.http_async_client
        loop = asyncio.get_running_loop()
        with self._lock:
            for stale in [lp for lp in self._async_clients if lp.is_closed()]:
                # Its connections died with their loop; it cannot be closed from another loop.
                del self._async_clients[stale]
            entry = self._async_clients.get(loop)
            if entry is not None:
                return entry[0]
            client = httpx.AsyncClient(
                timeout=DEFAULT_TIMEOUT, transport=ASpread(CAPACITY, _KEEPALIVE)
            )
            closer = _close_at_loop_shutdown(client)
            self._async_clients[loop] = (client, closer)
        await anext(closer)  # runs up to its `yield` without suspending: no other task interleaves
        return client

    def _detach(self) -> tuple[httpx.Client | None, AsyncGenerator[None, None] | None]:
        """Forget our clients; return the sync one and the current loop's closer to close."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            client, self._client = self._client, None
            entry = self._async_clients.pop(loop, None) if loop is not None else None
            # Other loops' clients close when their loop shuts down (see `_close_at_loop_shutdown`).
            self._async_clients.clear()
        return client, entry[1] if entry is not None else None


_POOLS: dict[PoolKey, SharedPool] = {}
_REGISTRY_LOCK = threading.Lock()
_DROPPED: deque[Lease] = deque()
"""Leases of collected Transports, returned at the next registry change: a finalizer can run in
the middle of one (any allocation may collect), while the lock is held."""


class Lease:
    """One Transport's use of a shared pool."""

    def __init__(self, pool: SharedPool) -> None:
        self.pool = pool
        self.returned = False

    def _return_locked(self, *, closing: bool) -> bool:
        """Return the lease; True when it was the pool's last and the pool is now unregistered."""
        if self.returned:
            return False
        self.returned = True
        pool = self.pool
        pool.leases -= 1
        if pool.leases > 0 or _POOLS.get(pool.key) is not pool:
            return False
        injected = pool.key.http_client is not None or pool.key.http_async_client is not None
        if closing or injected:  # injected clients are the caller's: their entry goes when unused
            del _POOLS[pool.key]
            return closing
        return False

    def _give_back(self) -> SharedPool | None:
        """Return the lease on close; the pool to close when this was its last lease."""
        with _REGISTRY_LOCK:
            _return_dropped_locked()
            last = self._return_locked(closing=True)
        return self.pool if last else None

    def dropped(self) -> None:
        """Garbage-collected without a close: keep the pool registered and open."""
        _DROPPED.append(self)

    def close(self) -> None:
        """Return the lease; the last one closes the sync client and forgets the async ones."""
        pool = self._give_back()
        if pool is not None:
            client, _ = pool._detach()  # the current loop's client closes with its loop
            if client is not None:
                client.close()

    async def aclose(self) -> None:
        """Return the lease; the last one also closes the current loop's async client."""
        pool = self._give_back()
        if pool is not None:
            client, closer = pool._detach()
            if closer is not None:
                await closer.aclose()
            if client is not None:
                client.close()


def _return_dropped_locked() -> None:
    while _DROPPED:
        _DROPPED.popleft()._return_locked(closing=False)


def lease(key: PoolKey, owner: object) -> Lease:
    """A lease on the pool for `key` (created on first use), returned when `owner` is collected."""
    with _REGISTRY_LOCK:
        _return_dropped_locked()
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = SharedPool(key)
        pool.leases += 1
    taken = Lease(pool)
    weakref.finalize(owner, taken.dropped)
    return taken
