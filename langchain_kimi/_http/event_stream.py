"""An open event stream: its first event (streams are retried until it arrives), the events
after it as (event name, data) pairs, and what happens to the rest of the body once the protocol's
end event has been read (within bounds: `drain.py`).

The streams themselves are `_async/event_stream.py` and `_sync/event_stream.py` (generated from
it by `tools/unasync.py`); this module holds what they share, and the one part that differs by
nature: the drain, inline when async (an async read can be bounded), on a short-lived thread when
sync.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from langchain_kimi._errors import KimiError, KimiForkedStreamError
from langchain_kimi._http.config import host
from langchain_kimi._http.drain import DRAIN_EVENTS, DRAIN_SECONDS, drain_in_background
from langchain_kimi._http.replies import (
    READ_FAILURES,
    ReadFailure,
    error_after_response,
    header_request_id,
)
from langchain_kimi._http.sse import Event


def wanted(sse: Event) -> bool:
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
    events: Any  # the `reading` event iterator (sync or async)
    first: Event | None


SyncPairs = Generator[tuple[str, str], None, None]
AsyncPairs = AsyncGenerator[tuple[str, str], None]
"""The (event name, data) pairs a stream yields."""


class OpenStream:
    """What both halves' event streams hold: the response, its event iterator, its first event."""

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


def drain_then_close(
    events: Iterator[Event], close: Callable[[], None], response: httpx.Response
) -> None:
    """Read the rest of the body (usually just the chunked-encoding terminator) so the connection
    can be reused, then `close`: on a short-lived thread, within bounds (`drain.py`)."""
    drain_in_background(response, events, close)


async def adrain_then_close(
    events: AsyncIterator[Event],
    close: Callable[[], Awaitable[None]],
    response: httpx.Response,  # noqa: ARG001
) -> None:
    """`drain_then_close`, inline: read the rest for at most `DRAIN_SECONDS` and `DRAIN_EVENTS`
    events; what it holds, a late failure, or silence are ignored: the answer is complete."""
    try:
        with contextlib.suppress(TimeoutError, KimiForkedStreamError, *READ_FAILURES):
            async with asyncio.timeout(DRAIN_SECONDS):
                count = 0
                async for _ in events:
                    count += 1
                    if count >= DRAIN_EVENTS:
                        break
    finally:
        await close()
