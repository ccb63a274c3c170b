"""A loopback gateway that behaves like a real one at scale, run as its own process.

`python -m benchmarks.gateway --rate R [--seed S]` serves the same replies as `benchmarks.server`,
printing `PORT <n>` first, but:

- **rate limit**: a token bucket of `--rate` requests/s holding `--burst` seconds' worth; beyond
  it, `429` (after up to `--refusal-delay` seconds, as across a network) with an
  anthropic/openai-shaped rate-limit error body and a `Retry-After` in the form `--retry-after`
  names: `integer` (whole seconds until the next token, as HTTP requires), `fraction` (e.g.
  `0.020`), `date` (an HTTP date, one-second resolution), `absent`, `zero`, `negative`;
- **think time**: each admitted JSON reply is sent after a delay drawn uniformly from
  `--min-delay`..`--max-delay` seconds by a seeded generator (the same sequence every run);
- **paced streams**: an SSE reply is sent in `--bursts` writes spread over `--stream-seconds`,
  as a model emits tokens (a stream is not rate-limited once admitted);
- **extraction answers**: a Chat Completions request carrying a `response_format` is answered
  with the JSON the Dask example asks for, read off its last message (`DOC-<n>` and whether the
  text says "great"), so a run can be checked document by document.

`GET /__stats` -> `{"requests", "throttled", "answered"}`; `POST /__reset` zeroes them and refills
the bucket. Bounded like `benchmarks.server` (`--max-seconds`, stdin EOF, `POST /__shutdown`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import email.utils
import json
import math
import random
import re
import time

from benchmarks.replies import MODEL, STREAM_EVENTS, Replies, replies_for
from benchmarks.server import _STREAM_TRUE, _response, _watch_stdin, serve_connection
from langchain_kimi.testing import frames
from langchain_kimi.testing.script import Error
from langchain_kimi.testing.wire import error_body

_SLOW_DOWN = Error(
    status=429, message="slow down", error_type="rate_limit_error", code="rate", retry_after=None
)
_RATE_LIMITED = {
    protocol: frames.compact(error_body(_SLOW_DOWN, protocol, "req_gateway")).encode()
    for protocol in ("anthropic", "openai")
}
"""The 429 bodies, as the fake gateway writes them (`langchain_kimi.testing.wire.error_body`)."""


_DOC_ID = re.compile(r"DOC-\d+")


def extraction_reply(body: bytes) -> bytes:
    """The structured answer for the document in the request's last message."""
    text = str(json.loads(body)["messages"][-1]["content"])
    found = _DOC_ID.search(text)
    answer = {
        "doc_id": found.group(0) if found else "",
        "sentiment": "positive" if "great" in text else "negative",
    }
    message = {
        "role": "assistant",
        "content": json.dumps(answer),
        "reasoning_content": "Read the document id and its tone.",
    }
    usage = frames.openai_usage_counts(40, 12, 8)
    reply = frames.openai_completion("chatcmpl-gateway", MODEL, message, "stop", usage)
    return frames.compact(reply).encode()


def retry_after_header(form: str, wait: float) -> bytes:
    """The `Retry-After` line (or none) for a 429 whose next token is `wait` seconds away."""
    if form == "absent":
        return b""
    values = {
        "integer": lambda: str(max(1, math.ceil(wait))),
        "fraction": lambda: f"{wait:.3f}",
        "zero": lambda: "0",
        "negative": lambda: "-1",
        "date": lambda: email.utils.formatdate(time.time() + wait, usegmt=True),
    }
    return f"retry-after: {values[form]()}\r\n".encode()


