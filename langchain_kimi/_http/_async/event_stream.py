"""An open event stream (see `_http/event_stream.py`). Its owner ends it with a close (failed,
or given up) or a finish (the caller is done with the events).

`_http/_async/` is the source, `_http/_sync/` is generated from it by `tools/unasync.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from langchain_kimi._http.event_stream import (
    AsyncPairs,
    Opened,
    OpenStream,
    adrain_then_close,
    wanted,
)
from langchain_kimi._http.replies import READ_FAILURES
from langchain_kimi._http.sse import Event


async def afirst_wanted(events: AsyncIterator[Event]) -> Event | None:
    async for sse in events:
        if wanted(sse):
            return sse
    return None


class AsyncEventStream(OpenStream):
    """(event name, data) pairs of one open SSE response. Iterate once; nothing is retried."""

    def __init__(self, opened: Opened, base_url: str, *, secret: str) -> None:
        super().__init__(opened, base_url, secret=secret)
        self._pairs: AsyncPairs | None = None

    def __aiter__(self) -> AsyncPairs:
        if self._pairs is None:
            self._pairs = self._read()
        return self._pairs

    async def _read(self) -> AsyncPairs:
        if self._first is None:
            return
        yield self._first.event, self._first.data
        try:
            async for sse in self._events:
                if wanted(sse):
                    yield sse.event, sse.data
        except READ_FAILURES as exc:
            error = self._cut(exc)
        else:
            return
        # Raised outside the except block: httpx errors hold the request (and its headers).
        raise error

    async def aclose(self) -> None:
        """Close the event generators, in order, then the response (its connection is not reused).
        Never left to the garbage collector: a collected async generator is closed by a task of
        its own, which could find the event generator still draining ("Task exception was never
        retrieved ... already running")."""
        try:
            if self._pairs is not None:
                await self._pairs.aclose()
            await self._events.aclose()
        finally:
            await self._response.aclose()

    async def afinish(self, give_back: Callable[[], None]) -> None:
        """The caller is done with the events: drain the rest of the body within bounds (so the
        connection can be reused), then close and `give_back` the client. A sync stream drains
        on a thread: its client, whose one connection the drain reads, goes back when it ends."""

        async def finished() -> None:
            try:
                await self.aclose()
            finally:
                give_back()

        await adrain_then_close(self._events, finished, self._response)
