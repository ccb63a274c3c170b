"""Server-sent events from raw bytes (the WHATWG "event stream interpretation"). No I/O.

Why not a library: the event stream is parsed at the byte level so that

- the text is UTF-8 whatever charset the Content-Type claims (the format is UTF-8 by definition);
- a line ends at CR, LF or CRLF, and a CR at the end of a read already ends its line (a stream cut
  right after an event's final CR keeps that event);
- the reader knows when an event is complete, which the between-events deadline needs
  (`reading.py`).
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
        self._first_line = True  # a byte order mark may precede it
        self._event = ""
        self._data: list[str] = []
        self._has_fields = False

    def feed(self, chunk: bytes) -> list[Event]:
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        if not chunk:
            return []
        self._skip_lf = False
        end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) + 1
        if not end:  # no line end yet
            self._pending.append(chunk)
            return []
        if self._pending:
            self._pending.append(chunk)
            chunk = b"".join(self._pending)
            end += len(chunk) - len(self._pending[-1])
            self._pending = []
        if end < len(chunk):
            self._pending.append(chunk[end:])
        self._skip_lf = chunk[end - 1] == 0x0D  # a CR: the next read may start with its LF
        # Whole lines only, so no character is split; one decode for all of them.
        text = chunk[:end].decode("utf-8", "replace")
        if self._first_line:
            self._first_line = False
            text = text.removeprefix(_BOM)
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        lines.pop()  # what follows the last line end: nothing
        return self._lines(lines)

    def _lines(self, lines: list[str]) -> list[Event]:
        events: list[Event] = []
        for line in lines:
            if not line:
                if self._has_fields:
                    events.append(Event(self._event or "message", "\n".join(self._data)))
                    self._event, self._data, self._has_fields = "", [], False
                continue
            name, colon, value = line.partition(":")
            if colon and value[:1] == " ":
                value = value[1:]
            if name == "data":
                self._data.append(value)
                self._has_fields = True
            elif name == "event":
                self._event = value
                self._has_fields = True
            # Anything else: a comment (a line starting with ":", often a keep-alive), `id:`,
            # `retry:` (nothing here reconnects) or an unknown field: skipped.
        return events
