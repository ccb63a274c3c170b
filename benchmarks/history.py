"""The ~1M-token request: a 2,000-turn (~4 MB) history sent in one `invoke`.

Each client runs in a fresh interpreter (`python -m benchmarks.history --client NAME ...`) so
that its peak memory is its own: the history is built first (the caller's cost, not counted),
the call is timed `--runs` times (wall and CPU), then once more under `tracemalloc` for the peak
of what the call itself allocated (tracemalloc slows Python down, so it never times).

`--client floor` is the reference: `json.dumps` of an equivalent, already-built Chat Completions
body plus one raw `httpx` POST of those bytes: the least any client must do.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from benchmarks.clients import API_KEY, MODEL

FLOOR = "floor"
TURN_CHARS = 2_000
_ROOT = Path(__file__).resolve().parent.parent

# langchain-core warns once per model about profile keys it does not know yet (ChatKimi's
# capability keys); noise for the benchmark output, not a measured effect.
warnings.filterwarnings("ignore", message="Unrecognized keys in model profile")


def history(turns: int) -> list[BaseMessage]:
    """`turns` alternating user/assistant messages of ~2,000 chars each, then a question."""
    words = ("context", "token", "window", "cache", "reply", "stream", "answer", "model")
    base = " ".join(words[(i * 7 + i // 3) % len(words)] for i in range(1_200))
    messages: list[BaseMessage] = []
    for i in range(turns):
        offset = (i * 37) % 1_000
        text = f"[turn {i}] {base[offset : offset + TURN_CHARS - 12]}"
        messages.append(HumanMessage(text) if i % 2 == 0 else AIMessage(text))
    messages.append(HumanMessage("Summarize the conversation in one line."))
    return messages


def _floor_call(root: str, messages: list[BaseMessage]) -> Callable[[], None]:
    client = httpx.Client(timeout=120.0)
    roles = {"human": "user", "ai": "assistant"}
    body = {
        "model": MODEL,
        "messages": [{"role": roles[m.type], "content": m.content} for m in messages],
    }

    def call() -> None:
        payload = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        reply = client.post(
            f"{root}/v1/chat/completions",
            content=payload,
            headers={"authorization": f"Bearer {API_KEY}", "content-type": "application/json"},
        )
        reply.raise_for_status()
        reply.json()

    return call


def _serialize_ms(messages: list[BaseMessage], runs: int) -> float:
    roles = {"human": "user", "ai": "assistant"}
    body = {
        "model": MODEL,
        "messages": [{"role": roles[m.type], "content": m.content} for m in messages],
    }
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        samples.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(samples)


def measure(client: str, port: int, turns: int, runs: int) -> dict[str, Any]:
    root = f"http://127.0.0.1:{port}"
    messages = history(turns)
    if client == FLOOR:
        call = _floor_call(root, messages)
    else:
        from benchmarks.clients import build
        from benchmarks.measure import PROMPT

        model = build(client, port)
        model.invoke(PROMPT)  # imports, connection pool, lazy clients: not the history's cost

        def call() -> None:
            model.invoke(messages)

    call()  # warm-up with the full history
    wall, cpu = [], []
    for _ in range(runs):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        call()
        wall.append((time.perf_counter() - start_wall) * 1000.0)
        cpu.append((time.process_time() - start_cpu) * 1000.0)
    tracemalloc.start()
    base, _ = tracemalloc.get_traced_memory()
    call()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    sent = httpx.get(f"{root}/__stats").json()["last_body"]
    result: dict[str, Any] = {
        "wall_ms": statistics.median(wall),
        "cpu_ms": statistics.median(cpu),
        "wall_samples": [round(s, 2) for s in wall],
        "peak_mb": (peak - base) / 1e6,
        "body_bytes": sent,
        "messages": len(messages),
    }
    if client == FLOOR:
        result["serialize_ms"] = _serialize_ms(messages, max(runs, 3))
    return result


def run_in_subprocess(
    client: str, port: int, turns: int, runs: int, timeout: float = 300.0
) -> dict[str, Any]:
    """Measure `client` in a fresh interpreter; failures come back as `{"error": ...}`."""
    command = [sys.executable, "-m", "benchmarks.history", "--client", client]
    command += ["--port", str(port), "--turns", str(turns), "--runs", str(runs)]
    try:
        done = subprocess.run(
            command, cwd=_ROOT, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--client", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--turns", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.client, args.port, args.turns, args.runs)))


if __name__ == "__main__":
    main()
