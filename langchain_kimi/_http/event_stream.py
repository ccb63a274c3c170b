"""An open event stream: its first event (streams are retried until it arrives), the events
after it as (event name, data) pairs, and what happens to the rest of the body once the protocol's
end event has been read (sync and async twins; the bounds are the pool's: `pool.drains`).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from langchain_kimi._errors import KimiError
from langchain_kimi._http.pool.drains import Drain, Drains
from langchain_kimi._http.replies import (
    READ_FAILURES,
    ReadFailure,
    error_after_response,
    header_request_id,
)
from langchain_kimi._http.sse import Event

logger = logging.getLogger("langchain_kimi")


@functools.lru_cache(maxsize=16)
def host(base_url: str) -> str:
    # Parsing a URL costs ~60 µs; there are only one or two bases per model.
    return httpx.URL(base_url).host


def _wanted(sse: Event) -> bool:
    # Unnamed events are named "message"; an unnamed event without data is a keepalive,
    # not a protocol event.
    return bool(sse.data) or sse.event != "message"


@dataclass(frozen=True)
class Opened:
    """A 200 event stream whose first event has arrived (or that ended without one).

    Streams are retried until that first event: a connection lost between the response headers
    and the first event is retried like one lost before the headers.
    """

    response: httpx.Response
    events: Any  # the `_reading` event iterator (sync or async)
    first: Event | None


def first_wanted(events: Iterator[Event]) -> Event | None:
    for sse in events:
        if _wanted(sse):
            return sse
    return None


async def afirst_wanted(events: AsyncIterator[Event]) -> Event | None:
    async for sse in events:
        if _wanted(sse):
            return sse
    return None


class _OpenStream:
    def __init__(self, opened: Opened, base_url: str, *, secret: str) -> None:
        self._response = opened.response
        self._events = opened.events
        self._first = opened.first
        self.base_url = base_url
        self.request_id = header_request_id(opened.response.headers)
        self._secret = secret

    def _cut(self, exc: ReadFailure) -> KimiError:
        """The typed error for a stream whose reading failed after its first event."""
        return error_after_response(exc, host(self.base_url), secret=self._secret, streaming=True)


class EventStream(_OpenStream):
    """(event name, data) pairs of one open SSE response. Iterate once; nothing is retried.

    Its owner ends it with `close` (failed, or given up) or `finish` (the caller is done)."""

    def __init__(self, opened: Opened, base_url: str, *, secret: str) -> None:
        super().__init__(opened, base_url, secret=secret)
        self._pairs: Iterator[tuple[str, str]] | None = None

    def __iter__(self) -> Iterator[tuple[str, str]]:
        if self._pairs is None:
            self._pairs = self._read()
        return self._pairs

    def _read(self) -> Generator[tuple[str, str], None, None]:
        if self._first is None:
            return
        yield self._first.event, self._first.data
        try:
            for sse in self._events:
                if _wanted(sse):
                    yield sse.event, sse.data
        except READ_FAILURES as exc:
            error = self._cut(exc)
        else:
            return
        # Raised outside the except block: httpx errors hold the request (and its headers).
        raise error

    def close(self) -> None:
        """Close the event generators and the response (its connection is not reused)."""
        try:
            if isinstance(self._pairs, Generator):
                self._pairs.close()
            self._events.close()
        finally:
            self._response.close()

    def finish(self, drains: Drains, release: Callable[[], None]) -> None:
        """The caller is done with the events: read the rest of the body (usually just the
        chunked-encoding terminator) so the connection can be reused, close, then `release` the
        pool slot. A sync read cannot be bounded below the read timeout, so this happens on a
        short-lived thread, within the pool's drain bounds (`drains`); without a place there the
        connection is closed at once."""
        drain = drains.start(self._response)
        if drain is None:
            _closed_then(self.close, release)
            return
        try:
            threading.Thread(
                target=self._drain, args=(drain, release), name="langchain-kimi-drain", daemon=True
            ).start()
        except BaseException:
            drain.done()
            _closed_then(self.close, release)
            raise

    def _drain(self, drain: Drain, release: Callable[[], None]) -> None:
        try:
            for _ in itertools.islice(self._events, _DRAIN_EVENTS):
                pass
        except Exception as exc:  # nobody is left to tell: the answer was already complete
            logger.debug("ignored after the end of a stream: %s", type(exc).__name__)
        finally:
            drain.done()
            _closed_then(self.close, release)


class AsyncEventStream(_OpenStream):
    """Async twin of `EventStream`: the rest of the body is read inline (an async read can be
    bounded), then the stream is closed."""

    def __init__(self, opened: Opened, base_url: str, *, secret: str) -> None:
        super().__init__(opened, base_url, secret=secret)
        self._pairs: AsyncIterator[tuple[str, str]] | None = None

    def __aiter__(self) -> AsyncIterator[tuple[str, str]]:
        if self._pairs is None:
            self._pairs = self._read()
        return self._pairs

    async def _read(self) -> AsyncGenerator[tuple[str, str], None]:
        if self._first is None:
            return
        yield self._first.event, self._first.data
        try:
            async for sse in self._events:
                if _wanted(sse):
                    yield sse.event, sse.data
        except READ_FAILURES as exc:
            error = self._cut(exc)
        else:
            return
        raise error  # outside the except block, as in the sync twin

    async def aclose(self) -> None:
        """Close the event generators and the response (its connection is not reused). The
        generators are closed here, in order, never left to the garbage collector: a collected
        async generator is closed by a task of its own, which would find the event generator
        still running (drained meanwhile) and log "Task exception was never retrieved"."""
        try:
            if isinstance(self._pairs, AsyncGenerator):
                await self._pairs.aclose()
            await self._events.aclose()
        finally:
            await self._response.aclose()

    async def afinish(self, drains: Drains, release: Callable[[], None]) -> None:
        """`EventStream.finish`, inline: read the rest of the body for at most the drain time
        (not while the pool is full), close, then `release` the pool slot."""
        try:
            if drains.room():
                await self._drain(drains.seconds)
        finally:
            await _aclosed_then(self.aclose, release)

    async def _drain(self, seconds: float) -> None:
        """What the rest holds, a late failure, or silence are ignored: the answer is complete."""
        try:
            async with asyncio.timeout(seconds):
                async for _ in self._events:
                    pass
        except (TimeoutError, *READ_FAILURES):
            pass


def _closed_then(close: Callable[[], None], release: Callable[[], None]) -> None:
    """Close, then give the pool slot back, whatever the close raised."""
    try:
        close()
    finally:
        release()


async def _aclosed_then(close: Callable[[], Awaitable[None]], release: Callable[[], None]) -> None:
    try:
        await close()
    finally:
        release()


_DRAIN_EVENTS = 16
"""How many stray events a sync stream's background drain reads before giving the connection up."""