class TokenBucket:
    def __init__(self, rate: float, burst: float = 1.0) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate * burst)
        self.reset()

    def reset(self) -> None:
        self.tokens = self.capacity
        self.stamp = time.monotonic()

    def take(self) -> float:
        """0 when a request may pass, else the seconds until the next token."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate


class Gateway:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.replies: dict[str, Replies] = {
            "anthropic": replies_for("anthropic", args.events),
            "openai": replies_for("openai", args.events),
        }
        self.bucket = TokenBucket(args.rate, args.burst)
        self.delays = random.Random(args.seed)
        self.stats = {"requests": 0, "throttled": 0, "answered": 0}
        self.done = asyncio.Event()

    def reset(self) -> None:
        self.bucket.reset()
        self.delays = random.Random(self.args.seed)
        self.stats = dict.fromkeys(self.stats, 0)

    async def reply(
        self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        """Write the response; False when the connection must close."""
        path = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and path == "/__stats":
            writer.write(_response("200 OK", "application/json", json.dumps(self.stats).encode()))
            return True
        if method == "POST" and path in ("/__reset", "/__shutdown"):
            self.reset() if path == "/__reset" else self.done.set()
            writer.write(_response("200 OK", "application/json", b"{}", close=True))
            return False
        protocol = "anthropic" if path.endswith("/messages") else "openai"
        self.stats["requests"] += 1
        wait = self.bucket.take() if self.args.rate > 0 else 0.0
        if wait:
            self.stats["throttled"] += 1
            if self.args.refusal_delay:  # a gateway across a network, or busy: 429s take time
                await asyncio.sleep(self.delays.uniform(0, self.args.refusal_delay))
            error = _RATE_LIMITED[protocol]
            head = _response("429 Too Many Requests", "application/json", error)
            retry_after = retry_after_header(self.args.retry_after, wait)
            writer.write(head.replace(b"\r\n", b"\r\n" + retry_after, 1))
            return True
        replies = self.replies[protocol]
        if b'"response_format"' in body:
            await asyncio.sleep(self.delays.uniform(self.args.min_delay, self.args.max_delay))
            writer.write(_response("200 OK", "application/json", extraction_reply(body)))
        elif _STREAM_TRUE.search(body):
            await self._paced_stream(replies, writer)
        else:
            await asyncio.sleep(self.delays.uniform(self.args.min_delay, self.args.max_delay))
            writer.write(_response("200 OK", "application/json", replies.json_body))
        self.stats["answered"] += 1
        return True

    async def _paced_stream(self, replies: Replies, writer: asyncio.StreamWriter) -> None:
        events = replies.sse_body.split(b"\n\n")
        head = (
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
            f"content-length: {len(replies.sse_body)}\r\nrequest-id: req_gateway\r\n\r\n"
        )
        writer.write(head.encode())
        bursts = max(1, self.args.bursts)
        per_burst = math.ceil(len(events) / bursts)
        pause = self.args.stream_seconds / bursts
        for start in range(0, len(events), per_burst):
            if start:
                await asyncio.sleep(pause)
            piece = b"\n\n".join(events[start : start + per_burst])
            writer.write(piece if start + per_burst >= len(events) else piece + b"\n\n")
            await writer.drain()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await serve_connection(reader, writer, self.reply, self.done)


async def serve(args: argparse.Namespace) -> None:
    gateway = Gateway(args)
    listener = await asyncio.start_server(gateway.handle, "127.0.0.1", 0, backlog=4096)
    print(f"PORT {listener.sockets[0].getsockname()[1]}", flush=True)
    if not args.no_stdin_watch:
        _watch_stdin(asyncio.get_running_loop(), gateway.done)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(gateway.done.wait(), timeout=args.max_seconds)
    listener.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rate", type=float, default=50.0, help="requests/s; 0: unlimited")
    parser.add_argument("--burst", type=float, default=1.0, help="seconds of rate the bucket holds")
    parser.add_argument(
        "--retry-after",
        default="integer",
        choices=["integer", "fraction", "date", "absent", "zero", "negative"],
    )
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument(
        "--refusal-delay", type=float, default=0.0, help="429s wait up to this many seconds"
    )
    parser.add_argument("--min-delay", type=float, default=0.2)
    parser.add_argument("--max-delay", type=float, default=2.0)
    parser.add_argument("--events", type=int, default=STREAM_EVENTS)
    parser.add_argument("--bursts", type=int, default=25)
    parser.add_argument("--stream-seconds", type=float, default=5.0)
    parser.add_argument("--max-seconds", type=float, default=1_800.0)
    parser.add_argument("--no-stdin-watch", action="store_true")
    asyncio.run(serve(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
