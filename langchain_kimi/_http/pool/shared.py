"""The registry of what ChatKimi models (their `Transport`s) share: connections per gateway,
admission per gateway and key.

A gateway (base URLs, the TLS and proxy settings a client takes from the environment, injected
clients) has one `connections.Connections` in this process, shared by every key: the key travels
in each request's header, as ChatOpenAI's default httpx client is shared per base URL. A
`SharedPool` is what is per gateway and key, because rate limits are per key: its `Admission`
(queue, slow start, pacing, cool-down) and its drains, in front of the gateway's connections. A
model created per request or per tenant reuses warm connections, costs no new client, and leaves no
unclosed client behind to raise `ResourceWarning` when it is garbage collected.

Each Transport holds a `Lease` on its key's pool (through its `PoolUse`). Closing a Transport
returns its lease; a key's last lease returned by an explicit close unregisters the key's pool, and
the gateway's clients are closed when that was the last lease of any key on the gateway, so
closing one model never breaks another (an unused pool still registered gets new clients at its
next use). A lease dropped by garbage collection is returned without closing anything: the
key's pool stays registered, warm for the next model, for `IDLE_SECONDS` (no Transport holds it,
so nothing is in flight); after that (at the next registry change) it is unregistered, and the
gateway's clients closed if it was the last. Idle connections themselves are capped and expire
on their own (`spread`); at interpreter exit the sync clients are closed (their sockets would
raise `ResourceWarning` when collected).

A forked child starts with an empty registry (`os.register_at_fork`): the parent's pools, their
kept-alive sockets and their admission state (calls in flight in the parent's threads) are never
used there; every Transport takes a lease on a fresh pool at its first call in the child, and the
parent's pool objects are dropped (their inherited file descriptors closed) as that happens.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from langchain_kimi._http.limits.admission import Admission
from langchain_kimi._http.pool.connections import CONNECTIONS_PER_POOL, Connections, environment
from langchain_kimi._http.pool.drains import Drains

__all__ = ["CONNECTIONS_PER_POOL", "GatewayKey", "PoolKey", "PoolUse", "SharedPool", "environment"]

CAPACITY = 200
"""Requests in flight per gateway and key to start with (the FIFO queue of `Admission` holds the
rest, so httpcore's own queue, which it rescans against every connection on each pool event, stays
empty). Slow answers grow it by this much at a time, up to `MAX_IN_FLIGHT`."""
MAX_IN_FLIGHT = 4_000
IDLE_SECONDS = 30.0
"""How long the pool of a key whose models are all gone (collected without `close`) stays
registered for the next use. One model per tenant key must not keep its state for ever."""


@dataclass(frozen=True)
class GatewayKey:
    """What one set of connections is for: where they go and how clients are made."""

    bases: tuple[str, ...]
    environment: tuple[tuple[str, str], ...]
    http_client: httpx.Client | None
    http_async_client: httpx.AsyncClient | None

    def __repr__(self) -> str:
        return f"GatewayKey(bases={self.bases!r})"


@dataclass(frozen=True)
class PoolKey:
    """What one admission is for: a gateway and a key (by digest), and how it paces."""

    bases: tuple[str, ...]
    key_digest: str
    adaptive: bool
    clock: Callable[[], float]
    http_client: httpx.Client | None
    http_async_client: httpx.AsyncClient | None
    environment: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def digest(api_key: str) -> str:
        """Admission is per key (rate limits are); the registry keeps a digest, never the key."""
        return hashlib.sha256(api_key.encode()).hexdigest()

    @property
    def gateway(self) -> GatewayKey:
        return GatewayKey(self.bases, self.environment, self.http_client, self.http_async_client)

    @property
    def injected(self) -> bool:
        return self.http_client is not None or self.http_async_client is not None

    def __repr__(self) -> str:
        return f"PoolKey(bases={self.bases!r}, adaptive={self.adaptive})"


class SharedPool:
    """The admission and drains of one `PoolKey`, in front of its gateway's connections.
    Thread-safe; usable from several loops."""

    def __init__(self, key: PoolKey, connections: Connections | None = None) -> None:
        self.key = key
        if connections is None:  # a pool of its own (tests, tools)
            connections = Connections(key.http_client, key.http_async_client)
        self.connections = connections
        self.admission = Admission(
            CAPACITY,
            adaptive=key.adaptive,
            clock=key.clock,
            max_capacity=CAPACITY if key.injected else MAX_IN_FLIGHT,  # the caller's limits stand
            can_fall_back=len(key.bases) > 1,
        )
        self.drains = Drains(self.admission)
        self.leases = 0
        self.unused_since: float | None = None
        """When its last lease was dropped (None while a Transport holds one)."""

    def __repr__(self) -> str:
        return f"SharedPool({self.key!r}, leases={self.leases}, {self.admission!r})"

    def sync_client(self) -> httpx.Client:
        return self.connections.sync_client()

    async def async_client(self) -> httpx.AsyncClient:
        return await self.connections.async_client()


_POOLS: dict[PoolKey, SharedPool] = {}
_GATEWAYS: dict[GatewayKey, Connections] = {}
"""The connections of each gateway with a registered pool (`Connections.users` counts them)."""
_REGISTRY_LOCK = threading.Lock()
_DROPPED: deque[Lease] = deque()
"""Leases of collected Transports, returned at the next registry change: a finalizer can run in
the middle of one (any allocation may collect), while the lock is held."""
_UNUSED: dict[PoolKey, SharedPool] = {}
"""Registered pools without a lease, oldest first: unregistered when unused for `IDLE_SECONDS`."""
_GENERATION = 0
"""Bumped in a forked child: leases taken before the fork (on the parent's pools) are stale."""


def _fresh_registry_in_child() -> None:
    global _POOLS, _GATEWAYS, _REGISTRY_LOCK, _DROPPED, _UNUSED, _GENERATION
    _POOLS = {}
    _GATEWAYS = {}
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


def _close_sync_clients_at_exit() -> None:
    with _REGISTRY_LOCK:
        gateways = list(_GATEWAYS.values())
    for connections in gateways:
        connections.close_sync()


atexit.register(_close_sync_clients_at_exit)


def _unregister_locked(pool: SharedPool) -> Connections | None:
    """Forget a key's pool; its gateway's connections when no other key's pool uses them."""
    del _POOLS[pool.key]
    _UNUSED.pop(pool.key, None)
    connections = pool.connections
    connections.users -= 1
    if connections.users or _GATEWAYS.get(pool.key.gateway) is not connections:
        return None
    del _GATEWAYS[pool.key.gateway]
    return connections


def _close(connections: Connections | None) -> None:
    """Close a gateway's sync client; other loops' clients close on their loops (`detach`)."""
    if connections is not None:
        client, _ = connections.detach()  # the current loop's client closes with its loop
        if client is not None:
            client.close()


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

    def _return_locked(self, *, closing: bool) -> Connections | None:
        """Return the lease; on a close, the gateway's connections when no lease of any key is
        left on them (a key's pool unused for a while may still be registered: its next model
        makes new clients)."""
        if self.returned:
            return None
        self.returned = True
        pool = self.pool
        pool.leases -= 1
        pool.connections.leases -= 1
        if pool.leases == 0 and _POOLS.get(pool.key) is pool:
            if closing or pool.key.injected:  # injected clients are the caller's: entry goes
                _unregister_locked(pool)
            else:
                pool.unused_since = time.monotonic()  # warm for the next model, for a while
                _UNUSED[pool.key] = pool
        return pool.connections if closing and not pool.connections.leases else None

    def _give_back(self) -> Connections | None:
        """Return the lease on close; the connections to close when nothing uses them any more."""
        with _REGISTRY_LOCK:
            _tidy_locked()
            return self._return_locked(closing=True)

    def dropped(self) -> None:
        """Garbage-collected without a close: keep the pool registered and open."""
        if self._generation == _GENERATION:  # a parent's pool is not registered here
            _DROPPED.append(self)

    def close(self) -> None:
        """Return the lease; the last one closes the sync client and forgets the async ones."""
        _close(self._give_back())

    async def aclose(self) -> None:
        """Return the lease; the last one also closes the current loop's async client."""
        connections = self._give_back()
        if connections is not None:
            client, closer = connections.detach()
            if closer is not None:
                await closer.aclose()
            if client is not None:
                client.close()


def _tidy_locked() -> None:
    """At every registry change: return the leases of collected Transports, then unregister the
    pools unused for `IDLE_SECONDS` (no Transport holds them, so nothing is in flight) and close
    the connections no registered pool uses any more."""
    while _DROPPED:
        _DROPPED.popleft()._return_locked(closing=False)
    now = time.monotonic()
    for pool in list(_UNUSED.values()):
        assert pool.unused_since is not None
        if now - pool.unused_since < IDLE_SECONDS:
            break  # the rest went unused later
        _close(_unregister_locked(pool))


def _lease_locked(key: PoolKey, owner: object) -> Lease:
    """A lease on the pool for `key` (created on first use, on its gateway's connections, which
    are created on the gateway's first use), returned when `owner` is collected."""
    _tidy_locked()
    pool = _POOLS.get(key)
    if pool is None:
        connections = _GATEWAYS.get(key.gateway)
        if connections is None:
            connections = _GATEWAYS[key.gateway] = Connections(
                key.http_client, key.http_async_client
            )
        connections.users += 1
        pool = _POOLS[key] = SharedPool(key, connections)
    elif pool.unused_since is not None:
        pool.unused_since = None
        del _UNUSED[key]
    pool.leases += 1
    pool.connections.leases += 1
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
