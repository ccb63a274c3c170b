"""Import cost in fresh interpreters: `python -c "<import>"` minus `python -c "pass"`.

Measured as the child's CPU time (user + system, from `getrusage(RUSAGE_CHILDREN)`), which a
busy machine inflates far less than wall time; wall time is kept alongside.

The floor is what any LangChain chat model speaking HTTP must import: `BaseChatModel` (from
`langchain_core.language_models`, which brings messages, outputs, callbacks and pydantic) and
`httpx`. Byte-code caches are warmed once before timing; targets are interleaved per round.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent

BASELINE = "pass"
FLOOR = "floor"
TARGETS: dict[str, str] = {
    FLOOR: "from langchain_core.language_models import BaseChatModel; import httpx",
    "kimi": "from langchain_kimi import ChatKimi",
    "ChatAnthropic": "from langchain_anthropic import ChatAnthropic",
    "ChatOpenAI": "from langchain_openai import ChatOpenAI",
    "ChatDeepSeek": "from langchain_deepseek import ChatDeepSeek",
}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cost_ms(code: str) -> tuple[float, float]:
    """(CPU ms, wall ms) of one fresh interpreter running `code`."""
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    cpu, wall = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=_ROOT, env=env, check=True)
    return (_children_cpu() - cpu) * 1000.0, (time.perf_counter() - wall) * 1000.0


def import_times(
    repeats: int, targets: dict[str, str] | None = None, *, warm_up: bool = True
) -> dict[str, list[tuple[float, float]]]:
    """Per target (and the bare interpreter, key `BASELINE`), `repeats` (CPU, wall) samples."""
    chosen = TARGETS if targets is None else targets
    for code in chosen.values() if warm_up else ():
        _cost_ms(code)  # write byte-code caches, fill the OS page cache
    samples: dict[str, list[tuple[float, float]]] = {BASELINE: []}
    samples.update({name: [] for name in chosen})
    for _ in range(repeats):
        samples[BASELINE].append(_cost_ms(BASELINE))
        for name, code in chosen.items():
            samples[name].append(_cost_ms(code))
    return samples


def summarize(samples: dict[str, list[tuple[float, float]]]) -> dict[str, dict[str, object]]:
    """Median import ms per target above the bare interpreter: CPU (`median`) and wall."""
    bare_cpu = statistics.median(cpu for cpu, _ in samples[BASELINE])
    bare_wall = statistics.median(wall for _, wall in samples[BASELINE])
    out: dict[str, dict[str, object]] = {
        name: {
            "median": statistics.median(cpu for cpu, _ in values) - bare_cpu,
            "wall_median": statistics.median(wall for _, wall in values) - bare_wall,
            "cpu_samples": [round(cpu, 1) for cpu, _ in values],
            "code": TARGETS.get(name, ""),
        }
        for name, values in samples.items()
        if name != BASELINE
    }
    out["interpreter_start"] = {"median": bare_cpu, "wall_median": bare_wall, "code": BASELINE}
    return out
