"""Server-sent events from raw bytes (the WHATWG "event stream interpretation"). No I/O.

Why not a library: the event stream is parsed at the byte level so that

- the text is UTF-8 whatever charset the Content-Type claims (the format is UTF-8 by definition);
- a line ends at CR, LF or CRLF, and a CR at the end of a read already ends its line (a stream cut
  right after an event's final CR keeps that event);
- the reader knows when an event is complete, which the between-events deadline needs
  (`_reading`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE_END = re.compile(rb"\r\n|\r|\n")
_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Event:
    """One dispatched event. Unnamed events are named "message", as the standard says."""

    event: str
    data: str


class EventParser:
    """Feed the bytes of one stream as they arrive; each call returns the events they completed.

    An event is dispatched at the blank line that ends it; an event still open when the stream
    ends is never dispatched, as the standard says. Comments, `id:` and `retry:` lines and
    unknown fields are skipped (nothing here reconnects).
    """

    def __init__(self) -> None:
        self._pending: list[bytes] = []  # bytes of an unfinished line
        self._skip_lf = False  # the last read ended with CR: a leading LF completes that CRLF
        self._first_line = True
        self._event = ""
        self._data: list[str] = []
        self._has_fields = False

    def feed(self, chunk: bytes) -> list[Event]:
        if not chunk:
            return []
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_lf = False
        if not chunk:
            return []
        if b"\n" not in chunk and b"\r" not in chunk:
            self._pending.append(chunk)
            return []
        if self._pending:
            chunk = b"".join([*self._pending, chunk])
            self._pending = []
        *lines, rest = _LINE_END.split(chunk)
        if rest:
            self._pending.append(rest)
        self._skip_lf = chunk[-1:] == b"\r"
        events: list[Event] = []
        for raw in lines:
            event = self._line(raw.decode("utf-8", "replace"))
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> Event | None:
        if self._first_line:
            self._first_line = False
            line = line.removeprefix(_BOM)
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None  # a comment (often a keep-alive)
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._has_fields = True
        elif name == "event":
            self._event = value
            self._has_fields = True
        return None

    def _dispatch(self) -> Event | None:
        if not self._has_fields:
            return None
        event = Event(self._event or "message", "\n".join(self._data))
        self._event, self._data, self._has_fields = "", [], False
        return event
