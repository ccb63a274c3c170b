"""ChatKimi against a loopback server that misbehaves after, or instead of, a good answer.

- After the protocol's end event (`data: [DONE]`, `message_stop`) nothing is read any more: a
  reset, silence or junk that follows costs nothing.
- A server that trickles bytes without ever completing the reply (or the next event) is stopped
  by the deadlines of docs/errors.md, with the typed timeout error and what arrived.
- Media types are case-insensitive; bodies and streams are UTF-8 whatever the charset says.

Only 127.0.0.1 sockets; every test has a hard time limit, so a regression fails instead of hanging.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import httpx
import pytest

from langchain_kimi import ChatKimi, KimiError, KimiTimeoutError
from tests.support.loopback import LoopbackServer, QuietHandler, running

pytestmark = [
    pytest.mark.enable_socket,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.timeout(20),
]

KEY = "sk-loopback-hardening-0123"
TEXT = "Hello there, ünïcödé ✓"

_HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "kimi-k3"}


def _chat_event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {**_HEAD, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"


def _messages_event(payload: dict[str, Any]) -> bytes:
    data = json.dumps(payload, ensure_ascii=False).encode()
    return b"event: " + payload["type"].encode() + b"\ndata: " + data + b"\n\n"


CHAT_STREAM = (
    _chat_event({"role": "assistant", "content": TEXT[:7]})
    + _chat_event({"content": TEXT[7:]}, "stop")
    + b"data: [DONE]\n\n"
)
MESSAGES_STREAM = b"".join(
    _messages_event(p)
    for p in [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "kimi-k3",
                "content": [],
                "usage": {"input_tokens": 3, "output_tokens": 0},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": TEXT[:7]},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": TEXT[7:]},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]
)
STREAMS = {"openai": CHAT_STREAM, "anthropic": MESSAGES_STREAM}
REPLIES = {
    "openai": {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "kimi-k3",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": TEXT}}],
    },
    "anthropic": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "kimi-k3",
        "content": [{"type": "text", "text": TEXT}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 5},
    },
}  # fmt: skip


class Behaviour:
    """What the server sends: a content type, pieces (each after `gap` seconds), then an ending."""

    def __init__(
        self,
        content_type: str,
        pieces: list[bytes],
        *,
        ending: str = "close",
        gap: float = 0.0,
        length: int | None = None,
    ) -> None:
        self.content_type = content_type
        self.pieces = pieces
        self.ending = ending  # "close" | "reset" | "silent"
        self.gap = gap
        self.length = length


class Handler(QuietHandler):
    server: Server

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        plan = self.server.behaviour
        total = sum(len(p) for p in plan.pieces)
        self.send_response(200)
        self.send_header("Content-Type", plan.content_type)
        # Announce more than is sent when the server is to reset or go silent.
        length = plan.length or (total if plan.ending == "close" else total + 100_000)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        self.wfile.flush()
        try:
            for piece in plan.pieces:
                if plan.gap and self.server.release.wait(plan.gap):
                    return
                self.wfile.write(piece)
                self.wfile.flush()
        except OSError:  # the client hung up: what the deadline tests expect
            return
        if plan.ending == "reset":
            time.sleep(0.05)
            # SO_LINGER 0: close() sends RST instead of FIN, like a crashed proxy.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        elif plan.ending == "silent":
            self.server.release.wait(15.0)
        self.close_connection = True


class Server(LoopbackServer):
    def __init__(self) -> None:
        super().__init__(Handler)
        self.behaviour = Behaviour("application/json", [])


@pytest.fixture
def server() -> Iterator[Server]:
    with running(Server()) as srv:
        yield srv


def _model(server: LoopbackServer, protocol: str, *, read: float = 10.0) -> ChatKimi:
    return ChatKimi(
        api_key=KEY,
        base_url=server.url,
        protocol=protocol,
        max_retries=0,
        timeout=httpx.Timeout(10.0, read=read),
    )


async def _answer(model: ChatKimi, how: str) -> tuple[str, Any]:
    """The answer's text and its last chunk's metadata, by invoke or by stream."""
    if how in ("invoke", "invoke_streaming"):
        reply = model.model_copy(update={"streaming": how == "invoke_streaming"}).invoke("hi")
        return str(reply.content), reply.response_metadata
    if how == "stream":
        chunks = list(model.stream("hi"))
    else:
        chunks = [chunk async for chunk in model.astream("hi")]
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return str(total.content), total.response_metadata


PROTOCOLS = ["openai", "anthropic"]
STREAMED = ["invoke_streaming", "stream", "astream"]


# -- 1. nothing after the end event is read ------------------------------------------------------


@pytest.mark.parametrize("ending", ["reset", "silent"])
@pytest.mark.parametrize("how", STREAMED)
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_answer_is_complete_at_the_end_event(
    server: Server, protocol: str, how: str, ending: str
) -> None:
    # A read timeout far beyond the test's limit: waiting for what follows the end event fails.
    server.behaviour = Behaviour("text/event-stream", [STREAMS[protocol]], ending=ending)
    text, metadata = await _answer(_model(server, protocol, read=60.0), how)
    assert text == TEXT
    assert metadata["finish_reason"] == "stop"


@pytest.mark.parametrize("how", STREAMED)
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_junk_after_the_end_event_is_ignored(server: Server, protocol: str, how: str) -> None:
    junk = b"data: {not json\n\nevent: error\ndata: {}\n\n"
    server.behaviour = Behaviour("text/event-stream", [STREAMS[protocol] + junk])
    text, _ = await _answer(_model(server, protocol), how)
    assert text == TEXT


# -- 2. deadlines --------------------------------------------------------------------------------


def _trickle(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


@pytest.mark.parametrize("how", ["invoke", "stream", "astream"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_trickling_server_meets_the_deadline(
    server: Server, protocol: str, how: str
) -> None:
    # One byte every 0.1 s, the read timeout 0.5 s: no read ever times out, and before the
    # deadlines the reply (or the stream's second event) took minutes to complete.
    if how == "invoke":
        body = json.dumps(REPLIES[protocol]).encode()
        server.behaviour = Behaviour("application/json", _trickle(body), gap=0.1)
    else:
        first, _, rest = STREAMS[protocol].partition(b"\n\n")
        pieces = [first + b"\n\n", *_trickle(rest)]
        server.behaviour = Behaviour("text/event-stream", pieces, gap=0.1)
    model = _model(server, protocol, read=0.5)
    started = time.monotonic()
    with pytest.raises(KimiTimeoutError) as info:
        await _answer(model, how)
    assert time.monotonic() - started < 5.0
    error = info.value
    if how == "invoke":
        assert error.body  # what arrived before the deadline
        assert json.dumps(REPLIES[protocol]).startswith(error.body)
    else:
        assert error.partial is not None  # the first event's chunk arrived


# -- 4. media types and charsets -----------------------------------------------------------------


@pytest.mark.parametrize("how", STREAMED)
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "content_type", ["Text/Event-Stream", "TEXT/EVENT-STREAM; charset=iso-8859-1"]
)
async def test_event_streams_are_utf8_whatever_the_label(
    server: Server, protocol: str, how: str, content_type: str
) -> None:
    server.behaviour = Behaviour(content_type, [STREAMS[protocol]])
    text, _ = await _answer(_model(server, protocol), how)
    assert text == TEXT


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("content_type", ["Application/JSON", "application/json; charset=latin-1"])
async def test_json_replies_are_utf8_whatever_the_label(
    server: Server, protocol: str, content_type: str
) -> None:
    body = json.dumps(REPLIES[protocol], ensure_ascii=False).encode()
    server.behaviour = Behaviour(content_type, [body])
    text, _ = await _answer(_model(server, protocol), "invoke")
    assert text == TEXT


@pytest.mark.parametrize("how", STREAMED)
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_bare_cr_stream_cut_after_an_events_final_cr_keeps_it(
    server: Server, protocol: str, how: str
) -> None:
    # CR-only line ends; the stream is cut (reset) right after the final CR of the last delta's
    # event, that CR arriving in a read of its own: the error's `.partial` must hold every delta.
    stream = STREAMS[protocol].replace(b"\n", b"\r")
    cut = stream[: stream.index(b"\r\r", stream.index(TEXT[7:].encode())) + 2]
    server.behaviour = Behaviour(
        "text/event-stream", [cut[:-1], cut[-1:]], ending="reset", gap=0.05
    )
    with pytest.raises(KimiError) as info:
        await _answer(_model(server, protocol), how)
    partial = info.value.partial
    assert partial is not None
    assert partial.content == TEXT


class _Chunked(QuietHandler):
    """A well-behaved gateway: each event in its own chunk, then the chunked terminator."""

    server: LoopbackServer
    ports: ClassVar[set[int]] = set()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.ports.add(self.client_address[1])
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in CHAT_STREAM.split(b"\n\n")[:-1]:
            piece = event + b"\n\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


def test_sync_streams_stopped_at_the_end_event_still_reuse_their_connection() -> None:
    # The caller gets its answer at the end event; the rest of the body (the terminator) is read
    # off the caller's thread, so the connection goes back to the pool for the next call.
    _Chunked.ports = set()
    with running(LoopbackServer(_Chunked)) as srv:
        model = _model(srv, "openai")
        for _ in range(3):
            chunks = list(model.stream("hi"))
            assert "".join(str(c.content) for c in chunks) == TEXT
            time.sleep(0.2)  # room for the background read of the terminator (microseconds)
    assert len(_Chunked.ports) == 1


async def test_async_streams_stopped_at_the_end_event_still_reuse_their_connection() -> None:
    # Async streams read the rest of the body (the terminator) for a moment after the end event,
    # so the connection goes back to the pool.
    _Chunked.ports = set()
    with running(LoopbackServer(_Chunked)) as srv:
        model = _model(srv, "openai")
        for _ in range(3):
            chunks = [chunk async for chunk in model.astream("hi")]
            assert "".join(str(c.content) for c in chunks) == TEXT
    assert len(_Chunked.ports) == 1
