"""What the numbers were measured on: machine, interpreter, package versions, commit."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (
    "langchain-kimi",
    "langchain-core",
    "httpx",
    "pydantic",
    "langchain-anthropic",
    "anthropic",
    "langchain-openai",
    "openai",
    "langchain-deepseek",
)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=_ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "missing"


def describe() -> dict[str, object]:
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "commit": _commit(),
        "packages": {name: _version(name) for name in PACKAGES},
    }
