"""Bulk work: goodput under a rate limit, throughput past the pool size, many concurrent streams.

Every client talks to `benchmarks.gateway` (a separate process) with its shipped defaults — no
tuning by the caller, retries as each SDK ships them:

- `goodput`: N calls through `abatch` (one event loop) and through `batch` (a thread pool), both at
  `max_concurrency`, against a gateway admitting `rate` requests/s (429 + Retry-After beyond it)
  and answering after 0.2-2 s. Reports wall time against the ideal (answers / rate), requests sent
  per answer (the rest were 429s) and calls that failed after their retries.
- `streams`: `streams` concurrent `astream`s of ~500 events each on one event loop, in a fresh
  interpreter per client (so peak memory is that client's): CPU per streamed chunk, peak RSS growth
  per stream in flight, and the worst lag of a 10 ms ticker on the same loop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from langchain_core.language_models import BaseChatModel

from benchmarks.measure import PROMPT

ROOT = Path(__file__).resolve().parent.parent
MODEL = "kimi-k3.1-pro"

KIMI_DEFAULT = "ChatKimi"
KIMI_NOT_ADAPTIVE = "ChatKimi (adaptive off)"
CHAT_ANTHROPIC = "ChatAnthropic"
CHAT_OPENAI = "ChatOpenAI"
CAREFUL_ANTHROPIC = "ChatAnthropic, rate limiter"
CAREFUL_OPENAI = "ChatOpenAI, rate limiter"
CAREFUL_RETRIES = 6
"""`max_retries` of a careful peer (its default is 2)."""
GOODPUT_CLIENTS = (KIMI_DEFAULT, KIMI_NOT_ADAPTIVE, CHAT_ANTHROPIC, CHAT_OPENAI)
STREAM_CLIENTS = (KIMI_DEFAULT, CHAT_ANTHROPIC, CHAT_OPENAI)


def build_careful(name: str, port: int, rate: float, key: str = "bench") -> BaseChatModel:
    """A peer as a careful user configures it: LangChain's own `InMemoryRateLimiter` at the
    gateway's rate (`rate` requests/s, this process's share), `max_retries` raised."""
    from langchain_core.rate_limiters import InMemoryRateLimiter

    limiter = InMemoryRateLimiter(requests_per_second=rate, check_every_n_seconds=0.01)
    careful = {"rate_limiter": limiter, "max_retries": CAREFUL_RETRIES, "api_key": key}
    root = f"http://127.0.0.1:{port}"
    if name == CAREFUL_ANTHROPIC:
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic.model_validate({"model": MODEL, "base_url": root, **careful})
    from langchain_openai import ChatOpenAI

    return ChatOpenAI.model_validate({"model": MODEL, "base_url": f"{root}/v1", **careful})


def build_default(name: str, port: int, key: str = "bench") -> BaseChatModel:
    """`name` with its shipped defaults, aimed at the gateway; `key` separates ChatKimi pools."""
    root = f"http://127.0.0.1:{port}"
    if name in (KIMI_DEFAULT, KIMI_NOT_ADAPTIVE):
        from langchain_kimi import ChatKimi

        fields = {"model": MODEL, "base_url": root, "api_key": key}
        return ChatKimi.model_validate({**fields, "adaptive_concurrency": name == KIMI_DEFAULT})
    if name == CHAT_ANTHROPIC:
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic.model_validate({"model": MODEL, "base_url": root, "api_key": key})
    from langchain_openai import ChatOpenAI

    return ChatOpenAI.model_validate({"model": MODEL, "base_url": f"{root}/v1", "api_key": key})


def _gateway(port: int, action: str) -> dict[str, int]:
    url = f"http://127.0.0.1:{port}/__{action}"
    response = httpx.post(url) if action == "reset" else httpx.get(url)
    result: dict[str, int] = response.json()
    return result


def goodput(
    name: str, port: int, *, calls: int, concurrency: int, rate: float, mode: str
) -> dict[str, Any]:
    """One goodput case; `mode` is "abatch" or "batch" (threads)."""
    model = build_default(name, port, key=f"bench-{mode}-{concurrency}-{name}")
    config = {"max_concurrency": concurrency}
    inputs = [PROMPT] * calls
    _gateway(port, "reset")
    started = time.perf_counter()
    if mode == "abatch":
        results = asyncio.run(model.abatch(inputs, config, return_exceptions=True))  # type: ignore[arg-type]
    else:
        results = model.batch(inputs, config, return_exceptions=True)  # type: ignore[arg-type]
    wall = time.perf_counter() - started
    stats = _gateway(port, "stats")
    failures = [r for r in results if isinstance(r, BaseException)]
    answers = calls - len(failures)
    ideal = answers / rate
    return {
        "calls": calls,
        "concurrency": concurrency,
        "wall_s": round(wall, 2),
        "ideal_s": round(ideal, 2),
        "wall_vs_ideal": round(wall / ideal, 3) if answers else None,
        "requests": stats["requests"],
        "throttled": stats["throttled"],
        "requests_per_answer": round(stats["requests"] / answers, 3) if answers else None,
        "failures": len(failures),
        "first_failure": f"{type(failures[0]).__name__}: {failures[0]}"[:200] if failures else None,
    }


# -- many streams (one fresh interpreter per client) -------------------------------------------


def _rss_kib() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


async def _many_streams(model: BaseChatModel, streams: int) -> dict[str, Any]:
    chunks = 0
    errors: list[BaseException] = []
    worst_lag = 0.0
    running = True

    async def ticker() -> None:
        nonlocal worst_lag
        while running:
            before = time.perf_counter()
            await asyncio.sleep(0.01)
            worst_lag = max(worst_lag, time.perf_counter() - before - 0.01)

    async def one() -> None:
        nonlocal chunks
        try:
            async for _ in model.astream(PROMPT):
                chunks += 1
        except Exception as exc:
            errors.append(exc)

    async for _ in model.astream(PROMPT):  # warm up: imports, pools, caches
        pass
    baseline = _rss_kib()
    tick = asyncio.create_task(ticker())
    cpu = time.process_time()
    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(streams)))
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu
    running = False
    await tick
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {
        "streams": streams,
        "chunks": chunks,
        "errors": len(errors),
        "first_error": repr(errors[0])[:200] if errors else None,
        "wall_s": round(wall, 2),
        "cpu_us_per_chunk": round(cpu / max(chunks, 1) * 1e6, 1),
        "peak_kib_per_stream": round(max(0, peak - baseline) / streams, 1),
        "worst_loop_lag_ms": round(worst_lag * 1000, 1),
    }


def streams_here(name: str, port: int, streams: int) -> dict[str, Any]:
    """The streams case in this process (its peak-memory figure then includes everything else)."""
    return asyncio.run(_many_streams(build_default(name, port), streams))


def streams_in_subprocess(name: str, port: int, streams: int) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.scale", "streams", name, str(port), str(streams)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("what", choices=["streams"])
    parser.add_argument("name", choices=STREAM_CLIENTS)
    parser.add_argument("port", type=int)
    parser.add_argument("streams", type=int)
    args = parser.parse_args(argv)
    print(json.dumps(streams_here(args.name, args.port, args.streams)))


if __name__ == "__main__":
    main()
