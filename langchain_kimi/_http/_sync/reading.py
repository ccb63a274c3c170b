# Generated from _async/reading.py by tools/unasync.py: do not edit.
"""Reading a response under deadlines (see `_http/reading.py`): the loops.

`_http/_async/` is the source, `_http/_sync/` is generated from it by `tools/unasync.py`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx

from langchain_kimi._errors import KimiForkedStreamError
from langchain_kimi._http.reading import BODY_LATE, EVENT_LATE, Deadline
from langchain_kimi._http.replies import READ_FAILURES, ReadFailure
from langchain_kimi._http.sse import Event, EventParser


def read_body(response: httpx.Response, seconds: float | None) -> tuple[bytes, ReadFailure | None]:
    """The body, and the failure that cut it short (the body then holds what arrived)."""
    deadline = Deadline(seconds)
    parts: list[bytes] = []
    try:
        for chunk in response.iter_bytes():
            parts.append(chunk)
            deadline.check(response.request, BODY_LATE)
    except READ_FAILURES as exc:
        return b"".join(parts), exc
    return b"".join(parts), None


def iter_events(response: httpx.Response, seconds: float | None) -> Iterator[Event]:
    """The events of an SSE response as they complete; raises httpx errors as httpx does."""
    parser = EventParser()
    deadline = Deadline(seconds)
    chunks, begun = response.iter_bytes(), os.getpid()
    while True:
        if os.getpid() != begun:  # a fork's child: the connection is shared, read none of it
            raise KimiForkedStreamError.begun_in(begun)
        try:
            chunk = chunks.__next__()
        except StopIteration:
            return
        events = parser.feed(chunk)
        if not events:
            deadline.check(response.request, EVENT_LATE)
            continue
        for event in events:
            yield event
        # Restarted after the caller took the events: its own time is not the server's delay.
        deadline.restart()
