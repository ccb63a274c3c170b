"""Reading a response under deadlines: a whole JSON body, or the events of a stream.

httpx's read timeout bounds each socket read, so a server that trickles a byte now and then is
never timed out by it. The loops (`_async/reading.py`, and
`_sync/reading.py` generated from it) add the two deadlines `docs/errors.md` states, both equal to
the read timeout (`None` disables them):

- a non-streamed body must be complete within `read` seconds of the response headers;
- in a stream, each event must be complete within `read` seconds of the previous one (of the
  response headers for the first).

A deadline is checked whenever bytes arrive; silence is still ended by httpx's read timeout. On
expiry they raise `httpx.ReadTimeout`, so the transport handles it like any read timeout. Bodies
are kept as bytes (orjson parses a reply from them; an error's text is decoded as UTF-8) and events
are decoded as UTF-8, whatever charset the Content-Type names (RFC 8259 §8.1; SSE is UTF-8 by
definition).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx


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


BODY_LATE = "the reply was not complete"
EVENT_LATE = "no complete event"
