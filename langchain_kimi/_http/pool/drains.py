"""A pool's drains: the rest of a stream's body, read after its end event, within bounds.

After the protocol's end event a body usually holds only the chunked-encoding terminator; reading it
lets the connection be reused. A stream keeps its pool slot until its connection is given back, so
a server that kept the body open (or kept sending) would hold the slot as long as it liked. Hence:

- **time**: a drain lasts at most `DRAIN_SECONDS`; an async drain is cancelled then, a
  sync one (on a background thread: a blocking read cannot be bounded below the read timeout) has
  its socket shut down by the one deadline thread, which ends the read at once;
- **count**: at most `DRAINS_PER_POOL` background drains per pool at once;
- **room**: a call that finds the pool full cuts the running background drains: it takes a
  drained connection's place rather than wait for it.

A drain that does not start closes its connection instead (it is not reused; nothing else is lost:
the answer is complete). A drain does start in a full pool: it usually takes microseconds (the
terminator came with the end event), and a closed connection would cost the next call a new one.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator

import httpx

from langchain_kimi._http.limits.admission import Admission

DRAIN_SECONDS = 0.05
"""How long the rest of a body is read after the end event before the connection is closed."""
DRAINS_PER_POOL = 16
"""How many sync streams of one pool may drain at once (each on its own short-lived thread)."""


class Drain:
    """One background drain of one response: `cut` ends its read, `done` ends its place."""

    def __init__(self, drains: Drains, response: httpx.Response, seconds: float) -> None:
        self._drains = drains
        self._response = response
        self._lock = threading.Lock()
        self._closed = False
        self.deadline = time.monotonic() + seconds
        # Once the response is closed its connection may already serve another request: the
        # close takes our lock, so a cut never shuts down a socket that has been given back.
        assert isinstance(response.stream, httpx.SyncByteStream)
        response.stream = _CloseGuard(response.stream, self)

    def cut(self) -> None:
        """End the drain's read now: shut its socket down (the connection is then not reused)."""
        with self._lock:
            if self._closed:
                return
            stream = self._response.extensions.get("network_stream")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                # The plain socket's shutdown: an SSL socket's would drop its state first.
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def _closing(self) -> None:
        with self._lock:
            self._closed = True

    def done(self) -> None:
        """The drain is over: from now on `cut` does nothing. Called before the stream's
        generators and response are closed: closing them gives the connection back (httpcore
        releases it when its body generator is closed, without `response.close`), and a cut
        after that would shut down a connection already serving another request."""
        self._closing()
        self._drains._finished(self)


class _CloseGuard(httpx.SyncByteStream):
    """A response's byte stream whose close first tells its drain (see `Drain.__init__`)."""

    def __init__(self, inner: httpx.SyncByteStream, drain: Drain) -> None:
        self._inner = inner
        self._drain = drain

    def __iter__(self) -> Iterator[bytes]:  # the read in progress goes on with the inner one
        return iter(self._inner)

    def close(self) -> None:
        self._drain._closing()
        self._inner.close()


class Drains:
    """The drains of one pool. Thread-safe."""

    def __init__(self, admission: Admission) -> None:
        self._admission = admission
        self._lock = threading.Lock()
        self._running: set[Drain] = set()

    @property
    def active(self) -> int:
        return len(self._running)

    @property
    def seconds(self) -> float:
        return DRAIN_SECONDS

    def room(self) -> bool:
        """Whether a call could start now without waiting for a slot."""
        return self._admission.in_flight < self._admission.capacity

    def start(self, response: httpx.Response) -> Drain | None:
        """A place for one background drain of `response`; None when `DRAINS_PER_POOL` drains are
        running (the connection is then closed instead) or when the body was read to its end
        already (its connection is back in the pool, maybe serving another request)."""
        if response.is_closed:
            return None
        with self._lock:
            if len(self._running) >= DRAINS_PER_POOL:
                return None
            drain = Drain(self, response, DRAIN_SECONDS)
            self._running.add(drain)
        _DEADLINES.watch(drain)
        return drain

    def make_room(self) -> None:
        """A call is about to enter the pool: if it is full, cut the running drains for it."""
        if self._running and not self.room():
            with self._lock:
                running = list(self._running)
            for drain in running:
                drain.cut()

    def _finished(self, drain: Drain) -> None:
        with self._lock:
            self._running.discard(drain)


class _Deadlines:
    """One daemon thread that cuts the background drains still running at their deadline."""

    def __init__(self) -> None:
        self._ready = threading.Condition()
        self._heap: list[tuple[float, int, Drain]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, drain: Drain) -> None:
        with self._ready:
            heapq.heappush(self._heap, (drain.deadline, next(self._order), drain))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="langchain-kimi-deadlines", daemon=True
                )
                self._thread.start()
            self._ready.notify()

    def _run(self) -> None:
        while True:
            with self._ready:
                if not self._heap:
                    self._ready.wait()
                    continue
                deadline, _, drain = self._heap[0]
                wait = deadline - time.monotonic()
                if wait > 0:
                    self._ready.wait(wait)
                    continue
                heapq.heappop(self._heap)
            drain.cut()  # a finished drain's response is closed: then this does nothing


_DEADLINES = _Deadlines()


def _fresh_deadlines_in_child() -> None:
    global _DEADLINES
    _DEADLINES = _Deadlines()  # the thread did not survive the fork; its lock may be held


os.register_at_fork(after_in_child=_fresh_deadlines_in_child)
