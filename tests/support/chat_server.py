"""A loopback Chat Completions server for ChatKimi's life-cycle and shared-pool tests.

Every POST gets the same short reply when it carries `SECRET` as its key, a 401 otherwise; the
headers of the last request are kept in `ChatServerHandler.seen_headers`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

SECRET = "sk-lifecycle-secret-0123456789abcdef"

REPLY = {
    "id": "chatcmpl-loopback",
    "object": "chat.completion",
    "created": 1767225600,
    "model": "kimi-k3.1-pro",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "OK", "reasoning_content": "Say OK."},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
}


class ChatServerHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    seen_headers: ClassVar[dict[str, str]] = {}

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        ChatServerHandler.seen_headers = {k.lower(): v for k, v in self.headers.items()}
        if self.headers.get("authorization") != f"Bearer {SECRET}":
            payload = json.dumps(
                {"error": {"message": "invalid api key", "type": "invalid_request_error"}}
            ).encode()
            self._send(401, payload)
            return
        self._send(200, json.dumps(REPLY).encode())

    def _send(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("x-request-id", "req-loopback")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        return


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # 120 concurrent connects
    daemon_threads = True


@contextmanager
def serving() -> Iterator[str]:
    """The server's base URL while the block runs."""
    server = _Server(("127.0.0.1", 0), ChatServerHandler)
    # A short poll interval: shutdown() waits up to one interval for the serving thread.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
