"""A threaded HTTP/1.1 server on 127.0.0.1 for tests that need real sockets (resets, silence,
trickling bytes). Subclass `QuietHandler` with a `do_POST`; run a server with `running`.

`GatewayServer` puts any `httpx` handler behind the socket (e.g. a `FakeKimiGateway`'s): each
POST becomes an `httpx.Request`, the handler's `httpx.Response` is written back, an event stream
chunk by chunk (one event per chunk), so loopback tests are answered by the project's one writer
of Kimi replies.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

# Framing headers the handler writes itself (the body goes out whole or chunked).
_FRAMING = {"content-length", "transfer-encoding", "connection"}


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Each write goes out at once: with Nagle's algorithm the body, written after the headers,
    # waited for the client's delayed ACK (40 ms per answer on Linux loopback).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        return None


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.release = threading.Event()
        """Set when the test ends: handlers waiting on it (a silent server) return."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class GatewayHandler(QuietHandler):
    """Serves `server.answer(request)` over the socket."""

    server: GatewayServer

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        request = httpx.Request(
            "POST", self.server.url + self.path, headers=self.headers.items(), content=raw
        )
        response = self.server.answer(request)
        body = response.read()
        self.send_response(response.status_code)
        for name, value in response.headers.multi_items():
            if name.lower() not in _FRAMING:
                self.send_header(name, value)
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in body.split(b"\n\n")[:-1]:
            self.write_chunk(event + b"\n\n")
        self.wfile.flush()
        self.end_stream()

    def write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def end_stream(self) -> None:
        """After the last event: the chunked terminator (override to misbehave instead)."""
        self.wfile.write(b"0\r\n\r\n")


class GatewayServer(LoopbackServer):
    """A loopback server answering every POST with `answer(request)`."""

    def __init__(
        self,
        answer: Callable[[httpx.Request], httpx.Response],
        handler: type[GatewayHandler] = GatewayHandler,
    ) -> None:
        super().__init__(handler)
        self.answer = answer


@contextmanager
def running(server: LoopbackServer) -> Iterator[LoopbackServer]:
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
