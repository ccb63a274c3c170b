"""A loopback Chat Completions gateway that answers each request with its own last user message
(so a test can tell whose answer arrived where), recording the key and host of every request.

Streams send the echo, then `data: [DONE]`, then `after_done` bytes if any, then, when
`stall_after_done` is set, keep the body open (no chunked terminator) until the test ends: a server
that never finishes its body.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from tests.support.loopback import LoopbackServer, QuietHandler


def _echo(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else json.dumps(content)


class EchoHandler(QuietHandler):
    server: EchoServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.record(self.headers.get("authorization", ""), self.headers.get("host", ""))
        if self.server.on_request is not None:
            self.server.on_request(body)
        text = _echo(body)
        if body.get("stream"):
            self._stream(text)
            return
        payload = json.dumps(
            {
                "id": "chatcmpl-echo",
                "object": "chat.completion",
                "created": 1,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _stream(self, text: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        chunk = {
            "id": "chatcmpl-echo",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "kimi-k3.1-pro",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        for data in (json.dumps(chunk), "[DONE]"):
            self._chunk(f"data: {data}\n\n".encode())
        self.wfile.flush()
        if self.server.after_done:
            self._chunk(self.server.after_done)
            self.wfile.flush()
        if self.server.stall_after_done:
            self.server.release.wait(60)
            return  # the connection closes without the chunked terminator
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


class EchoServer(LoopbackServer):
    def __init__(self, *, stall_after_done: bool = False, after_done: bytes = b"") -> None:
        super().__init__(EchoHandler)
        self.stall_after_done = stall_after_done
        self.after_done = after_done
        """Bytes sent after `[DONE]` (junk, or more events), before the stall or the end."""
        self.on_request: Callable[[dict[str, Any]], None] | None = None
        """Called with each request body before it is answered (e.g. to hold it)."""
        self.seen: list[tuple[str, str]] = []  # (authorization header, host header)
        self._lock = threading.Lock()

    def record(self, authorization: str, host: str) -> None:
        with self._lock:
            self.seen.append((authorization, host))
