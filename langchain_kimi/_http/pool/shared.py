"""Connection pools shared by every ChatKimi (every `Transport`) with the same settings.

A pool is the httpx clients (one sync client, one async client per event loop: httpx connections
are bound to the loop that opened them) plus the `Admission` in front of them. Pools are shared
per (base URLs, API key, adaptive flag, clock, injected clients), as ChatOpenAI shares its default
httpx clients: a model created per request reuses warm connections, costs no new client, and
leaves no unclosed client behind to raise `ResourceWarning` when it is garbage collected. Sharing
the pool also shares what the gateway said about its rate limit, which is per key.

Each Transport holds a `Lease` (through its `PoolUse`). Closing a Transport returns its lease; the
pool's clients are closed only when the last lease is returned by an explicit close, so closing one
model never breaks another that shares its pool. A lease dropped by garbage collection is returned
without closing anything: the pool stays registered, warm for the next model, for `IDLE_SECONDS`;
after that (at the next registry change) it is unregistered and its connections closed. An event
loop that stopped running keeps its async client as long; a closed loop's is forgotten at once.

A forked child starts with an empty registry (`os.register_at_fork`): the parent's pools, their
kept-alive sockets and their admission state (calls in flight in the parent's threads) are never
used there; every Transport takes a lease on a fresh pool at its first call in the child, and the
parent's pool objects are dropped (their inherited file descriptors closed) as that happens.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import os
import ssl
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass

import httpx

from langchain_kimi._http.config import DEFAULT_TIMEOUT
from langchain_kimi._http.limits.admission import Admission
from langchain_kimi._http.pool.drains import Drains
from langchain_kimi._http.pool.spread import ASpread, Spread

CAPACITY = 200
"""Requests in flight per shared pool to start with (the FIFO queue of `Admission` holds the rest,
so httpcore's own queue, which it rescans against every connection on each pool event, stays
empty). Slow answers grow it by this much at a time, up to `MAX_IN_FLIGHT`."""
MAX_IN_FLIGHT = 4_000
CONNECTIONS_PER_POOL = 2
"""Connections per httpcore pool behind the clients (`spread.Spread` opens as many such pools as the
requests in flight need): httpcore's cost per request grows with the connections of its pool, so
they stay few. Measured on loopback, client CPU per `ainvoke` at 100 concurrent: 6.2 ms with one
200-connection pool, 2.9 ms with pools of 16, 2.1 ms of 8, 1.4-1.5 ms of 4 or 2, 1.2 ms of 1; at 500
and 2,000 concurrent, 1.5-1.8 ms for 1, 2 and 4 (docs/benchmarks.md, "Many connections")."""
IDLE_SECONDS = 30.0
"""How long a pool whose models are all gone (collected without `close`), or the client of an
event loop that is not running, stays open for the next use. One model per tenant key or one event
loop per request must not keep their connections (file descriptors, buffers) for ever."""
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


def _tls_context() -> ssl.SSLContext:
    """One TLS context for every client of every pool: httpx would build one per client, and
    loading the CA bundle takes ~90 ms, paid by every `asyncio.run` (a new loop needs a new client).
    Keyed by the two variables httpx's default context honours, so setting them still works."""
    return _tls_context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=4)
def _tls_context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:  # noqa: ARG001
    # The arguments are the cache key only: httpx reads the same two variables itself.
    return httpx.create_ssl_context()


class _LoopClient:
    """One event loop's client, the parked generator that closes it, and when it was last used."""

    __slots__ = ("client", "closer", "used")

    def __init__(self, client: httpx.AsyncClient, closer: AsyncGenerator[None, None]) -> None:
        self.client = client
        self.closer = closer
        self.used = time.monotonic()


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
        self.drains = Drains(self.admission)
        self.leases = 0
        self.unused_since: float | None = None
        """When its last lease was dropped (None while a Transport holds one)."""
        self._client: httpx.Client | None = None
        # Weak keys are not enough on their own: a client's connections refer to their loop, so
        # an entry keeps its loop alive; `_forget_gone_loops_locked` lets it go.
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClient] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SharedPool({self.key!r}, leases={self.leases}, {self.admission!r})"

    def sync_client(self) -> httpx.Client:
        if self.key.http_client is not None:
            return self.key.http_client
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    timeout=DEFAULT_TIMEOUT, transport=Spread(CONNECTIONS_PER_POOL, _tls_context())
                )
            return self._client

    async def async_client(self) -> httpx.AsyncClient:
        if self.key.http_async_client is not None:
            return self.key.http_async_client
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._async_clients.get(loop)
            if entry is not None:
                entry.used = time.monotonic()
                return entry.client
            self._forget_gone_loops_locked()
            client = httpx.AsyncClient(
                timeout=DEFAULT_TIMEOUT, transport=ASpread(CONNECTIONS_PER_POOL, _tls_context())
            )
            entry = self._async_clients[loop] = _LoopClient(client, _close_at_loop_shutdown(client))
        await anext(entry.closer)  # runs up to its `yield` without suspending: nothing interleaves
        return entry.client

    def _forget_gone_loops_locked(self) -> None:
        """Drop the clients of closed loops (their connections died with them; they cannot be
        closed from another loop) and of loops not running for `IDLE_SECONDS`: forgotten, the
        closer's finalizer closes the client on its loop if it runs again, and a loop dropped
        without `close()` is collected with its client instead of being kept alive by it."""
        now = time.monotonic()
        for loop, entry in list(self._async_clients.items()):
            if loop.is_closed() or (not loop.is_running() and now - entry.used >= IDLE_SECONDS):
                del self._async_clients[loop]

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
        return client, entry.closer if entry is not None else None


