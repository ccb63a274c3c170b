"""Run every benchmark in one go: `python -m benchmarks.run [--quick | --tiny] [--out DIR]`.

Starts the loopback server (`benchmarks.server`) as a separate process, measures every client
on the same replies, writes `benchmarks/results/latest.json` (kept in git: the one summary),
its tables as `benchmarks/results/latest.md` (docs/benchmarks.md quotes them; not kept, as
`--report-only` renders it again from the JSON) and the chart `docs/img/benchmarks.png` (or all
three into `--out DIR`), and stops the server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import subprocess
import sys
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, NamedTuple

import httpx

from benchmarks import environment, history, imports, measure, report, scale
from benchmarks.clients import CLIENTS, KIMI_ANTHROPIC, KIMI_OPENAI, build, parsed_chunks
from benchmarks.floors import FloorChatModel, ParseFloorChatModel, raw_httpx_invoke
from benchmarks.replies import replies_for

ROOT = Path(__file__).resolve().parent.parent

# langchain-core warns once per model about profile keys it does not know yet (ChatKimi's
# capability keys); noise for the benchmark output, not a measured effect.
warnings.filterwarnings("ignore", message="Unrecognized keys in model profile")
KIMI = {"anthropic": KIMI_ANTHROPIC, "openai": KIMI_OPENAI}


class Load(NamedTuple):
    """One goodput case: how many calls, and how many of them at once."""

    calls: int
    concurrency: int


@dataclass(frozen=True)
class Config:
    events: int = 500
    invoke_iterations: int = 100
    stream_iterations: int = 10
    runs: int = 7
    concurrency: int = 100
    concurrency_runs: int = 7
    turns: int = 2_000
    history_runs: int = 5
    import_repeats: int = 11
    isolate: bool = True
    """History and streams in a fresh interpreter per client, imports warmed up first (off: tiny
    only)."""
    scale_levels: tuple[int, ...] = (100, 500, 2_000)
    """Concurrent `ainvoke`s past the pool size: calls/s must not fall as this rises."""
    scale_runs: int = 3
    rate: float = 50.0
    """The rate-limited gateway's requests/s (goodput section)."""
    goodput: Load = Load(2_000, 64)  # noqa: RUF009 (a NamedTuple is immutable)
    """About the gateway's rate: enough calls to keep it busy for a while."""
    overload: Load = Load(500, 256)  # noqa: RUF009 (a NamedTuple is immutable)
    """5x overload: far more calls in flight than the gateway admits per second."""
    streams: int = 1_000
    think_seconds: tuple[float, float] = (0.2, 2.0)
    """The gateway's answer delay range (uniform) for JSON replies."""
    stream_seconds: float = 5.0
    """How long the gateway takes to send one paced stream."""


PROFILES = {
    "full": Config(),
    "quick": Config(
        invoke_iterations=40,
        stream_iterations=4,
        runs=3,
        concurrency_runs=3,
        history_runs=2,
        import_repeats=3,
        scale_runs=1,
        goodput=Load(calls=300, concurrency=64),
        overload=Load(calls=200, concurrency=256),
        streams=200,
    ),
    # For the smoke test: every section and client, a tiny workload, no statistical value.
    "tiny": Config(
        events=40,
        invoke_iterations=2,
        stream_iterations=1,
        runs=1,
        concurrency=5,
        concurrency_runs=1,
        turns=10,
        history_runs=1,
        import_repeats=1,
        isolate=False,
        scale_levels=(5, 10),
        scale_runs=1,
        # A bucket of 2 requests/s (burst 2): the overload's 4 calls leave at once, so 2 of them
        # meet a 429 unless sending 4 requests takes the client a whole second (a load-proof
        # margin); one retry after `Retry-After: 1` admits them, well within `max_retries`.
        rate=2.0,
        goodput=Load(calls=2, concurrency=2),
        overload=Load(calls=4, concurrency=4),
        streams=4,
        think_seconds=(0.01, 0.05),
        stream_seconds=0.5,
    ),
}


