"""A loopback Chat Completions gateway that answers each request with its own last user message
(so a test can tell whose answer arrived where), recording the key and host of every request.
The answers are a `FakeKimiGateway`'s (one per request, so the request is checked too).

Streams send the echo, then `data: [DONE]`, then `after_done` bytes if any, then, when
`stall_after_done` is set, keep the body open (no chunked terminator) until the test ends: a server
that never finishes its body.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import httpx

from langchain_kimi.testing import FakeKimiGateway
from tests.support.loopback import GatewayHandler, GatewayServer


def _echo(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else json.dumps(content)


class EchoHandler(GatewayHandler):
    server: EchoServer

    def end_stream(self) -> None:
        if self.server.after_done:
            self.write_chunk(self.server.after_done)
            self.wfile.flush()
        if self.server.stall_after_done:
            self.server.release.wait(60)
            return  # the connection closes without the chunked terminator
        super().end_stream()


class EchoServer(GatewayServer):
    def __init__(self, *, stall_after_done: bool = False, after_done: bytes = b"") -> None:
        super().__init__(self._answer, EchoHandler)
        self.stall_after_done = stall_after_done
        self.after_done = after_done
        """Bytes sent after `[DONE]` (junk, or more events), before the stall or the end."""
        self.on_request: Callable[[dict[str, Any]], None] | None = None
        """Called with each request body before it is answered (e.g. to hold it)."""
        self.seen: list[tuple[str, str]] = []  # (authorization header, host header)
        self._lock = threading.Lock()

    def _answer(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        with self._lock:
            self.seen.append((request.headers.get("authorization", ""), request.headers["host"]))
        if self.on_request is not None:
            self.on_request(body)
        gateway = FakeKimiGateway()
        gateway.add_reply(_echo(body), usage={"input_tokens": 1, "output_tokens": 1})
        return gateway.transport.handle_request(request)
