"""Retrying: which failed attempt is retried, how long to wait, when to move to the fallback.

Pure (no I/O); the transport's sync and async loops share it. What a response means (the body,
or a `Failure`) is decided in `replies.py`.
"""

from __future__ import annotations

import email.utils
import logging
import math
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from langchain_kimi._errors import KimiError

logger = logging.getLogger("langchain_kimi")

# 408 request timeout, 409 lock conflict, 429 rate limit; every 5xx (incl. 529 overloaded).
_RETRYABLE_STATUS = frozenset({408, 409, 429})
_BACKOFF_BASE = 0.5
_BACKOFF_CAP = 8.0
RETRY_AFTER_CAP = 60.0
"""Longest server-requested wait honoured by a call without a pool timeout (a call with one is
limited by it instead, and fails at once, saying so, when the gateway asks for longer)."""


@dataclass(frozen=True)
class Failure:
    """One failed attempt: the error to raise if we give up, and how it may be retried."""

    error: KimiError
    retryable: bool
    # The primary may be swapped for the fallback base once its retries are spent.
    fallback: bool
    # Server-requested wait in seconds (Retry-After and its cousins), never negative.
    retry_after: float | None = None


class RetryPlan:
    """Walks (base URL × attempt): `max_retries` retries on each base, then the next base.

    Only connection failures, timeouts and 5xx move on to the fallback; 429 and 4xx do not.
    """

    def __init__(
        self,
        bases: Sequence[str],
        max_retries: int,
        *,
        jitter: Callable[[float, float], float] = random.uniform,
    ) -> None:
        self._bases = bases
        self._max_retries = max_retries
        self._jitter = jitter
        self._base_index = 0
        self._attempt = 0

    @property
    def base(self) -> str:
        return self._bases[self._base_index]

    @property
    def attempt(self) -> int:
        """Retries already spent on the current base."""
        return self._attempt

    def next_delay(
        self, failure: Failure, path: str = "", *, requeue: bool = False
    ) -> float | None:
        """Seconds to wait before the next attempt on `self.base`, or None to give up.

        `requeue`: the pool re-queues this attempt (a 429 while the gateway serves the pool: the
        call only lost its turn); it waits the server's delay, if any, and spends no retry. With
        `max_retries=0` nothing is ever sent twice, re-queued attempts included."""
        if not failure.retryable:
            return None
        if requeue and self._max_retries > 0:
            logger.debug("re-queued %s%s after: %s", self.base, path, failure.error.message)
            return failure.retry_after or 0.0
        if self._attempt < self._max_retries:
            delay = failure.retry_after
            if delay is None:
                delay = backoff_delay(self._attempt, jitter=self._jitter)
            self._attempt += 1
            logger.info(
                "retrying %s%s in %.2fs (retry %d of %d): %s",
                self.base, path, delay, self._attempt, self._max_retries, failure.error.message,
            )  # fmt: skip
            return delay
        if failure.fallback and self._base_index + 1 < len(self._bases):
            self._base_index += 1
            self._attempt = 0
            logger.warning(
                "%s%s failed (%s); switching to the fallback %s",
                self._bases[self._base_index - 1], path, failure.error.message, self.base,
            )  # fmt: skip
            return 0.0
        return None


def backoff_delay(
    attempt: int, *, jitter: Callable[[float, float], float] = random.uniform
) -> float:
    """Exponential backoff: ~0.5 s doubling per retry, capped at 8 s, with 25% downward jitter."""
    return min(_BACKOFF_CAP, _BACKOFF_BASE * 2.0**attempt) * jitter(0.75, 1.0)


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


def is_retryable_status(status: int) -> bool:
    return status in _RETRYABLE_STATUS or status >= 500
