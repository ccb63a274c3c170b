"""A loopback gateway that behaves like a real one at scale, run as its own process.

`python -m benchmarks.gateway --rate R [--seed S]` serves the same replies as `benchmarks.server`,
printing `PORT <n>` first, but:

- **rate limit** of the kind `--limit` names (`benchmarks.limits`): `bucket`, a token bucket of
  `--rate` requests/s holding `--burst` seconds' worth, whose rate may move to `--moved-rate` at
  `--moves-at` seconds after a reset (a limit that falls or rises); `concurrency`, at most
  `--concurrency-limit` requests in flight; `tokens`, `--tokens-per-minute` with each request's
  prompt drawn from `--prompt-tokens` by the seeded generator; `sliding`, `--rate` in any
  trailing second; `fixed`, `--rate` per whole second (per whole `--window` seconds: a window of
  a minute admits `--rate` x 60 at once, then refuses to the minute's end). Beyond it, `429`
  (after a uniform draw from `--refusal-min`..`--refusal-delay` seconds, as across a network)
  with an anthropic/openai-shaped
  rate-limit error body and a `Retry-After` in the form `--retry-after` names: `integer` (whole
  seconds until the next admission, as HTTP requires), `fraction` (e.g. `0.020`), `date` (an HTTP
  date, one-second resolution), `absent`, `zero`, `negative`;
- **overload**: with `--overload-share`, that share of the requests arriving in the first
  `--overload-seconds` after a reset is refused with `--overload-status` (503, or 529
  `overloaded_error`), with `Retry-After: 1` unless `--overload-no-retry-after`, whatever the
  limit;
- **think time**: each admitted JSON reply is sent after a delay drawn uniformly from
  `--min-delay`..`--max-delay` seconds by a seeded generator (the same sequence every run);
- **paced streams**: an SSE reply is sent in `--bursts` writes spread over `--stream-seconds`,
  as a model emits tokens (a stream is not rate-limited once admitted);
- **extraction answers**: a Chat Completions request carrying a `response_format` is answered
  with the JSON the Dask example asks for, read off its last message (`DOC-<n>` and whether the
  text says "great"), so a run can be checked document by document.

`GET /__stats` -> `{"requests", "throttled", "overloaded", "answered"}`; `POST /__reset` zeroes
them and starts the limit afresh (a full bucket, an empty window, the overload's clock). Bounded
like `benchmarks.server` (`--max-seconds`, stdin EOF, `POST /__shutdown`).
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

from benchmarks.limits import KINDS, Limit, Overload, limit_for
from benchmarks.replies import MODEL, STREAM_EVENTS, Replies, replies_for
from benchmarks.server import _STREAM_TRUE, _response, _watch_stdin, serve_connection
from langchain_kimi.testing import frames
from langchain_kimi.testing.script import Error, error_type_for
from langchain_kimi.testing.wire import error_body

_SLOW_DOWN = Error(
    status=429, message="slow down", error_type="rate_limit_error", code="rate", retry_after=None
)
_RATE_LIMITED = {
    protocol: frames.compact(error_body(_SLOW_DOWN, protocol, "req_gateway")).encode()
    for protocol in ("anthropic", "openai")
}
"""The 429 bodies, as the fake gateway writes them (`langchain_kimi.testing.wire.error_body`)."""
_OVERLOADED = {
    (protocol, status): frames.compact(
        error_body(
            Error(
                status=status,
                message="overloaded, try again later",
                error_type=error_type_for(status),
                code=None,
                retry_after=None,
            ),
            protocol,
            "req_gateway",
        )
    ).encode()
    for protocol in ("anthropic", "openai")
    for status in (503, 529)
}
"""The overload bodies: 503 (`api_error`) and 529 (`overloaded_error`, Messages' name)."""


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


class Gateway:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.replies: dict[str, Replies] = {
            "anthropic": replies_for("anthropic", args.events),
            "openai": replies_for("openai", args.events),
        }
        self.stats = {"requests": 0, "throttled": 0, "overloaded": 0, "answered": 0}
        self.done = asyncio.Event()
        self.overload = (
            Overload(
                args.overload_share,
                args.overload_seconds,
                args.overload_status,
                retry_after=not args.overload_no_retry_after,
            )
            if args.overload_share
            else None
        )
        self.reset()

    def reset(self) -> None:
        self.started = time.monotonic()
        self.limit: Limit | None = None
        if self.args.rate > 0 or self.args.limit != "bucket":
            self.limit = limit_for(
                self.args.limit,
                rate=self.args.rate,
                burst=self.args.burst,
                concurrency=self.args.concurrency_limit,
                tokens_per_minute=self.args.tokens_per_minute,
                moves_at=self.args.moves_at,
                moved_rate=self.args.moved_rate,
                start=self.started,
                window=self.args.window,
            )
        self.delays = random.Random(self.args.seed)
        self.sizes = random.Random(self.args.seed + 1)  # prompt sizes, for a tokens limit
        self.overloads = random.Random(self.args.seed + 2)
        self.stats = dict.fromkeys(self.stats, 0)

    async def _refuse(
        self, protocol: str, writer: asyncio.StreamWriter, status: int, retry_after: bytes
    ) -> None:
        if self.args.refusal_delay:  # a gateway across a network, or busy: refusals take time
            low = min(self.args.refusal_min, self.args.refusal_delay)
            await asyncio.sleep(self.delays.uniform(low, self.args.refusal_delay))
        if status == 429:
            error, reason = _RATE_LIMITED[protocol], "429 Too Many Requests"
        else:
            error = _OVERLOADED[(protocol, status)]
            reason = f"{status} {'Service Unavailable' if status == 503 else 'Overloaded'}"
        head = _response(reason, "application/json", error)
        writer.write(head.replace(b"\r\n", b"\r\n" + retry_after, 1))

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
        now = time.monotonic()
        overload = self.overload
        if overload is not None and overload.refuses(now - self.started, self.overloads):
            self.stats["overloaded"] += 1
            retry_after = b"retry-after: 1\r\n" if overload.retry_after else b""
            await self._refuse(protocol, writer, overload.status, retry_after)
            return True
        tokens = self.sizes.uniform(*self.args.prompt_tokens) if self.args.limit == "tokens" else 0
        wait = self.limit.take(now, tokens) if self.limit is not None else 0.0
        if wait:
            self.stats["throttled"] += 1
            await self._refuse(
                protocol, writer, 429, retry_after_header(self.args.retry_after, wait)
            )
            return True
        replies = self.replies[protocol]
        streams = _STREAM_TRUE.search(body) and b'"response_format"' not in body
        delay = 0.0 if streams else self.delays.uniform(self.args.min_delay, self.args.max_delay)
        if self.limit is not None:
            answered_at = now + (self.args.stream_seconds if streams else delay)
            self.limit.admitted(now, answered_at)
        if b'"response_format"' in body:
            await asyncio.sleep(delay)
            writer.write(_response("200 OK", "application/json", extraction_reply(body)))
        elif streams:
            await self._paced_stream(replies, writer)
        else:
            await asyncio.sleep(delay)
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


def options() -> argparse.ArgumentParser:
    """The gateway's command line (`benchmarks.rates` builds one per cell)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", choices=KINDS, default="bucket", help="the kind of limit")
    parser.add_argument("--rate", type=float, default=50.0, help="requests/s; 0: unlimited")
    parser.add_argument("--moves-at", type=float, help="seconds after a reset the rate moves")
    parser.add_argument("--moved-rate", type=float, help="the bucket's rate from --moves-at on")
    parser.add_argument("--window", type=float, default=1.0, help="a fixed window's seconds")
    parser.add_argument("--concurrency-limit", type=int, default=20)
    parser.add_argument("--tokens-per-minute", type=float, default=1_200_000)
    parser.add_argument("--prompt-tokens", type=float, nargs=2, default=(5_000, 15_000))
    parser.add_argument("--overload-share", type=float, default=0.0)
    parser.add_argument("--overload-seconds", type=float, default=10.0)
    parser.add_argument("--overload-status", type=int, choices=[503, 529], default=503)
    parser.add_argument("--overload-no-retry-after", action="store_true")
    parser.add_argument("--burst", type=float, default=1.0, help="seconds of rate the bucket holds")
    parser.add_argument(
        "--retry-after",
        default="integer",
        choices=["integer", "fraction", "date", "absent", "zero", "negative"],
    )
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument(
        "--refusal-delay", type=float, default=0.0, help="refusals wait up to this many seconds"
    )
    parser.add_argument("--refusal-min", type=float, default=0.0, help="and at least this long")
    parser.add_argument("--min-delay", type=float, default=0.2)
    parser.add_argument("--max-delay", type=float, default=2.0)
    parser.add_argument("--events", type=int, default=STREAM_EVENTS)
    parser.add_argument("--bursts", type=int, default=25)
    parser.add_argument("--stream-seconds", type=float, default=5.0)
    parser.add_argument("--max-seconds", type=float, default=1_800.0)
    parser.add_argument("--no-stdin-watch", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    asyncio.run(serve(options().parse_args(argv)))


if __name__ == "__main__":
    main()
