"""The byte-level event-stream parser (`langchain_kimi._http.sse`), read by read."""

from __future__ import annotations

import pytest

from langchain_kimi._http.sse import Event, EventParser


def _parse(*reads: bytes) -> list[Event]:
    parser = EventParser()
    return [event for read in reads for event in parser.feed(read)]


@pytest.mark.parametrize(
    ("reads", "events"),
    [
        # CR, LF and CRLF line ends, a CRLF split across reads
        (
            (b"data: a\r\rdata: b\n\ndata: c\r\n\r\n",),
            [("message", "a"), ("message", "b"), ("message", "c")],
        ),
        ((b"data: a\r", b"\n", b"\r", b"\n"), [("message", "a")]),
        # a CR at the end of a read ends its line at once: the event is complete
        ((b"data: a\r", b"\r"), [("message", "a")]),
        # an LF after a read ending in CR is that CRLF's only when it comes next
        ((b"data: a\r", b"xyz", b"\ndata: b\r", b"\n", b"\r\n"), [("message", "a\nb")]),
        # a multi-byte character split across reads; a byte order mark at the start
        ((b"\xef\xbb", b"\xbfdata: \xc3", b"\xa9\n\n"), [("message", "é")]),
        # comments, id / retry / unknown fields, no space after the colon, a field without colon
        ((b": ping\nid: 1\nretry: 5\nfoo: bar\nevent:x\ndata\n\n",), [("x", "")]),
        # a block with only comments or ids dispatches nothing; an unterminated event neither
        ((b": keep-alive\n\nid: 3\n\ndata: open",), []),
        # undecodable bytes become U+FFFD (the standard's UTF-8 decode), never an error
        ((b"data: \xff\n\n",), [("message", "\ufffd")]),
    ],
)
def test_events(reads: tuple[bytes, ...], events: list[tuple[str, str]]) -> None:
    assert [(e.event, e.data) for e in _parse(*reads)] == events