_POOLS: dict[PoolKey, SharedPool] = {}
_REGISTRY_LOCK = threading.Lock()
_DROPPED: deque[Lease] = deque()
"""Leases of collected Transports, returned at the next registry change: a finalizer can run in
the middle of one (any allocation may collect), while the lock is held."""
_UNUSED: dict[PoolKey, SharedPool] = {}
"""Registered pools without a lease, oldest first: closed when unused for `IDLE_SECONDS`."""
_GENERATION = 0
"""Bumped in a forked child: leases taken before the fork (on the parent's pools) are stale."""


def _fresh_registry_in_child() -> None:
    global _POOLS, _REGISTRY_LOCK, _DROPPED, _UNUSED, _GENERATION
    _POOLS = {}
    _DROPPED = deque()
    _UNUSED = {}
    _GENERATION += 1
    _REGISTRY_LOCK = threading.Lock()  # the parent's is held by the fork (`before` below)


# No registry change is half done in the child: the forking thread holds the lock across the fork.
os.register_at_fork(
    before=lambda: _REGISTRY_LOCK.acquire(),
    after_in_parent=lambda: _REGISTRY_LOCK.release(),
    after_in_child=_fresh_registry_in_child,
)


class Lease:
    """One Transport's share of a shared pool (of this process: see `current`)."""

    def __init__(self, pool: SharedPool) -> None:
        self.pool = pool
        self.returned = False
        self._generation = _GENERATION

    @property
    def current(self) -> bool:
        """Not returned, and taken in this process (not inherited through a fork)."""
        return not self.returned and self._generation == _GENERATION

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
            _UNUSED.pop(pool.key, None)
            return closing
        pool.unused_since = time.monotonic()  # warm for the next model, for a while
        _UNUSED[pool.key] = pool
        return False

    def _give_back(self) -> SharedPool | None:
        """Return the lease on close; the pool to close when this was its last lease."""
        with _REGISTRY_LOCK:
            _tidy_locked()
            last = self._return_locked(closing=True)
        return self.pool if last else None

    def dropped(self) -> None:
        """Garbage-collected without a close: keep the pool registered and open."""
        if self._generation == _GENERATION:  # a parent's pool is not registered here
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


def _tidy_locked() -> None:
    """At every registry change: return the leases of collected Transports, then unregister and
    close the pools unused for `IDLE_SECONDS` (no Transport holds them, so nothing is in flight;
    other loops' clients close on their loops: see `_detach`)."""
    while _DROPPED:
        _DROPPED.popleft()._return_locked(closing=False)
    now = time.monotonic()
    for key, pool in list(_UNUSED.items()):
        assert pool.unused_since is not None
        if now - pool.unused_since < IDLE_SECONDS:
            break  # the rest went unused later
        del _UNUSED[key], _POOLS[key]
        client, _ = pool._detach()
        if client is not None:
            client.close()


def _lease_locked(key: PoolKey, owner: object) -> Lease:
    """A lease on the pool for `key` (created on first use), returned when `owner` is collected."""
    _tidy_locked()
    pool = _POOLS.get(key)
    if pool is None:
        pool = _POOLS[key] = SharedPool(key)
    elif pool.unused_since is not None:
        pool.unused_since = None
        del _UNUSED[key]
    pool.leases += 1
    taken = Lease(pool)
    weakref.finalize(owner, taken.dropped)
    return taken


class PoolUse:
    """One Transport's way to its shared pool: a lease taken at first use, and taken again after
    a close or in a forked child. Threads sharing one Transport share one lease."""

    def __init__(self, key: PoolKey) -> None:
        self.key = key
        self._lease: Lease | None = None

    def pool(self) -> SharedPool:
        lease = self._lease
        if lease is None or not lease.current:
            with _REGISTRY_LOCK:
                if self._lease is None or not self._lease.current:
                    self._lease = _lease_locked(self.key, owner=self)
                lease = self._lease
        return lease.pool

    def _take(self) -> Lease | None:
        with _REGISTRY_LOCK:
            lease, self._lease = self._lease, None
        return lease if lease is not None and lease.current else None

    def close(self) -> None:
        lease = self._take()
        if lease is not None:
            lease.close()

    async def aclose(self) -> None:
        lease = self._take()
        if lease is not None:
            await lease.aclose()
