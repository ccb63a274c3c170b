"""Property-based tests of both stream formats at the byte level, through ChatKimi's public
`stream()` (transport, SSE parser, plan and decoder together) with the body split into arbitrary
reads.

Streams vary in line ends (CR, LF, CRLF), comments, empty `data:` lines, unknown events and
fields, multi-byte characters split across reads, cuts at any offset, and missing or repeated end
markers; byte soup built from SSE fragments tries the rest. Properties: the call ends (a hard time
limit), every failure is a `KimiError`, a complete stream gives exactly the text sent, a cut
stream keeps a prefix of it in `.partial`.

Fixed seed (`derandomize`) and bounded examples keep the run short and reproducible.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_kimi import KimiError
from langchain_kimi.testing import FakeKimiGateway
from tools.sse_text import split_at

pytestmark = pytest.mark.timeout(60)

FUZZ = settings(
    derandomize=True,
    max_examples=80,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ASCII, JSON escapes, 2-, 3- and 4-byte UTF-8: cuts inside a character are likely.
_TEXT = st.text(alphabet='ab \n\r"\\é✓😀€', min_size=1, max_size=6)


class Reads(httpx.SyncByteStream):
    """The body in these reads, then a clean end or a connection reset."""

    def __init__(self, pieces: list[bytes], *, reset: bool) -> None:
        self.pieces = pieces
        self.reset = reset

    def __iter__(self) -> Iterator[bytes]:
        yield from self.pieces
        if self.reset:
            raise httpx.ReadError("connection reset by peer")


def _run(
    protocol: str, pieces: list[bytes], *, reset: bool = False
) -> tuple[str, KimiError | None]:
    """The streamed text, and the error the stream ended with (None when it completed)."""

    headers = {"content-type": "text/event-stream"}
    gateway = FakeKimiGateway().add_raw(
        httpx.Response(200, headers=headers, stream=Reads(pieces, reset=reset))
    )
    model = gateway.chat_model(protocol=protocol)
    text: list[str] = []
    try:
        for chunk in model.stream("hi"):
            assert isinstance(chunk.content, str)
            text.append(chunk.content)
    except KimiError as error:
        return "".join(text), error
    return "".join(text), None


Events = list[tuple[str, str, str]]
"""(event name, data, the text delta it carries)"""


def _chat_events(deltas: list[str]) -> Events:
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "kimi-k3"}
    events = [
        (
            "",
            json.dumps(
                {**head, "choices": [{"index": 0, "delta": {"content": d}}]}, ensure_ascii=False
            ),
            d,
        )
        for d in deltas
    ]
    finish = {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return [*events, ("", json.dumps(finish), "")]


def _messages_events(deltas: list[str]) -> Events:
    payloads: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "m1", "model": "kimi-k3", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d}}
            for d in deltas
        ),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 1},
        },
    ]
    return [
        (p["type"], json.dumps(p, ensure_ascii=False), p.get("delta", {}).get("text", ""))
        for p in payloads
    ]


END = {"openai": ("", "[DONE]", ""), "anthropic": ("message_stop", '{"type":"message_stop"}', "")}
EVENTS = {"openai": _chat_events, "anthropic": _messages_events}
NOISE = [
    b": keep-alive",  # a comment
    b"id: 7",  # fields the client does not use
    b"retry: 1000",
    b"x-unknown: field",
]
EXTRA_EVENTS = [
    [b"data:"],  # an event whose only line is an empty `data:`
    [b"event: unknown_event", b'data: {"type":"unknown_event"}'],
    [b"event: ping", b'data: {"type": "ping"}'],
]


class Stream:
    def __init__(
        self,
        raw: bytes,
        text: str,
        ends: int,
        complete_at: list[tuple[int, str]],
        *,
        ended_at: int | None,
        done_at: int | None,
    ):
        self.raw = raw
        self.text = text
        self.ends = ends
        self.complete_at = complete_at
        """(offset, delta): the delta's event is complete once the body's first `offset` bytes
        have arrived."""
        self.ended_at = ended_at
        """Where the first end marker is complete: nothing after it matters, not even a reset."""
        self.done_at = done_at
        """Where a body that ends cleanly is a complete reply: the end marker, or on Messages
        the `message_delta` with its `stop_reason` (the documents' events "suele incluir"
        `message_stop`: usually, not always)."""

    def completes_when_cut_at(self, cut: int, *, reset: bool) -> bool:
        if self.ended_at is not None and cut >= self.ended_at:
            return True
        return not reset and self.done_at is not None and cut >= self.done_at

    def text_before(self, cut: int) -> str:
        return "".join(delta for offset, delta in self.complete_at if offset <= cut)


@st.composite
def streams(draw: st.DrawFn, protocol: str) -> Stream:
    deltas = draw(st.lists(_TEXT, min_size=1, max_size=4))
    newline = draw(st.sampled_from([b"\n", b"\r", b"\r\n"]))
    ends = draw(st.sampled_from([0, 1, 1, 1, 2]))
    raw = b""
    complete_at: list[tuple[int, str]] = []
    reply_events = EVENTS[protocol](deltas)
    ended_at: int | None = None
    done_at: int | None = None
    for i, (event, data, delta) in enumerate([*reply_events, *[END[protocol]] * ends]):
        lines = [b"event: " + event.encode()] if event else []
        lines.append(b"data: " + data.encode())
        lines[draw(st.integers(0, len(lines))) : 0] = draw(
            st.lists(st.sampled_from(NOISE), max_size=2)
        )
        raw += newline.join(lines) + newline + newline
        # The blank line ends the event at its first byte (a CR ends a line at once).
        complete_at.append((len(raw) - len(newline) + 1, delta))
        if i == len(reply_events) and ended_at is None:
            ended_at = complete_at[-1][0]
        if i == len(reply_events) - 1 and protocol == "anthropic":
            done_at = complete_at[-1][0]
        if draw(st.booleans()):
            raw += b"".join(line + newline for line in draw(st.sampled_from(EXTRA_EVENTS)))
            raw += newline
    done_at = done_at if done_at is not None else ended_at
    return Stream(raw, "".join(deltas), ends, complete_at, ended_at=ended_at, done_at=done_at)


def _reads(draw: st.DrawFn, raw: bytes) -> list[bytes]:
    how = draw(st.sampled_from(["random", "bytewise", "last byte alone"]))
    if how == "bytewise":  # the worst split: one byte per read
        return [raw[i : i + 1] for i in range(len(raw))]
    cuts = draw(st.lists(st.integers(1, max(1, len(raw) - 1)), max_size=8))
    if how == "last byte alone":  # e.g. an event's final CR in a read of its own
        cuts.append(len(raw) - 1)
    return split_at(raw, cuts)


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@FUZZ
@given(data=st.data())
def test_a_whole_stream_gives_exactly_the_text_sent(protocol: str, data: st.DataObject) -> None:
    stream = data.draw(streams(protocol))
    received, error = _run(protocol, _reads(data.draw, stream.raw))
    if stream.completes_when_cut_at(len(stream.raw), reset=False):
        assert error is None
        assert received == stream.text
    else:  # no end marker: a cut stream, everything kept
        assert error is not None
        assert error.partial is not None
        assert error.partial.content == stream.text


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@FUZZ
@given(data=st.data())
def test_a_stream_cut_anywhere_keeps_what_arrived(protocol: str, data: st.DataObject) -> None:
    stream = data.draw(streams(protocol))
    # Anywhere, or (more likely to matter) at, or one byte before, the end of an event.
    boundaries = [offset - back for offset, _ in stream.complete_at for back in (0, 1)]
    cut = data.draw(st.integers(0, len(stream.raw)) | st.sampled_from(boundaries))
    reset = data.draw(st.booleans())
    received, error = _run(protocol, _reads(data.draw, stream.raw[:cut]), reset=reset)
    if stream.completes_when_cut_at(cut, reset=reset):
        assert error is None
        assert received == stream.text
    elif error is None:  # a cut before the reply was complete must fail
        raise AssertionError(f"a stream cut at {cut} of {len(stream.raw)} completed")
    else:  # every delta whose event was complete is kept
        kept = error.partial.content if error.partial is not None else ""
        assert kept == stream.text_before(cut)
        assert received == kept


PAYLOADS = [
    b'{"choices":[{"delta":{"content":"x"}}]}', b'{"type":"message_start","message":{}}',
    b'{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"y"}}',
    b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"z"}}',
    b'{"type":"content_block_stop","index":0}', b'{"type":"message_stop"}', b"[DONE]",
    b'{"error":{"message":"boom"}}', b'{"type":"error","error":{"type":"api_error"}}',
    # wrong shapes
    b'{"choices":{"0":{}}}', b'{"choices":[{"delta":"s"}]}', b'{"choices":[7]}',
    b'{"choices":[{"delta":{"tool_calls":7}}]}', b'{"usage":"x"}',
    b'{"choices":[{"delta":{"tool_calls":[{"function":"f"}]}}]}',
    b'{"type":"content_block_start","index":0,"content_block":{"type":"text","text":7}}',
    b'{"type":"content_block_delta","index":"0","delta":7}', b'{"type":7}',
    b"null", b"7", b'"s"', b"[]", b"{", b"\xef\xbb\xbf{}", b"\xc3", b"\xff\x00",
]  # fmt: skip
# Weighted towards whole events (a `data:` line and a blank line), so payloads get parsed.
PREFIXES = [b"data: "] * 5 + [b"data:", b"event: ", b"event: error", b": ", b"id: ", b""]
NEWLINES = [b"\n\n", b"\r\r", b"\r\n\r\n"] * 2 + [b"\n", b"\r", b"\r\n"]
_PAYLOAD = st.sampled_from(PAYLOADS)


@st.composite
def soups(draw: st.DrawFn) -> bytes:
    """Lines of SSE fragments, well- and ill-shaped payloads and random bytes, any line ends."""
    parts: list[bytes] = []
    for _ in range(draw(st.integers(0, 12))):
        parts.append(draw(st.sampled_from(PREFIXES)))
        parts.append(draw(st.one_of(_PAYLOAD, _PAYLOAD, _PAYLOAD, st.binary(max_size=6))))
        parts.append(draw(st.sampled_from(NEWLINES)))
    return b"".join(parts)


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@FUZZ
@given(data=st.data())
def test_byte_soup_ends_or_fails_typed(protocol: str, data: st.DataObject) -> None:
    raw = data.draw(soups())
    reset = data.draw(st.booleans())
    _run(protocol, _reads(data.draw, raw), reset=reset)  # anything but a KimiError fails
