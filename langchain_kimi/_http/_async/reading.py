"""Reading a response under deadlines (see `_http/reading.py`): the loops.

`_http/_async/` is the source, `_http/_sync/` is generated from it by `tools/unasync.py`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import httpx

from langchain_kimi._errors import KimiForkedStreamError
from langchain_kimi._http.reading import BODY_LATE, EVENT_LATE, Deadline
from langchain_kimi._http.replies import READ_FAILURES, ReadFailure
from langchain_kimi._http.sse import Event, EventParser


async def aread_body(
    response: httpx.Response, seconds: float | None
) -> tuple[bytes, ReadFailure | None]:
    """The body, and the failure that cut it short (the body then holds what arrived)."""
    deadline = Deadline(seconds)
    parts: list[bytes] = []
    try:
        async for chunk in response.aiter_bytes():
            parts.append(chunk)
            deadline.check(response.request, BODY_LATE)
    except READ_FAILURES as exc:
        return b"".join(parts), exc
    return b"".join(parts), None


async def aiter_events(response: httpx.Response, seconds: float | None) -> AsyncIterator[Event]:
    """The events of an SSE response as they complete; raises httpx errors as httpx does."""
    parser = EventParser()
    deadline = Deadline(seconds)
    chunks, begun = response.aiter_bytes(), os.getpid()
    while True:
        if os.getpid() != begun:  # a fork's child: the connection is shared, read none of it
            raise KimiForkedStreamError.begun_in(begun)
        try:
            chunk = await chunks.__anext__()
        except StopAsyncIteration:
            return
        events = parser.feed(chunk)
        if not events:
            deadline.check(response.request, EVENT_LATE)
            continue
        for event in events:
            yield event
        # Restarted after the caller took the events: its own time is not the server's delay.
        deadline.restart()
