"""Rate limits on any gateway (issue 20): a matrix of token-bucket gateways, three clients.

Each cell starts a `benchmarks.gateway` process with the cell's admitted rate, burst, answer
times and `Retry-After` form. For each client (ChatKimi, ChatAnthropic, ChatOpenAI, shipped
defaults, Chat Completions / Messages as each speaks), each run sends `calls` calls through
`abatch` at `max_concurrency`, split over `processes` client processes that start together (one
pool each, as Dask or gunicorn workers behind one key). Per run: wall time / ideal (ideal = the
calls beyond the burst / rate + one mean answer, as the issue measures), requests per answer (the
gateway's count: the rest were 429s) and failed calls. Reported as the median and the spread
(min-max) over the runs. The `throughput` cells send 4 x concurrency calls to an unlimited gateway
answering at once: calls per second at 100, 500 and 2,000 concurrent `ainvoke`, and the client
processes' CPU per call (`time.process_time()` around the `abatch`).

    python -m benchmarks.rates [--quick | --kinds | --matrix] [--only TEXT] [--runs N]
                               [--client NAME] [--no-throughput] [--stop-after S]
                               [--out DIR] [--name NAME]

`--kinds` runs issue 29's other kinds of limit (`OTHER_KINDS`: a concurrency limit, tokens per
minute, sliding and fixed windows, limits that fall and rise, 503 / 529 overloads with and
without `Retry-After`, 2 s refusals, client processes sharing one concurrency limit);
`--matrix` issue 29's matrix (`MATRIX_NAMES`: most of those and five token buckets, in priority
order); `--client` (repeatable) runs only the clients named. Each repetition runs
client after client (interleaved, so a change in the machine's load hits every client alike).

Loopback only; every process is bounded (timeouts, the gateway's `--max-seconds`, stdin EOF).
Writes `rates.json` and `rates.md` (the table) under `benchmarks/results/` or `--out`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
from langchain_core.callbacks import BaseCallbackHandler

from benchmarks.limits import ideal_seconds
from benchmarks.measure import PROMPT
from benchmarks.replies import MODEL
from benchmarks.run import ServerProcess, _read_line, stop
from benchmarks.scale import (
    CAREFUL_ANTHROPIC,
    CAREFUL_OPENAI,
    CHAT_ANTHROPIC,
    CHAT_OPENAI,
    KIMI_DEFAULT,
    ROOT,
    build_careful,
    build_default,
)

KIMI_MESSAGES = "ChatKimi (Messages)"
CLIENTS = (
    KIMI_DEFAULT,
    KIMI_MESSAGES,
    CHAT_ANTHROPIC,
    CHAT_OPENAI,
    CAREFUL_ANTHROPIC,
    CAREFUL_OPENAI,
)
CAREFUL = (CAREFUL_ANTHROPIC, CAREFUL_OPENAI)
READY_TIMEOUT = 60.0


@dataclass(frozen=True)
class Cell:
    name: str
    rate: float  # requests/s; 0: unlimited
    burst: float = 1.0
    answer: tuple[float, float] = (0.05, 0.25)
    retry_after: str = "integer"
    calls: int = 400
    concurrency: int = 256
    processes: int = 1
    refusal_delay: float = 0.0  # 429s take up to this long (a gateway across a network)
    refusal_min: float = 0.0  # and at least this long
    # Issue 29's other kinds (`benchmarks.limits`): the client is not told which one it meets.
    limit: str = "bucket"  # bucket | concurrency | tokens | sliding | fixed
    concurrency_limit: int = 20
    tokens_per_minute: float = 1_200_000
    prompt_tokens: tuple[float, float] = (5_000, 15_000)
    moves: tuple[float, float] | None = None  # (seconds, new rate): the bucket's limit moves
    window: float = 1.0  # a fixed window's seconds (`rate` x `window` requests in each)
    overload: tuple[float, float, int, bool] | None = None  # share, seconds, 503/529, Retry-After

    @property
    def limited(self) -> bool:
        return bool(self.rate) or self.limit != "bucket"

    @property
    def admitted_rate(self) -> float:
        """The requests/s the gateway admits, as a careful user would set a rate limiter: the
        rate; a concurrency limit over the mean answer; tokens per minute over the mean prompt."""
        if self.limit == "concurrency":
            return self.concurrency_limit / (sum(self.answer) / 2)
        if self.limit == "tokens":
            return self.tokens_per_minute / 60 / (sum(self.prompt_tokens) / 2)
        return self.rate or 1000.0

    @property
    def ideal(self) -> float:
        """What a client that knew the limit would take (as `tests/support/pool_simulation.py`
        counts it): the calls beyond the burst at the rate plus one mean answer; the throughput
        bound for a concurrency or tokens limit."""
        answer = sum(self.answer) / 2
        if self.limit not in ("concurrency", "tokens") and not self.rate:  # unlimited
            return answer + 1.0
        return ideal_seconds(
            self.limit,
            calls=self.calls,
            answer=answer,
            rate=self.rate,
            burst=self.burst,
            # every process's calls share the one limit
            in_flight=min(self.concurrency_limit, self.concurrency * self.processes),
            prompt_tokens=sum(self.prompt_tokens) / 2,
            tokens_per_minute=self.tokens_per_minute,
            moves=self.moves,
            window=self.window,
        )


FULL = (
    Cell("50/s, 1 s burst, 50-250 ms, Retry-After: 1", 50),
    Cell("50/s, 429s taking up to 200 ms", 50, refusal_delay=0.2),
    Cell("5/s, 1 s burst, 0.2-1 s answers", 5, answer=(0.2, 1.0), calls=60),
    Cell("200/s, 0.5 s burst, 20-100 ms", 200, burst=0.5, answer=(0.02, 0.1), calls=1000),
    Cell(
        "120/s, 0.1 s burst, no Retry-After",
        120,
        burst=0.1,
        answer=(0.02, 0.08),
        retry_after="absent",
    ),
    Cell(
        "30/s, 3 s burst, 1-3 s answers, fractional",
        30,
        burst=3,
        answer=(1.0, 3.0),
        retry_after="fraction",
    ),
    Cell("50/s, 1 s burst, 0.8-2.5 s answers", 50, answer=(0.8, 2.5)),
    Cell("50/s, 0.2 s burst, 50-400 ms", 50, burst=0.2, answer=(0.05, 0.4)),
    Cell("50/s, 4 s burst, 100-500 ms", 50, burst=4, answer=(0.1, 0.5)),
    Cell("50/s, fractional Retry-After", 50, retry_after="fraction"),
    Cell("50/s, no Retry-After", 50, retry_after="absent"),
    Cell("40/s, Retry-After as an HTTP date", 40, retry_after="date"),
    Cell("20/s, Retry-After: 0", 20, retry_after="zero", calls=200),
    Cell("20/s, negative Retry-After", 20, retry_after="negative", calls=200),
    Cell("8/s, 0.2-1 s answers", 8, answer=(0.2, 1.0), calls=80),
    Cell("100/s, 4-6 s answers, 600 concurrent", 100, answer=(4, 6), calls=1000, concurrency=600),
    Cell("20/s, 10-20 s answers, 800 concurrent", 20, answer=(10, 20), calls=800, concurrency=800),
    Cell("50/s, 0.1-0.5 s, 2 processes", 50, answer=(0.1, 0.5), concurrency=128, processes=2),
    Cell("50/s, 0.8-2.5 s, 4 processes", 50, answer=(0.8, 2.5), concurrency=64, processes=4),
    Cell(
        "50/s, 0.1-0.5 s, 8 processes",
        50,
        answer=(0.1, 0.5),
        calls=800,
        concurrency=32,
        processes=8,
    ),
    # Small shares of one key: each process's last calls go alone into the rate the others
    # hold (docs/benchmarks.md, "A batch's last call, alone on a shared key").
    Cell(
        "3/s, 0.1 s burst, 20-100 ms, 8 processes, no Retry-After",
        3,
        burst=0.1,
        answer=(0.02, 0.1),
        retry_after="absent",
        calls=160,
        concurrency=64,
        processes=8,
    ),
)
OTHER_KINDS = (
    Cell(
        "concurrency limit 20, 0.1-0.5 s answers",
        0,
        answer=(0.1, 0.5),
        retry_after="absent",
        limit="concurrency",
    ),
    Cell(
        "concurrency limit 20, 0.8-2.5 s answers, Retry-After: 1",
        0,
        answer=(0.8, 2.5),
        calls=200,
        limit="concurrency",
    ),
    Cell(
        "1.2M tokens per minute, 5-15k-token prompts",
        0,
        calls=200,
        retry_after="fraction",
        limit="tokens",
    ),
    Cell("50/s sliding-window log", 50, limit="sliding"),
    Cell("50/s fixed window per second", 50, limit="fixed"),
    # A window counted per minute (Kong's rate-limiting plugin, `minute: 60`), 429s saying when
    # the minute ends (docs/benchmarks.md, "A window of a minute that says when it reopens").
    Cell(
        "60 a minute, fixed window per minute, 0.8-2.5 s answers",
        1,
        answer=(0.8, 2.5),
        calls=150,
        limit="fixed",
        window=60.0,
    ),
    Cell("50/s falling to 10/s at 2 s", 50, calls=300, moves=(2.0, 10.0)),
    Cell("10/s rising to 50/s at 3 s", 10, calls=400, moves=(3.0, 50.0)),
    Cell(
        "50/s, 30 % 503 with Retry-After: 1 for 10 s",
        50,
        calls=600,
        overload=(0.3, 10, 503, True),
    ),
    Cell(
        "50/s, 30 % 529 with Retry-After: 1 for 10 s (Messages)",
        50,
        calls=600,
        overload=(0.3, 10, 529, True),
    ),
    Cell(
        "50/s, 30 % 503 without Retry-After for 10 s",
        50,
        calls=600,
        overload=(0.3, 10, 503, False),
    ),
    # A few calls at a time: each refused call sleeps its Retry-After out of the queue, and a
    # sibling refused meanwhile once counted as a call alone (the simulation's
    # `OVERLOADED_WHILE_SIBLINGS_REST`; docs/benchmarks.md, "Overloads met by a few calls").
    Cell(
        "4 processes, 4 calls at a time each, 30 % 503 with Retry-After: 1 for 10 s",
        50,
        burst=2,
        answer=(0.05, 0.15),
        calls=200,
        concurrency=4,
        processes=4,
        overload=(0.3, 10, 503, True),
    ),
    Cell(
        "3 processes, 16 calls at a time each, 70 % 529 with Retry-After: 1 for 30 s",
        50,
        burst=4,
        answer=(0.05, 0.15),
        calls=400,
        concurrency=16,
        processes=3,
        overload=(0.7, 30, 529, True),
    ),
    Cell("50/s, 429s taking 2 s", 50, refusal_delay=2.0, refusal_min=2.0),
    # Refusals slower than the slow start's first horizon (0.25 s): the simulation's profile of
    # the same name (a pool paced behind them once waited for the slow start's schedule).
    Cell("50/s, 429s taking 0.2-0.4 s", 50, refusal_delay=0.4, refusal_min=0.2),
    # Client processes sharing one key behind one limit, enforced by the one gateway process
    # (issue 29's starved pools, `_http/limits/starved.py`; the simulation's
    # `STARVED_BEHIND_A_SHARED_CONCURRENCY_LIMIT` with fewer calls, so that a run takes 1 min).
    Cell(
        "4 processes behind a concurrency limit of 10, 1-5 s answers",
        0,
        answer=(1.0, 5.0),
        calls=200,
        concurrency=64,
        processes=4,
        limit="concurrency",
        concurrency_limit=10,
    ),
    Cell(
        "16 processes behind a concurrency limit of 20, 1-5 s answers",
        0,
        answer=(1.0, 5.0),
        calls=320,
        concurrency=16,
        processes=16,
        limit="concurrency",
        concurrency_limit=20,
    ),
)
QUICK_NAMES = (
    "50/s, 1 s burst, 50-250 ms, Retry-After: 1",
    "50/s, 429s taking up to 200 ms",
    "120/s, 0.1 s burst, no Retry-After",
    "50/s, 0.2 s burst, 50-400 ms",
    "50/s, 4 s burst, 100-500 ms",
    "50/s, no Retry-After",
    "20/s, Retry-After: 0",
    "50/s, 0.1-0.5 s, 2 processes",
)
QUICK = tuple(cell for cell in FULL if cell.name in QUICK_NAMES)
MATRIX_NAMES = (  # issue 29's matrix, in the order it runs (a run cut short keeps the first)
    "50/s, 1 s burst, 50-250 ms, Retry-After: 1",
    "50/s, 30 % 503 with Retry-After: 1 for 10 s",
    "50/s, 30 % 529 with Retry-After: 1 for 10 s (Messages)",
    "50/s, 429s taking 2 s",
    "concurrency limit 20, 0.1-0.5 s answers",
    "50/s sliding-window log",
    "50/s fixed window per second",
    "10/s rising to 50/s at 3 s",
    "50/s, 30 % 503 without Retry-After for 10 s",
    "50/s falling to 10/s at 2 s",
    "50/s, 4 s burst, 100-500 ms",
    "120/s, 0.1 s burst, no Retry-After",
    "50/s, 0.1-0.5 s, 2 processes",
    "concurrency limit 20, 0.8-2.5 s answers, Retry-After: 1",
    "1.2M tokens per minute, 5-15k-token prompts",
)
THROUGHPUT = (100, 500, 2000)


def _worker_command(name: str, port: int, calls: int, concurrency: int, rate: float) -> list[str]:
    module = [sys.executable, "-m", "benchmarks.rates", "worker"]
    return [*module, name, str(port), str(calls), str(concurrency), str(rate)]


def _one_run(name: str, port: int, cell: Cell) -> dict[str, Any]:
    """One run of `cell` for client `name`: `cell.processes` workers started together."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    share = cell.calls // cell.processes
    workers = [
        subprocess.Popen(
            _worker_command(
                name, port, share, cell.concurrency, cell.admitted_rate / cell.processes
            ),
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(cell.processes)
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None
            if _read_line(worker.stdout, timeout=READY_TIMEOUT).strip() != "READY":
                return {"error": "a worker did not start"}
        httpx.post(f"http://127.0.0.1:{port}/__reset")
        started = time.perf_counter()
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write(b"GO\n")
            worker.stdin.flush()
        outcomes = []
        limit = 20 * cell.ideal + 60
        for worker in workers:
            assert worker.stdout is not None
            line = _read_line(
                worker.stdout, timeout=max(1.0, limit - (time.perf_counter() - started))
            )
            outcomes.append(json.loads(line) if line else {"failed": share, "timeout": True})
        wall = time.perf_counter() - started
    finally:
        for worker in workers:
            stop(worker)
    stats = httpx.get(f"http://127.0.0.1:{port}/__stats").json()
    failed = sum(int(outcome["failed"]) for outcome in outcomes)
    answers = cell.calls - failed
    return {
        "wall_s": round(wall, 2),
        "wall_vs_ideal": round(wall / cell.ideal, 3) if cell.limited else None,
        "calls_per_s": round(answers / wall, 1),
        "requests_per_answer": round(stats["requests"] / answers, 3) if answers else None,
        "failed": failed,
        "cpu_ms_per_call": round(sum(o.get("cpu_s", 0.0) for o in outcomes) * 1000 / cell.calls, 2),
        "first_failure": next((o.get("first_failure") for o in outcomes if o.get("failed")), None),
        # per failed worker: its own wall and when its calls failed (`_Failures`)
        "failures": [
            {"worker_wall_s": round(o.get("wall_s", 0.0), 1), "seen": o.get("failures", [])}
            for o in outcomes
            if o.get("failed")
        ][:8],
    }


def _gateway_options(cell: Cell) -> tuple[str, ...]:
    low, high = cell.answer
    options: tuple[str, ...] = (
        "--rate", str(cell.rate), "--burst", str(cell.burst), "--retry-after", cell.retry_after,
        "--min-delay", str(low), "--max-delay", str(high),
        "--refusal-delay", str(cell.refusal_delay), "--refusal-min", str(cell.refusal_min),
        "--limit", cell.limit, "--concurrency-limit", str(cell.concurrency_limit),
        "--tokens-per-minute", str(cell.tokens_per_minute),
        "--prompt-tokens", *map(str, cell.prompt_tokens), "--window", str(cell.window),
    )  # fmt: skip
    if cell.moves is not None:
        options += ("--moves-at", str(cell.moves[0]), "--moved-rate", str(cell.moves[1]))
    if cell.overload is not None:
        share, seconds, status, retry_after = cell.overload
        options += (
            "--overload-share", str(share), "--overload-seconds", str(seconds),
            "--overload-status", str(status),
        )  # fmt: skip
        if not retry_after:
            options += ("--overload-no-retry-after",)
    return options


def _spread(values: list[float | None]) -> dict[str, float | None]:
    known = [v for v in values if v is not None]
    if not known:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(known), "min": min(known), "max": max(known)}


def run_cell(cell: Cell, runs: dict[str, int]) -> dict[str, Any]:
    """Every client's runs against one gateway process."""
    options = _gateway_options(cell)
    bound = sum(runs.values()) * (20 * cell.ideal + 90)
    results: dict[str, Any] = {"cell": asdict(cell), "ideal_s": round(cell.ideal, 2), "clients": {}}
    results["load_1m_before"] = os.getloadavg()[0]
    with ServerProcess(8, bound, module="benchmarks.gateway", options=options) as gateway:
        rows_of: dict[str, list[dict[str, Any]]] = {name: [] for name in runs}
        for repetition in range(max(runs.values(), default=0)):  # client after client, each time
            for name, count in runs.items():
                if repetition < count:
                    rows_of[name].append(_one_run(name, gateway.port, cell))
                    _log(f"{cell.name} / {name} run {repetition + 1}: {rows_of[name][-1]}")
        for name, rows in rows_of.items():
            results["clients"][name] = {
                "runs": rows,
                "wall_vs_ideal": _spread([r.get("wall_vs_ideal") for r in rows]),
                "requests_per_answer": _spread([r.get("requests_per_answer") for r in rows]),
                "failed": _spread([r.get("failed") for r in rows]),
                "calls_per_s": _spread([r.get("calls_per_s") for r in rows]),
                "cpu_ms_per_call": _spread([r.get("cpu_ms_per_call") for r in rows]),
            }
    results["load_1m_after"] = os.getloadavg()[0]
    return results


def _log(message: str) -> None:
    print(f"[rates {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _range(spread: dict[str, float | None], digits: int = 2) -> str:
    if spread["median"] is None:
        return "-"
    low, mid, high = spread["min"], spread["median"], spread["max"]
    if low == high:
        return f"{mid:.{digits}f}"
    return f"{mid:.{digits}f} ({low:.{digits}f}-{high:.{digits}f})"


def markdown(results: dict[str, Any]) -> str:
    out = [
        "| gateway profile | client | runs | wall / ideal | requests / answer | failed calls "
        "| load (1 min) |",
        "|---|---|---:|---|---|---|---|",
    ]
    for cell in results["cells"]:
        load = f"{cell.get('load_1m_before', 0):.1f}-{cell.get('load_1m_after', 0):.1f}"
        for name, row in cell["clients"].items():
            out.append(
                f"| {cell['cell']['name']} | {name} | {len(row['runs'])} | "
                f"{_range(row['wall_vs_ideal'])} | {_range(row['requests_per_answer'])} | "
                f"{_range(row['failed'], 0)} | {load} |"
            )
    out += [
        "",
        "| concurrent `ainvoke`, unlimited gateway | client | runs | calls / s | CPU ms / call |",
        "|---|---|---:|---|---|",
    ]
    for cell in results["throughput"]:
        for name, row in cell["clients"].items():
            cpu = row.get("cpu_ms_per_call", {"median": None})
            out.append(
                f"| {cell['cell']['concurrency']:,} | {name} | {len(row['runs'])} | "
                f"{_range(row['calls_per_s'], 0)} | {_range(cpu)} |"
            )
    return "\n".join(out) + "\n"


def clients_for(
    cell: Cell, runs: int, peer_runs: int, *, only: tuple[str, ...] = ()
) -> dict[str, int]:
    """The clients a cell runs, with their run counts: a 529 is Messages' overload, so that cell
    runs ChatKimi on Messages and ChatAnthropic only (ChatOpenAI does not speak it); `only`: of
    those, just the clients named."""
    if cell.overload is not None and cell.overload[2] == 529:
        chosen = {KIMI_MESSAGES: runs, CHAT_ANTHROPIC: peer_runs, CAREFUL_ANTHROPIC: peer_runs}
    else:
        chosen = {
            KIMI_DEFAULT: runs,
            CHAT_ANTHROPIC: peer_runs,
            CHAT_OPENAI: peer_runs,
            CAREFUL_ANTHROPIC: peer_runs,
            CAREFUL_OPENAI: peer_runs,
        }
    return {name: count for name, count in chosen.items() if not only or name in only}


def run(
    cells: tuple[Cell, ...],
    *,
    runs: int,
    peer_runs: int,
    throughput: tuple[int, ...],
    partial: Path | None = None,
    stop_after: float | None = None,
    only: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Every cell, then the throughput cells; `partial`: the results so far are written there
    after each cell (a run cut short keeps what it measured); `stop_after`: seconds after which
    no new cell starts; `only`: just these clients (`clients_for`)."""
    started = time.perf_counter()
    results: dict[str, Any] = {
        "runs": runs,
        "peer_runs": peer_runs,
        "load_average_1m": os.getloadavg()[0],
        "cells": [],
        "throughput": [],
    }
    for cell in cells:
        if stop_after is not None and time.perf_counter() - started > stop_after:
            results["stopped_before"] = cell.name  # no new cell after --stop-after seconds
            break
        chosen = clients_for(cell, runs, peer_runs, only=only)
        if chosen:
            results["cells"].append(run_cell(cell, chosen))
        results["load_average_1m_after"] = os.getloadavg()[0]
        if partial is not None:
            partial.write_text(json.dumps(results, indent=2) + "\n")
    for c in throughput:
        cell = Cell(f"{c} concurrent", 0, answer=(0.0, 0.0), calls=4 * c, concurrency=c)
        results["throughput"].append(run_cell(cell, clients_for(cell, runs, peer_runs, only=only)))
    results["elapsed_s"] = round(time.perf_counter() - started, 1)
    return results


class _Failures(BaseCallbackHandler):
    """When each call of a worker fails, and how many of the worker's calls were unfinished then
    (1: the worker's last call, alone on its pool)."""

    run_inline = True  # counted on the event loop, in order

    def __init__(self, calls: int) -> None:
        self.unfinished = calls
        self.started = time.perf_counter()
        self.seen: list[dict[str, float]] = []

    def on_llm_end(self, *args: Any, **kwargs: Any) -> None:
        self.unfinished -= 1

    def on_llm_error(self, *args: Any, **kwargs: Any) -> None:
        at = round(time.perf_counter() - self.started, 1)
        self.seen.append({"at_s": at, "unfinished": self.unfinished})
        self.unfinished -= 1


async def _worker(
    name: str, port: int, calls: int, concurrency: int, rate: float
) -> dict[str, Any]:
    model: Any
    if name in CAREFUL:
        model = build_careful(name, port, rate, key="bench-rates")
    elif name == KIMI_MESSAGES:
        from langchain_kimi import ChatKimi

        root = f"http://127.0.0.1:{port}"
        model = ChatKimi(model=MODEL, base_url=root, api_key="bench-rates", protocol="anthropic")
    else:
        model = build_default(name, port, key="bench-rates")
    print("READY", flush=True)
    if sys.stdin.readline().strip() != "GO":
        return {"failed": calls, "first_failure": "no GO"}
    cpu = time.process_time()
    seen = _Failures(calls)
    config = {"max_concurrency": concurrency, "callbacks": [seen]}
    results = await model.abatch([PROMPT] * calls, config, return_exceptions=True)  # type: ignore[arg-type]
    cpu = time.process_time() - cpu
    failures = [r for r in results if isinstance(r, BaseException)]
    first = f"{type(failures[0]).__name__}: {failures[0]}"[:200] if failures else None
    outcome = {"failed": len(failures), "first_failure": first, "cpu_s": cpu}
    return outcome | {"failures": seen.seen[:20], "wall_s": time.perf_counter() - seen.started}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="what")
    worker = sub.add_parser("worker")
    worker.add_argument("name", choices=CLIENTS)
    worker.add_argument("port", type=int)
    worker.add_argument("calls", type=int)
    worker.add_argument("concurrency", type=int)
    worker.add_argument("rate", type=float, help="a careful peer's rate limiter, requests/s")
    parser.add_argument("--quick", action="store_true", help="eight cells, fewer runs")
    parser.add_argument(
        "--kinds", action="store_true", help="issue 29's other kinds of limit instead"
    )
    parser.add_argument("--matrix", action="store_true", help="issue 29's matrix (MATRIX_NAMES)")
    parser.add_argument("--only", action="append", default=[], help="cells whose name has this")
    parser.add_argument("--runs", type=int, help="runs per cell and client (peers too)")
    parser.add_argument(
        "--client", action="append", default=[], choices=CLIENTS, help="only this client"
    )
    parser.add_argument("--no-throughput", action="store_true")
    parser.add_argument("--stop-after", type=float, help="start no cell after this many seconds")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--name", default="rates", help="the results' file names")
    args = parser.parse_args(argv)
    if args.what == "worker":
        outcome = asyncio.run(
            _worker(args.name, args.port, args.calls, args.concurrency, args.rate)
        )
        print(json.dumps(outcome), flush=True)
        return
    if args.matrix:
        known = {cell.name: cell for cell in FULL + OTHER_KINDS}
        cells = tuple(known[name] for name in MATRIX_NAMES)
    else:
        cells = OTHER_KINDS if args.kinds else QUICK if args.quick else FULL
    if args.only:
        cells = tuple(cell for cell in cells if any(part in cell.name for part in args.only))
    runs = args.runs or (2 if args.quick else 3)
    peer_runs = args.runs or 1
    levels = () if args.no_throughput else THROUGHPUT[:2] if args.quick else THROUGHPUT
    args.out.mkdir(parents=True, exist_ok=True)
    partial = args.out / f"{args.name}.partial.json"
    results = run(
        cells,
        runs=runs,
        peer_runs=peer_runs,
        throughput=levels,
        partial=partial,
        stop_after=args.stop_after,
        only=tuple(args.client),
    )
    (args.out / f"{args.name}.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / f"{args.name}.md").write_text(markdown(results))
    partial.unlink(missing_ok=True)
    _log(f"done in {results['elapsed_s']} s: {args.out / (args.name + '.md')}")


if __name__ == "__main__":
    main()
