"""The rest of a stream's body, read after its end event so its connection can be reused.

After the protocol's end event a body usually holds only the chunked-encoding terminator; reading
it lets httpx keep the connection. A server may keep the body open instead, or keep sending, so
the read is bounded: at most `DRAIN_SECONDS` and `DRAIN_EVENTS` stray events; a connection not
read to its end in time is closed, not reused (nothing else is lost: the answer is complete).

An async read is bounded where it runs (`asyncio.timeout`). A blocking read cannot be bounded
below the read timeout, so a sync stream's drain runs on a short-lived thread (the sync caller
returns at once), and a timer shuts the socket down at its deadline, which ends the read; at most
`DRAINS` drains run at once (beyond them the connection is closed).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator

import httpx

logger = logging.getLogger("langchain_kimi")

DRAIN_SECONDS = 0.05
"""How long the rest of a body is read after the end event."""
DRAIN_EVENTS = 16
"""How many stray events are read after the end event at most."""
DRAINS = 16
"""How many sync drains run at once at most."""

_room = threading.BoundedSemaphore(DRAINS)


class _Drain(httpx.SyncByteStream):
    """One background drain: `cut` ends its read, unless its connection has been given back
    (the socket may then serve another request). The connection goes back when the response's
    stream is closed, even by httpx at the body's end: this drain stands in as that stream, so
    the close passes through its lock first."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lock = threading.Lock()
        self._over = False
        assert isinstance(response.stream, httpx.SyncByteStream)
        self._stream = response.stream
        response.stream = self

    def __iter__(self) -> Iterator[bytes]:  # the read in progress goes on with the real stream
        return iter(self._stream)

    def close(self) -> None:
        with self._lock:
            self._over = True
        self._stream.close()

    def run(
        self, events: Iterator[object], close: Callable[[], None], room: threading.Semaphore
    ) -> None:
        deadline = threading.Timer(DRAIN_SECONDS, self.cut)
        deadline.daemon = True
        deadline.start()
        try:
            for _ in itertools.islice(events, DRAIN_EVENTS):
                pass
        except Exception as exc:  # nobody is left to tell: the answer was already complete
            logger.debug("ignored after the end of a stream: %s", type(exc).__name__)
        finally:
            deadline.cancel()
            with self._lock:
                self._over = True
            room.release()
            close()

    def cut(self) -> None:
        """The deadline: shut the socket down, which ends the read in progress."""
        with self._lock:
            if self._over:
                return
            stream = self.response.extensions.get("network_stream")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                # The plain socket's shutdown: an SSL socket's would drop its state first.
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)


def drain_in_background(
    response: httpx.Response, events: Iterator[object], close: Callable[[], None]
) -> None:
    """Read the rest of a sync stream's body on a thread, then `close` (see the module)."""
    room = _room  # the one of this process (a forked child gets its own)
    if response.is_closed or not room.acquire(blocking=False):
        close()
        return
    drain = _Drain(response)
    thread = threading.Thread(
        target=drain.run, args=(events, close, room), name="langchain-kimi-drain", daemon=True
    )
    try:
        thread.start()
    except BaseException:  # no thread to be had: the connection is closed, not drained
        room.release()
        close()
        raise


def running() -> int:
    """How many sync drains run now."""
    return DRAINS - _room._value


def _fresh_room_in_child() -> None:
    global _room
    _room = threading.BoundedSemaphore(DRAINS)  # the parent's drain threads are not in the child


os.register_at_fork(after_in_child=_fresh_room_in_child)
