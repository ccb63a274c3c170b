"""Many connections: what one more request costs while thousands of slow streams are in flight.

`python -m benchmarks.connections [--levels 100,500,2000,5000] [--json PATH]`

A loopback server (its own process, `serve`) answers `/quick` at once and answers `/hold` with the
head of an event stream that it never finishes: each held stream keeps its connection busy, as a
reasoning model's minutes-long answer does. For each level `k` and each transport, one event loop:

- opens `k` held streams one after the other: client CPU per stream opened;
- with the `k` streams open, sends quick requests one after the other: client CPU per request
  (median of 5 batches of 40);
- closes the `k` streams: client CPU per stream closed.

The client is ChatKimi's: an `httpx.AsyncClient` with its limits (`pool/clients.py`: httpx's own
pool, which scans its connections on each request and each close, so each costs more as `k`
grows). CPU is `time.process_time()` of the client process only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchmarks.run import ServerProcess
from benchmarks.server import _response, _watch_stdin, serve_connection
from langchain_kimi._http.pool import clients

HELD_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    b"14\r\nevent: ping\ndata: {}\n\n\r\n"
)
QUICK_BATCHES, QUICK_PER_BATCH = 5, 40


async def _respond(
    method: str,  # noqa: ARG001 (the signature `serve_connection` calls)
    path: str,
    body: bytes,  # noqa: ARG001
    writer: asyncio.StreamWriter,
) -> bool:
    if path.endswith("/hold"):
        writer.write(HELD_HEAD)  # never finished: the client closes the connection
    else:
        writer.write(_response("200 OK", "application/json", b'{"ok":true}'))
    return True


async def serve(max_seconds: float) -> None:
    done = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await serve_connection(reader, writer, _respond, done)

    listener = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=4096)
    print(f"PORT {listener.sockets[0].getsockname()[1]}", flush=True)
    _watch_stdin(asyncio.get_running_loop(), done)
    async with listener:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), max_seconds)


TRANSPORTS: dict[str, Callable[[int], httpx.AsyncBaseTransport]] = {
    "ChatKimi's client": lambda _: httpx.AsyncHTTPTransport(
        limits=clients.LIMITS, verify=clients.tls_context()
    ),
}


async def _held_streams(name: str, k: int, port: int) -> dict[str, Any]:
    base = f"http://127.0.0.1:{port}"
    timeout = httpx.Timeout(120.0)
    async with httpx.AsyncClient(transport=TRANSPORTS[name](k), timeout=timeout) as client:
        await client.post(f"{base}/quick", content=b"{}")  # warm: imports, first connection
        started = time.process_time()
        held = []
        for _ in range(k):
            request = client.build_request("POST", f"{base}/hold", content=b"{}")
            held.append(await client.send(request, stream=True))
        opened = time.process_time() - started
        quick = []
        for _ in range(QUICK_BATCHES):
            started = time.process_time()
            for _ in range(QUICK_PER_BATCH):
                (await client.post(f"{base}/quick", content=b"{}")).raise_for_status()
            quick.append((time.process_time() - started) / QUICK_PER_BATCH)
        started = time.process_time()
        for response in held:
            await response.aclose()
        closed = time.process_time() - started
    return {
        "open_us": round(opened / k * 1e6, 1),
        "quick_us": round(statistics.median(quick) * 1e6, 1),
        "quick_samples_us": [round(s * 1e6, 1) for s in quick],
        "close_us": round(closed / k * 1e6, 1),
    }


def run(levels: list[int], transports: list[str]) -> dict[str, Any]:
    results: dict[str, Any] = {"load_average_1m": os.getloadavg()[0], "held": {}}
    with ServerProcess(0, 3_600, module="benchmarks.connections", options=("serve",)) as server:
        for k in levels:
            for name in transports:
                row = asyncio.run(_held_streams(name, k, server.port))
                results["held"].setdefault(name, {})[str(k)] = row
                _log(f"{k:>5} held, {name:10}: {row}")
    return results


def _log(message: str) -> None:
    print(f"[connections {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("what", nargs="?", choices=["serve"])
    parser.add_argument("--events", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--max-seconds", type=float, default=3_600.0)
    parser.add_argument("--levels", default="100,500,2000,5000")
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.what == "serve":
        asyncio.run(serve(args.max_seconds))
        return
    levels = [int(level) for level in args.levels.split(",")]
    results = run(levels, args.transports.split(","))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
