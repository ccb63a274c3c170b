"""Reading a response under deadlines: a whole JSON body, or the events of a stream.

httpx's read timeout bounds each socket read, so a server that trickles a byte now and then is
never timed out by it. These loops add the two deadlines `docs/errors.md` states, both equal to
the read timeout (`None` disables them):

- a non-streamed body must be complete within `read` seconds of the response headers;
- in a stream, each event must be complete within `read` seconds of the previous one (of the
  response headers for the first).

A deadline is checked whenever bytes arrive; silence is still ended by httpx's read timeout. On
expiry they raise `httpx.ReadTimeout`, so the transport handles it like any read timeout. Bodies
and events are decoded as UTF-8, whatever charset the Content-Type names (RFC 8259 §8.1; SSE is
UTF-8 by definition).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator

import httpx

from langchain_kimi._http.replies import READ_FAILURES, ReadFailure
from langchain_kimi._http.sse import Event, EventParser


class Deadline:
    """`seconds` from now (or from the last `restart`); never expires when `seconds` is None."""

    def __init__(
        self, seconds: float | None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._seconds = seconds
        self._clock = clock
        self._start = clock()

    def restart(self) -> None:
        self._start = self._clock()

    def check(self, request: httpx.Request, what: str) -> None:
        """Raise `httpx.ReadTimeout` if the deadline has passed."""
        if self._seconds is not None and self._clock() - self._start > self._seconds:
            msg = f"{what} within {self._seconds:g} s"
            raise httpx.ReadTimeout(msg, request=request)


_BODY_LATE = "the reply was not complete"
_EVENT_LATE = "no complete event"


def read_body(response: httpx.Response, seconds: float | None) -> tuple[str, ReadFailure | None]:
    """The body as text, and the failure that cut it short (the text then holds what arrived)."""
    deadline = Deadline(seconds)
    parts: list[bytes] = []
    try:
        for chunk in response.iter_bytes():
            parts.append(chunk)
            deadline.check(response.request, _BODY_LATE)
    except READ_FAILURES as exc:
        return _text(parts), exc
    return _text(parts), None


async def aread_body(
    response: httpx.Response, seconds: float | None
) -> tuple[str, ReadFailure | None]:
    """Async twin of `read_body`."""
    deadline = Deadline(seconds)
    parts: list[bytes] = []
    try:
        async for chunk in response.aiter_bytes():
            parts.append(chunk)
            deadline.check(response.request, _BODY_LATE)
    except READ_FAILURES as exc:
        return _text(parts), exc
    return _text(parts), None


def _text(parts: list[bytes]) -> str:
    return b"".join(parts).decode("utf-8", "replace")


def iter_events(response: httpx.Response, seconds: float | None) -> Iterator[Event]:
    """The events of an SSE response as they complete; raises httpx errors as httpx does."""
    parser = EventParser()
    deadline = Deadline(seconds)
    for chunk in response.iter_bytes():
        events = parser.feed(chunk)
        if not events:
            deadline.check(response.request, _EVENT_LATE)
            continue
        yield from events
        # Restarted after the caller took the events: its own time is not the server's delay.
        deadline.restart()


async def aiter_events(response: httpx.Response, seconds: float | None) -> AsyncIterator[Event]:
    """Async twin of `iter_events`."""
    parser = EventParser()
    deadline = Deadline(seconds)
    async for chunk in response.aiter_bytes():
        events = parser.feed(chunk)
        if not events:
            deadline.check(response.request, _EVENT_LATE)
            continue
        for event in events:
            yield event
        deadline.restart()
