"""Many small connection pools behind one httpx transport: capacity that follows slow answers.

httpcore's pool scans every connection it keeps each time a request enters or a response closes
(`_assign_requests_to_connections`): each connection is checked for expiry (an idle one by probing
its socket through anyio, the costliest step in the profiles) and each idle one is counted against
the keep-alive limit by another pass over all of them. A request's cost therefore grows with its
pool's size, and one pool of hundreds of connections spends milliseconds per request (measured:
docs/benchmarks.md, "Many connections"). A gateway admitting 20 calls/s of 60 s answers needs 1,200
in flight, though.
`Spread` places each request on the first of its pools with room (fewer than `per_pool` requests
in flight), opening another pool when all are full: capacity grows with what the work needs, and
each request only ever meets the `per_pool` connections of its own pool.

Each pool keeps all of its connections alive (`max_keepalive_connections = per_pool`): httpcore
compares the number of *all* its connections, not of the idle ones, with that limit, so a lower
limit would close a connection as soon as it is idle whenever more are open. The keep-alive limits
are the spread's, over all of its pools:

- **a cap**: when more than `KEEPALIVE_CAP` connections are idle, the highest pools without a
  request in flight are closed at once (the lowest, which take the next requests, stay warm);
- **an expiry**: a pool without a request in flight whose connections have been idle for
  `KEEPALIVE_SECONDS` is closed, by a timer armed only while idle connections exist (a daemon
  thread for `Spread`, a timer of the client's event loop for `ASpread`). httpcore itself expires
  connections only when its pool is used again, and the higher pools seldom are.

A closed pool is replaced by an empty one at its place. Which connections are idle is counted
here, not asked of httpcore: a pool opens a connection only when all of its connections are busy,
so its connections are its most requests in flight at once, less those that failed.

Requests are counted until their response is closed (a stream holds its connection until then).
The sync and async transports share everything but the one call into their pool and the timer.
"""

from __future__ import annotations

import asyncio
import heapq
import ssl
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from types import TracebackType
from typing import Generic, TypeVar

import httpx

KEEPALIVE_CAP = 100
"""Idle connections a spread keeps at most. The openai client's cap (httpx's own is 20): a
`batch` or `abatch` of up to 100 at a time finds its connections warm the next time; more than
that idle is a burst past, closed at once (read when a spread is made)."""
KEEPALIVE_SECONDS = 5.0
"""How long an idle connection is kept: httpx's and the openai client's expiry (read when a
spread is made)."""

_Pool = TypeVar("_Pool")
_Body = httpx.SyncByteStream | httpx.AsyncByteStream


