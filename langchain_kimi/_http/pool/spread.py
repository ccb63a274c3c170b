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
limit would close a connection as soon as it is idle whenever more are open.

Requests are counted until their response is closed (a stream holds its connection until then).
The sync and async transports share everything but the one call into their pool.
"""

from __future__ import annotations

import functools
import heapq
import ssl
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from types import TracebackType
from typing import Generic, TypeVar

import httpx

_Pool = TypeVar("_Pool")
_Body = httpx.SyncByteStream | httpx.AsyncByteStream


class _Places(Generic[_Pool]):
    """Which pool takes the next request: the first (lowest) pool with room. Thread-safe."""

    def __init__(self, make: Callable[[], _Pool], per_pool: int) -> None:
        self._make = make
        self._per_pool = per_pool
        self._lock = threading.Lock()
        self.pools: list[_Pool] = []
        self.busy: list[int] = []
        self._with_room: list[int] = []  # heap of the indexes of the pools with room

    def take(self) -> int:
        with self._lock:
            if self._with_room:
                index = self._with_room[0]
                self.busy[index] += 1
                if self.busy[index] == self._per_pool:
                    heapq.heappop(self._with_room)
                return index
            index = len(self.pools)
            self.pools.append(self._make())
            self.busy.append(1)
            if self._per_pool > 1:
                heapq.heappush(self._with_room, index)
            return index

    def give_back(self, index: int) -> None:
        with self._lock:
            if self.busy[index] == self._per_pool:
                heapq.heappush(self._with_room, index)
            self.busy[index] -= 1


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
            self._places.give_back(self.index)

    def counted(
        self, response: httpx.Response, body: Callable[[_Body, Callable[[], None]], _Body]
    ) -> httpx.Response:
        """The response, whose body (`body`: its pool's kind) gives the place back when closed."""
        give_back = functools.partial(self._places.give_back, self.index)
        response.stream = body(response.stream, give_back)
        return response


class _Counted:
    """A response body whose first close frees its place (`_SyncCounted`, `_AsyncCounted`)."""

    def __init__(self, done: Callable[[], None]) -> None:
        self._done: Callable[[], None] | None = done

    def _freed(self) -> None:
        done, self._done = self._done, None
        if done is not None:
            done()


class _SyncCounted(_Counted, httpx.SyncByteStream):
    def __init__(self, inner: _Body, done: Callable[[], None]) -> None:
        super().__init__(done)
        assert isinstance(inner, httpx.SyncByteStream)  # a sync pool's
        self._inner = inner

    def __iter__(self) -> Iterator[bytes]:  # the inner iterator itself: no layer per chunk
        return iter(self._inner)

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._freed()


class _AsyncCounted(_Counted, httpx.AsyncByteStream):
    def __init__(self, inner: _Body, done: Callable[[], None]) -> None:
        super().__init__(done)
        assert isinstance(inner, httpx.AsyncByteStream)  # an async pool's
        self._inner = inner

    def __aiter__(self) -> AsyncIterator[bytes]:
        return aiter(self._inner)

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            self._freed()


class _Spread(Generic[_Pool]):
    """What both transports are: pools of `per_pool` connections, opened as needed."""

    def __init__(
        self, pool: Callable[..., _Pool], per_pool: int, verify: ssl.SSLContext | bool
    ) -> None:
        limits = httpx.Limits(max_connections=per_pool, max_keepalive_connections=per_pool)
        self._places: _Places[_Pool] = _Places(lambda: pool(limits=limits, verify=verify), per_pool)

    @property
    def pools(self) -> int:
        return len(self._places.pools)

    def _pools(self) -> list[_Pool]:
        with self._places._lock:
            return list(self._places.pools)


class Spread(_Spread[httpx.HTTPTransport], httpx.BaseTransport):
    """Sync transport over `httpx.HTTPTransport` pools of `per_pool` connections."""

    def __init__(self, per_pool: int, verify: ssl.SSLContext | bool = True) -> None:
        super().__init__(httpx.HTTPTransport, per_pool, verify)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with _Placed(self._places) as place:
            response = place.pool.handle_request(request)
        return place.counted(response, _SyncCounted)

    def close(self) -> None:
        for pool in self._pools():
            pool.close()


class ASpread(_Spread[httpx.AsyncHTTPTransport], httpx.AsyncBaseTransport):
    """Async transport over `httpx.AsyncHTTPTransport` pools of `per_pool` connections."""

    def __init__(self, per_pool: int, verify: ssl.SSLContext | bool = True) -> None:
        super().__init__(httpx.AsyncHTTPTransport, per_pool, verify)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        with _Placed(self._places) as place:
            response = await place.pool.handle_async_request(request)
        return place.counted(response, _AsyncCounted)

    async def aclose(self) -> None:
        for pool in self._pools():
            await pool.aclose()
