"""An open event stream: its first event (streams are retried until it arrives), the events
after it as (event name, data) pairs, and what happens to the rest of the body once the protocol's
end event has been read (sync and async twins).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from langchain_kimi._errors import KimiError
from langchain_kimi._http.config import host
from langchain_kimi._http.replies import (
    READ_FAILURES,
    ReadFailure,
    error_after_response,
    header_request_id,
)
from langchain_kimi._http.sse import Event

logger = logging.getLogger("langchain_kimi")


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
    """(event name, data) pairs of one open SSE response. Iterate once; nothing is retried."""

    def __iter__(self) -> Iterator[tuple[str, str]]:
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

    def drain_in_background(self) -> None:
        """After the end event: read what is left of the body (usually just the chunked-encoding
        terminator) on a daemon thread, then close it, so the connection goes back to the pool.

        A sync read cannot be bounded below the read timeout, so the caller never waits for this;
        the thread itself is bounded by the event deadline (a silent or trickling server) and by
        `_DRAIN_EVENTS` (a server that keeps sending)."""
        threading.Thread(target=self._drain, name="langchain-kimi-drain", daemon=True).start()

    def _drain(self) -> None:
        try:
            for _ in itertools.islice(self._events, _DRAIN_EVENTS):
                pass
        except Exception as exc:  # nobody is left to tell: the answer was already complete
            logger.debug("ignored after the end of a stream: %s", type(exc).__name__)
        finally:
            self._response.close()


class AsyncEventStream(_OpenStream):
    """Async twin of `EventStream`."""

    async def __aiter__(self) -> AsyncIterator[tuple[str, str]]:
        try:
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
        finally:
            await self._events.aclose()

    async def drain(self) -> None:
        """Read what is left of the body (after the end event, usually just the chunked-encoding
        terminator) for at most `_DRAIN_SECONDS`, so the connection can go back to the pool.
        What it holds, a late failure, or silence are ignored: the answer is complete."""
        try:
            async with asyncio.timeout(_DRAIN_SECONDS):
                async for _ in self._events:
                    pass
        except (TimeoutError, *READ_FAILURES):
            pass


_DRAIN_SECONDS = 0.05
"""How long an async stream reads on after its end event (inline: an async read can be bounded)."""
_DRAIN_EVENTS = 16
"""How many stray events a sync stream's background drain reads before giving the connection up."""