class _Places(Generic[_Pool]):
    """Which pool takes the next request (the first, lowest, pool with room), and which pools'
    idle connections are closed (over the cap, or expired). Thread-safe."""

    def __init__(self, make: Callable[[], _Pool], per_pool: int) -> None:
        self._make = make
        self._per_pool = per_pool
        self._lock = threading.Lock()
        self.pools: list[_Pool] = []
        self.busy: list[int] = []
        self.connections: list[int] = []  # each pool's, as counted here (see the module's doc)
        self.freed: list[float] = []  # when each pool last had a request finish
        self.idle = 0  # connections without a request, over all pools
        self._with_room: list[int] = []  # heap of the indexes of the pools with room

    def take(self) -> int:
        with self._lock:
            if self._with_room:
                index = self._with_room[0]
                self.busy[index] += 1
                if self.busy[index] == self._per_pool:
                    heapq.heappop(self._with_room)
            else:
                index = len(self.pools)
                self.pools.append(self._make())
                self.busy.append(1)
                self.connections.append(0)
                self.freed.append(0.0)
                if self._per_pool > 1:
                    heapq.heappush(self._with_room, index)
            if self.busy[index] <= self.connections[index]:
                self.idle -= 1  # an idle connection of the pool takes it
            else:
                self.connections[index] += 1  # the pool opens one
            return index

    def give_back(self, index: int, *, kept: bool = True, cap: int | None = None) -> list[_Pool]:
        """Free a place; `kept`: its connection stays open (False: the request failed, its
        connection, if any, closed). Returns the pools to close to keep at most `cap` idle."""
        with self._lock:
            if self.busy[index] == self._per_pool:
                heapq.heappush(self._with_room, index)
            self.busy[index] -= 1
            self.freed[index] = time.monotonic()
            if kept:
                self.idle += 1
            elif self.connections[index]:
                self.connections[index] -= 1
            if cap is None or self.idle <= cap:
                return []
            closing = []
            for spare in range(len(self.pools) - 1, -1, -1):
                if self.idle <= cap:
                    break
                if self.busy[spare] == 0 and self.connections[spare]:
                    closing.append(self._replace_locked(spare))
            return closing

    def expired(self, seconds: float) -> list[_Pool]:
        """The pools without a request whose connections have been idle for `seconds`."""
        now = time.monotonic()
        with self._lock:
            return [
                self._replace_locked(index)
                for index, freed in enumerate(self.freed)
                if not self.busy[index] and self.connections[index] and now - freed >= seconds
            ]

    def next_expiry_locked(self, seconds: float) -> float | None:
        """When the next idle pool expires; None when none can (a pool in use expires its idle
        connections itself, when its request ends)."""
        return min(
            (
                freed + seconds
                for index, freed in enumerate(self.freed)
                if not self.busy[index] and self.connections[index]
            ),
            default=None,
        )

    def _replace_locked(self, index: int) -> _Pool:
        """An idle pool out (to close: no request of ours is in it), an empty one in."""
        pool, self.pools[index] = self.pools[index], self._make()
        self.idle -= self.connections[index]
        self.connections[index] = 0
        return pool

    def take_all(self) -> list[_Pool]:
        with self._lock:
            return list(self.pools)


class _Placed(Generic[_Pool]):
    """One request's place, from `take` to the close of its response (or to its failure)."""

    __slots__ = ("_places", "index", "pool")

    def __init__(self, places: _Places[_Pool]) -> None:
        self._places = places
        self.index = places.take()
        self.pool = places.pools[self.index]

    def __enter__(self) -> _Placed[_Pool]:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is not None:  # no response: the place is free again
            self._places.give_back(self.index, kept=False)


class _SyncCounted(httpx.SyncByteStream):
    """A response body whose first close frees its place."""

    def __init__(self, inner: _Body, spread: Spread, index: int) -> None:
        assert isinstance(inner, httpx.SyncByteStream)  # a sync pool's
        self._inner = inner
        self._spread: Spread | None = spread
        self._index = index

    def __iter__(self) -> Iterator[bytes]:  # the inner iterator itself: no layer per chunk
        return iter(self._inner)

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            spread, self._spread = self._spread, None
            if spread is not None:
                spread._freed(self._index)


class _AsyncCounted(httpx.AsyncByteStream):
    """A response body whose first close frees its place."""

    def __init__(self, inner: _Body, spread: ASpread, index: int) -> None:
        assert isinstance(inner, httpx.AsyncByteStream)  # an async pool's
        self._inner = inner
        self._spread: ASpread | None = spread
        self._index = index

    def __aiter__(self) -> AsyncIterator[bytes]:
        return aiter(self._inner)

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            spread, self._spread = self._spread, None
            if spread is not None:
                await spread._afreed(self._index)


