"""Import time in fresh interpreters: wall time of `python -c "<import>"` minus `python -c "pass"`.

The floor is what any LangChain chat model speaking HTTP must import: `BaseChatModel` (from
`langchain_core.language_models`, which brings messages, outputs, callbacks and pydantic) and
`httpx`. Byte-code caches are warmed once before timing; targets are interleaved per round.
"""

from __future__ import annotations

import os
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


def _wall_ms(code: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=_ROOT, env=env, check=True)
    return (time.perf_counter() - start) * 1000.0


def import_times(repeats: int, targets: dict[str, str] | None = None) -> dict[str, list[float]]:
    """Per target (and for the bare interpreter, key `BASELINE`), `repeats` wall-time samples."""
    chosen = TARGETS if targets is None else targets
    for code in chosen.values():
        _wall_ms(code)  # write byte-code caches
    samples: dict[str, list[float]] = {BASELINE: [], **{name: [] for name in chosen}}
    for _ in range(repeats):
        samples[BASELINE].append(_wall_ms(BASELINE))
        for name, code in chosen.items():
            samples[name].append(_wall_ms(code))
    return samples


def summarize(samples: dict[str, list[float]]) -> dict[str, dict[str, object]]:
    """Median import ms per target: median wall minus the bare interpreter's median wall."""
    bare = statistics.median(samples[BASELINE])
    return {
        name: {
            "median": statistics.median(values) - bare,
            "wall_samples": [round(v, 2) for v in values],
            "code": TARGETS.get(name, ""),
        }
        for name, values in samples.items()
        if name != BASELINE
    } | {"interpreter_start_ms": {"median": bare, "code": BASELINE}}
