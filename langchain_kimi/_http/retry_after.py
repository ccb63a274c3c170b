"""The server's requested wait, read from whichever of its forms a response carries.

`Retry-After` in seconds (fractions allowed) or as an HTTP date, `retry-after-ms`, OpenAI's
`x-ratelimit-reset-*` durations and Anthropic's `anthropic-ratelimit-*-reset` times. Pure.
"""

from __future__ import annotations

import email.utils
import math
import re
import time
from collections.abc import Callable, Mapping
from datetime import datetime


def retry_after_seconds(
    headers: Mapping[str, str], *, now: Callable[[], float] = time.time
) -> float | None:
    """The server's requested wait in seconds (0 for "now" or a time already past), from the
    first header present: `retry-after-ms`, `Retry-After` (seconds, fractions allowed, or an HTTP
    date), OpenAI's `x-ratelimit-reset-requests` / `-tokens` ("1s", "6m0s", "20ms"), Anthropic's
    `anthropic-ratelimit-requests-reset` / `-tokens-reset` (RFC 3339). None when none is usable."""
    readers: tuple[tuple[str, Callable[[str], float | None]], ...] = (
        ("retry-after-ms", lambda raw: _number(raw, scale=0.001)),
        ("retry-after", lambda raw: _number(raw) if _is_number(raw) else _http_date(raw, now)),
        ("x-ratelimit-reset-requests", _duration),
        ("x-ratelimit-reset-tokens", _duration),
        ("anthropic-ratelimit-requests-reset", lambda raw: _iso_time(raw, now)),
        ("anthropic-ratelimit-tokens-reset", lambda raw: _iso_time(raw, now)),
    )
    for name, read in readers:
        raw = headers.get(name)
        seconds = None if raw is None else read(raw.strip())
        if seconds is not None:
            return seconds
    return None


def _is_number(raw: str) -> bool:
    return _number(raw) is not None


def _number(raw: str, *, scale: float = 1.0) -> float | None:
    try:
        seconds = float(raw) * scale
    except ValueError:
        return None
    return _non_negative(seconds)


def _non_negative(seconds: float) -> float | None:
    if not math.isfinite(seconds):
        return None
    return max(seconds, 0.0)


def _http_date(raw: str, now: Callable[[], float]) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    return _non_negative(when.timestamp() - now())


def _iso_time(raw: str, now: Callable[[], float]) -> float | None:
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return _non_negative(when.timestamp() - now())


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration(raw: str) -> float | None:
    """OpenAI's reset durations: "1s", "6m0s", "1h2m3.5s", "20ms"."""
    if not raw or _DURATION_PART.sub("", raw):
        return _number(raw)  # a bare number of seconds, or not a duration
    total = sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(raw))
    return _non_negative(total)
