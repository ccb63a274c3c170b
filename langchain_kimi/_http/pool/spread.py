"""Several connection pools behind one httpx transport: capacity that follows slow answers.

httpcore's pool checks every connection it keeps on each request it places (the idle-connection
scan in `_assign_requests_to_connections`): per request, cost grows with the pool's size, so one
pool of thousands of connections makes each request slower (measured: docs/benchmarks.md). A
gateway admitting 20 calls/s of 60 s answers needs 1,200 in flight, though. `Spread` places each
request on the first of its pools with room (fewer than `per_pool` requests in flight), opening a
new pool of `per_pool` connections when all are full: capacity grows with what the work needs,
each pool stays small. Requests are counted until their response is closed (a stream holds its
connection until then).
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Generic, TypeVar

import httpx

_Pool = TypeVar("_Pool")


class _Places(Generic[_Pool]):
    """Which pool takes the next request; shared by the sync and async transports."""

    def __init__(self, make: Callable[[], _Pool], per_pool: int) -> None:
        self._make = make
        self._per_pool = per_pool
        self._lock = threading.Lock()
        self.pools: list[_Pool] = []
        self.busy: list[int] = []

    def take(self) -> int:
        with self._lock:
            for index, busy in enumerate(self.busy):
                if busy < self._per_pool:
                    self.busy[index] += 1
                    return index
            self.pools.append(self._make())
            self.busy.append(1)
            return len(self.pools) - 1

    def give_back(self, index: int) -> None:
        with self._lock:
            self.busy[index] -= 1


class _Counted(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, done: Callable[[], None]) -> None:
        self._inner = inner
        self._done: Callable[[], None] | None = done

    def __iter__(self) -> Iterator[bytes]:
        yield from self._inner

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            if self._done is not None:
                done, self._done = self._done, None
                done()


class _ACounted(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, done: Callable[[], None]) -> None:
        self._inner = inner
        self._done: Callable[[], None] | None = done

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            if self._done is not None:
                done, self._done = self._done, None
                done()


class Spread(httpx.BaseTransport):
    """Sync transport over several `httpx.HTTPTransport` pools of `per_pool` connections."""

    def __init__(self, per_pool: int, keepalive: int, verify: ssl.SSLContext | bool = True) -> None:
        limits = httpx.Limits(max_connections=per_pool, max_keepalive_connections=keepalive)
        self._places = _Places(lambda: httpx.HTTPTransport(limits=limits, verify=verify), per_pool)

    @property
    def pools(self) -> int:
        return len(self._places.pools)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        index = self._places.take()
        try:
            response = self._places.pools[index].handle_request(request)
        except BaseException:
            self._places.give_back(index)
            raise
        assert isinstance(response.stream, httpx.SyncByteStream)
        response.stream = _Counted(response.stream, lambda: self._places.give_back(index))
        return response

    def close(self) -> None:
        for pool in list(self._places.pools):
            pool.close()


class ASpread(httpx.AsyncBaseTransport):
    """Async twin of `Spread`, over `httpx.AsyncHTTPTransport` pools."""

    def __init__(self, per_pool: int, keepalive: int, verify: ssl.SSLContext | bool = True) -> None:
        limits = httpx.Limits(max_connections=per_pool, max_keepalive_connections=keepalive)
        self._places = _Places(
            lambda: httpx.AsyncHTTPTransport(limits=limits, verify=verify), per_pool
        )

    @property
    def pools(self) -> int:
        return len(self._places.pools)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        index = self._places.take()
        try:
            response = await self._places.pools[index].handle_async_request(request)
        except BaseException:
            self._places.give_back(index)
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _ACounted(response.stream, lambda: self._places.give_back(index))
        return response

    async def aclose(self) -> None:
        for pool in list(self._places.pools):
            await pool.aclose()