STARTUP_TIMEOUT = 30.0
"""Seconds to wait for the server's `PORT` line: a child that hangs before binding fails the run."""


def _read_line(stream: IO[bytes], *, timeout: float) -> str:
    ready, _, _ = select.select([stream], [], [], timeout)
    return stream.readline().decode() if ready else ""


class ServerProcess:
    """The loopback server in its own process; bounded by `max_seconds` and by our stdin pipe."""

    def __init__(
        self,
        events: int,
        max_seconds: float,
        module: str = "benchmarks.server",
        options: tuple[str, ...] = (),
    ) -> None:
        self._command = [sys.executable, "-m", module, "--events", str(events)]
        self._command += ["--max-seconds", str(max_seconds), *options]
        self._proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    def __enter__(self) -> ServerProcess:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self._proc = subprocess.Popen(
            self._command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        stdout: IO[bytes] | None = self._proc.stdout
        line = _read_line(stdout, timeout=STARTUP_TIMEOUT) if stdout is not None else ""
        if not line.startswith("PORT "):
            self.__exit__()
            msg = f"benchmark server did not start (said {line!r})"
            raise RuntimeError(msg)
        self.port = int(line.split()[1])
        return self

    def stats(self) -> dict[str, int]:
        stats: dict[str, int] = httpx.get(f"http://127.0.0.1:{self.port}/__stats").json()
        return stats

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is None:
            return
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(f"http://127.0.0.1:{self.port}/__shutdown", timeout=2.0)
        stop(proc)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End a child that stops at stdin EOF: close its stdin, wait (kill after 10 s), close."""
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def _log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _series(values: dict[str, measure.Series]) -> dict[str, Any]:
    return {name: series.as_dict() for name, series in values.items()}


def _at_scale(config: Config) -> dict[str, Any]:
    """Goodput against the rate-limited gateway, then many concurrent streams."""
    out: dict[str, Any] = {"goodput": {}, "streams": {}}
    low, high = config.think_seconds
    options = ("--rate", str(config.rate), "--min-delay", str(low), "--max-delay", str(high))
    with ServerProcess(config.events, 1_800, "benchmarks.gateway", options) as gateway:
        cases = [("abatch", config.goodput), ("batch", config.goodput), ("abatch", config.overload)]
        for mode, (calls, concurrency) in cases:
            case = f"{mode} {calls} @ {concurrency}"
            _log(f"goodput: {case} against {config.rate:g} requests/s")
            out["goodput"][case] = {
                name: scale.goodput(
                    name,
                    gateway.port,
                    calls=calls,
                    concurrency=concurrency,
                    rate=config.rate,
                    mode=mode,
                )
                for name in scale.GOODPUT_CLIENTS
            }
    paced = ("--rate", "0", "--stream-seconds", str(config.stream_seconds))
    with ServerProcess(config.events, 1_800, "benchmarks.gateway", paced) as gateway:
        for name in scale.STREAM_CLIENTS:
            _log(f"{config.streams} concurrent astream: {name}")
            if config.isolate:
                out["streams"][name] = scale.streams_in_subprocess(
                    name, gateway.port, config.streams
                )
            else:  # tiny: every code path but the fresh interpreters, to stay fast
                out["streams"][name] = scale.streams_here(name, gateway.port, config.streams)
    return out


def run(profile: str) -> dict[str, Any]:
    """Every section for every client; returns the results document."""
    config = PROFILES[profile]
    started = time.perf_counter()
    results: dict[str, Any] = {
        "profile": profile,
        "config": asdict(config),
        "environment": environment.describe(),
    }
    with ServerProcess(config.events, max_seconds=1_200) as server:
        models = {name: build(name, server.port) for name in CLIENTS}
        floors = {
            protocol: FloorChatModel(
                chunks=parsed_chunks(models[kimi], measure.PROMPT),
                message=models[kimi].invoke(measure.PROMPT),
            )
            for protocol, kimi in KIMI.items()
        }
        _log(f"server on port {server.port}; invoke CPU")
        invokers: dict[str, Any] = dict(models)
        for protocol in KIMI:
            invokers[f"floor-{protocol}"] = floors[protocol]
            invokers[f"httpx-{protocol}"] = raw_httpx_invoke(server.port, protocol)
        results["invoke_cpu_ms"] = _series(
            measure.cpu_per_call(
                invokers, mode="invoke", iterations=config.invoke_iterations, runs=config.runs
            )
        )
        _log("stream CPU")
        streamers: dict[str, Any] = dict(models)
        for protocol in KIMI:
            streamers[f"floor-{protocol}"] = floors[protocol]
            streamers[f"parse-floor-{protocol}"] = ParseFloorChatModel(
                sse_body=replies_for(protocol, config.events).sse_body, protocol=protocol
            )
        results["stream_cpu_ms"] = _series(
            measure.cpu_per_call(
                streamers, mode="stream", iterations=config.stream_iterations, runs=config.runs
            )
        )
        _log(f"{config.concurrency} concurrent ainvoke")
        fresh = {name: build(name, server.port) for name in CLIENTS}
        results["concurrency"] = _series(
            measure.concurrent_throughput(
                fresh, concurrency=config.concurrency, runs=config.concurrency_runs
            )
        )
        _log(f"{config.turns}-turn history, one subprocess per client")
        names = (history.FLOOR, *CLIENTS)
        if config.isolate:
            results["history"] = {
                name: history.run_in_subprocess(
                    name, server.port, config.turns, config.history_runs
                )
                for name in names
            }
        else:  # tiny: every code path but the fresh interpreters, to stay fast
            results["history"] = {
                name: history.measure(name, server.port, config.turns, config.history_runs)
                for name in names
            }
        _log(f"past the pool: {config.scale_levels} concurrent ainvoke")
        results["scale"] = {
            str(level): _series(
                measure.concurrent_throughput(
                    {name: build(name, server.port) for name in KIMI.values()},
                    concurrency=level,
                    runs=config.scale_runs,
                )
            )
            for level in config.scale_levels
        }
        results["server"] = server.stats()
    results.update(_at_scale(config))
    _log("import times")
    # The tiny profile times only the target pair: fresh interpreters importing every peer cost
    # seconds each, too slow for a smoke test.
    targets = {k: imports.TARGETS[k] for k in ("floor", "kimi")} if profile == "tiny" else None
    samples = imports.import_times(config.import_repeats, targets, warm_up=config.isolate)
    results["imports_ms"] = imports.summarize(samples)
    results["elapsed_s"] = round(time.perf_counter() - started, 1)
    results["targets"] = report.evaluate(results)
    return results


def one_line_per_key(results: dict[str, Any]) -> str:
    """The results as JSON, one top-level key per line: readable in a diff, short in the tree."""
    lines = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in results.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="fewer repetitions (~2 min)")
    mode.add_argument("--tiny", action="store_true", help="tiny workload (smoke test)")
    mode.add_argument(
        "--report-only",
        action="store_true",
        help="re-render the page and chart from the existing latest.json, measuring nothing",
    )
    parser.add_argument("--out", type=Path, help="write all outputs here instead of the repo")
    args = parser.parse_args(argv)
    profile = "tiny" if args.tiny else "quick" if args.quick else "full"
    if args.out is not None:
        paths = (args.out / "latest.json", args.out / "benchmarks.md", args.out / "benchmarks.png")
    else:
        paths = (
            ROOT / "benchmarks" / "results" / "latest.json",
            ROOT / "benchmarks" / "results" / "latest.md",
            ROOT / "docs" / "img" / "benchmarks.png",
        )
    json_path, md_path, png_path = paths
    results: dict[str, Any]
    if args.report_only:
        results = json.loads(json_path.read_text())
        results["targets"] = report.evaluate(results)
    else:
        results = run(profile)
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(one_line_per_key(results))
    report.chart(results, png_path)
    image = os.path.relpath(png_path, md_path.parent)
    md_path.write_text(report.markdown(results, image))
    _log(f"done in {results['elapsed_s']} s: {json_path}, {md_path}, {png_path}")
    return results


if __name__ == "__main__":
    main()