class _Spread(Generic[_Pool]):
    """What both transports are: pools of `per_pool` connections, opened as needed."""

    def __init__(
        self, pool: Callable[..., _Pool], per_pool: int, verify: ssl.SSLContext | bool
    ) -> None:
        self._cap = KEEPALIVE_CAP
        self._seconds = KEEPALIVE_SECONDS
        limits = httpx.Limits(
            max_connections=per_pool,
            max_keepalive_connections=per_pool,
            keepalive_expiry=self._seconds,
        )
        self._places: _Places[_Pool] = _Places(lambda: pool(limits=limits, verify=verify), per_pool)
        self._closed = False

    @property
    def pools(self) -> int:
        return len(self._places.pools)

    @property
    def idle(self) -> int:
        """Connections kept alive without a request (as counted: see the module's doc)."""
        return self._places.idle

    def _pools(self) -> list[_Pool]:
        return self._places.take_all()


class Spread(_Spread[httpx.HTTPTransport], httpx.BaseTransport):
    """Sync transport over `httpx.HTTPTransport` pools of `per_pool` connections."""

    def __init__(self, per_pool: int, verify: ssl.SSLContext | bool = True) -> None:
        super().__init__(httpx.HTTPTransport, per_pool, verify)
        self._timer: threading.Timer | None = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with _Placed(self._places) as place:
            response = place.pool.handle_request(request)
        response.stream = _SyncCounted(response.stream, self, place.index)
        return response

    def _freed(self, index: int) -> None:
        for pool in self._places.give_back(index, cap=self._cap):
            pool.close()
        self._arm()

    def _arm(self) -> None:
        """Start the expiry timer, unless it runs or nothing idle can expire."""
        with self._places._lock:
            if self._timer is not None or self._closed or not self._places.idle:
                return
            due = self._places.next_expiry_locked(self._seconds)
            if due is None:
                return
            timer = self._timer = threading.Timer(max(0.0, due - time.monotonic()), self._expire)
        timer.name, timer.daemon = "langchain-kimi-keepalive", True
        timer.start()

    def _expire(self) -> None:
        for pool in self._places.expired(self._seconds):
            pool.close()
        with self._places._lock:
            self._timer = None
        self._arm()

    def close(self) -> None:
        with self._places._lock:
            self._closed = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        for pool in self._pools():
            pool.close()


class ASpread(_Spread[httpx.AsyncHTTPTransport], httpx.AsyncBaseTransport):
    """Async transport over `httpx.AsyncHTTPTransport` pools of `per_pool` connections, all on the
    event loop of its first request (as httpx's own pools are)."""

    def __init__(self, per_pool: int, verify: ssl.SSLContext | bool = True) -> None:
        super().__init__(httpx.AsyncHTTPTransport, per_pool, verify)
        self._timer: asyncio.TimerHandle | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self.keeper: object = None
        """Kept alive as long as this transport is (the shared pool's record of its client)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        with _Placed(self._places) as place:
            response = await place.pool.handle_async_request(request)
        response.stream = _AsyncCounted(response.stream, self, place.index)
        return response

    async def _afreed(self, index: int) -> None:
        for pool in self._places.give_back(index, cap=self._cap):
            await pool.aclose()
        self._arm()

    def _arm(self) -> None:
        """Start the expiry timer on our loop (we run on it), unless it is set or nothing idle can
        expire. The loop holds the timer, the timer this transport: a loop dropped unclosed is
        collected with its connections (nothing outside the loop keeps them)."""
        if self._timer is not None or self._closed or not self._places.idle:
            return
        with self._places._lock:
            due = self._places.next_expiry_locked(self._seconds)
        if due is not None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(max(0.0, due - time.monotonic()), self._expire)

    def _expire(self) -> None:
        self._timer = None
        closing = self._places.expired(self._seconds)
        if closing:
            task = asyncio.get_running_loop().create_task(self._aclose_pools(closing))
            self._closing.add(task)  # the loop keeps only a weak reference to a task
            task.add_done_callback(self._closing.discard)
        self._arm()

    @staticmethod
    async def _aclose_pools(pools: list[httpx.AsyncHTTPTransport]) -> None:
        for pool in pools:
            await pool.aclose()

    async def aclose(self) -> None:
        self._closed = True
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        for pool in self._pools():
            await pool.aclose()
