"""Which model x protocol rows the live suites run, and whether web search is on: set by the live
runner (`python -m tools.live`) in `KIMI_LIVE_MODELS`, `KIMI_LIVE_PROTOCOLS` and `KIMI_LIVE_SEARCH`."""

from __future__ import annotations

import os


def models() -> list[str]:
    return os.environ.get(
        "KIMI_LIVE_MODELS", "kimi-k3.1-pro,kimi-k3.1-pro-highspeed,kimi-k3"
    ).split(",")


def protocols() -> list[str]:
    return os.environ.get("KIMI_LIVE_PROTOCOLS", "openai,anthropic").split(",")


def search_enabled() -> bool:
    return os.environ.get("KIMI_LIVE_SEARCH") == "1"
