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


@pytest.mark.parametrize(
    ("reads", "events"),
    [
        pytest.param(
            (b"data:  a\n\n",), [("message", " a")], id="strips-exactly-one-leading-space"
        ),
        pytest.param(
            (
                b"data: a\r",
                b"\ndata: b\n\n",
            ),
            [("message", "a\nb")],
            id="lf-opening-a-read-completes-the-crlf-of-the-last-read",
        ),
        pytest.param(
            (b"data: a\n\nda", b"ta: b\n\n"),
            [("message", "a"), ("message", "b")],
            id="a-read-ending-inside-a-line-keeps-the-rest-for-the-next",
        ),
        pytest.param(
            (b"data: a\n\n", b"data: b\n\n"),
            [("message", "a"), ("message", "b")],
            id="a-read-ending-at-an-event-boundary",
        ),
        pytest.param(
            (b"data: a\n", b"\xef\xbb\xbfdata: b\n\n"),
            [("message", "a")],
            id="a-byte-order-mark-later-than-the-first-read-is-kept",
        ),
        pytest.param(
            (b"\n\xef\xbb\xbfdata: a\n\n",),
            [],
            id="a-byte-order-mark-after-a-first-line-is-kept",
        ),
        pytest.param(
            (b"event: ping\n\n",), [("ping", "")], id="an-event-with-a-name-and-no-data-line"
        ),
        pytest.param(
            (b"data: a\n\n\n\n",), [("message", "a")], id="blank-lines-after-an-event-dispatch-once"
        ),
    ],
)
def test_event_stream_rules(reads: tuple[bytes, ...], events: list[tuple[str, str]]) -> None:
    assert [(e.event, e.data) for e in _parse(*reads)] == events
