"""Loopback HTTP/1.1 server for the benchmarks, run as its own process.

`python -m benchmarks.server [--events N] [--max-seconds S]` binds 127.0.0.1 on a free port,
prints `PORT <n>` on stdout, then serves fixed replies from `benchmarks.replies`:

- `POST .../messages` -> the anthropic reply, `POST .../chat/completions` -> the openai reply
  (this covers `/v1/messages`, `/v1/chat/completions` and ChatOpenAI's
  `<base_url>/chat/completions`); JSON, or SSE when the body asks for `"stream": true`.
  Request bodies are read and discarded.
- `GET /__stats` -> `{"requests": n, "body_bytes": n, "max_body": n, "last_body": n}`.

It is bounded: it exits after `--max-seconds`, when its stdin reaches EOF (the runner died or
closed the pipe) or on `POST /__shutdown`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from collections.abc import Awaitable, Callable

from benchmarks.replies import STREAM_EVENTS, Replies, replies_for

# Top-level `"stream": true` as every client here serializes it. The benchmark histories never
# contain this text, so a byte search is enough and costs far less than parsing a 4 MB body.
_STREAM_TRUE = re.compile(rb'"stream"\s*:\s*true')


class _Stats:
    def __init__(self) -> None:
        self.requests = 0
        self.body_bytes = 0
        self.max_body = 0
        self.last_body = 0

    def add(self, size: int) -> None:
        self.requests += 1
        self.last_body = size
        self.body_bytes += size
        self.max_body = max(self.max_body, size)

    def as_json(self) -> bytes:
        stats = {"requests": self.requests, "body_bytes": self.body_bytes}
        sizes = {"max_body": self.max_body, "last_body": self.last_body}
        return json.dumps({**stats, **sizes}).encode()


def _response(status: str, content_type: str, body: bytes, *, close: bool = False) -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\n"
        f"content-type: {content_type}\r\n"
        f"content-length: {len(body)}\r\n"
        "request-id: req_bench\r\n"
        f"connection: {'close' if close else 'keep-alive'}\r\n\r\n"
    )
    return head.encode() + body


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts: list[bytes] = []
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readline()
    length = int(headers.get("content-length", "0"))
    return await reader.readexactly(length) if length else b""


async def read_request(
    reader: asyncio.StreamReader,
) -> tuple[str, str, dict[str, str], bytes] | None:
    """The next request on a keep-alive connection (method, path, headers, body); None at EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return method, path, headers, await _read_body(reader, headers)


class Server:
    def __init__(self, events: int) -> None:
        self.replies: dict[str, Replies] = {
            "anthropic": replies_for("anthropic", events),
            "openai": replies_for("openai", events),
        }
        self.stats = _Stats()
        self.done = asyncio.Event()

    def _route(self, method: str, path: str, body: bytes) -> bytes:
        path = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and path == "/__stats":
            return _response("200 OK", "application/json", self.stats.as_json())
        if method == "POST" and path == "/__shutdown":
            self.done.set()
            return _response("200 OK", "application/json", b"{}", close=True)
        if method != "POST":
            return _response("405 Method Not Allowed", "text/plain", b"")
        if path.endswith("/messages"):
            replies = self.replies["anthropic"]
        elif path.endswith("/chat/completions"):
            replies = self.replies["openai"]
        else:
            return _response("404 Not Found", "application/json", b'{"error":"no route"}')
        self.stats.add(len(body))
        if _STREAM_TRUE.search(body):
            return _response("200 OK", "text/event-stream; charset=utf-8", replies.sse_body)
        return _response("200 OK", "application/json", replies.json_body)

    async def respond(
        self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        writer.write(self._route(method, path, body))
        return True

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await serve_connection(reader, writer, self.respond, self.done)


Respond = Callable[[str, str, bytes, asyncio.StreamWriter], Awaitable[bool]]
"""Writes the response to one request; False when the connection must close."""


async def serve_connection(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    respond: Respond,
    done: asyncio.Event,
) -> None:
    """Serve the requests of one keep-alive connection until EOF, `Connection: close` or `done`."""
    try:
        while not done.is_set():
            request = await read_request(reader)
            if request is None:
                return
            method, path, headers, body = request
            keep = await respond(method, path, body, writer)
            await writer.drain()
            if not keep or headers.get("connection", "").lower() == "close":
                return
    except (ConnectionError, asyncio.IncompleteReadError, ValueError):
        return
    except asyncio.CancelledError:
        return  # shutting down with keep-alive connections still open
    finally:
        writer.close()


def _watch_stdin(loop: asyncio.AbstractEventLoop, done: asyncio.Event) -> None:
    """Stop when the parent closes our stdin (or dies): never outlive the run."""
    fd = sys.stdin.fileno()

    def on_readable() -> None:
        if not os.read(fd, 4096):
            loop.remove_reader(fd)
            done.set()

    loop.add_reader(fd, on_readable)


async def serve(events: int, max_seconds: float, watch_stdin: bool) -> None:
    server = Server(events)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0, backlog=512)
    port = listener.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    if watch_stdin:
        _watch_stdin(asyncio.get_running_loop(), server.done)
    try:
        await asyncio.wait_for(server.done.wait(), timeout=max_seconds)
    except TimeoutError:
        print("benchmark server: --max-seconds reached, exiting", file=sys.stderr)
    listener.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=STREAM_EVENTS)
    parser.add_argument("--max-seconds", type=float, default=900.0)
    parser.add_argument("--no-stdin-watch", action="store_true")
    args = parser.parse_args(argv)
    asyncio.run(serve(args.events, args.max_seconds, not args.no_stdin_watch))


if __name__ == "__main__":
    main()
