"""Retrying: which failed attempt is retried, how long to wait, when to move to the fallback.

Pure (no I/O); the transport's sync and async loops share it. What a response means (the body,
or a `Failure`) is decided in `replies.py`.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from langchain_kimi._errors import KimiError

logger = logging.getLogger("langchain_kimi")

# 408 request timeout, 409 lock conflict, 429 rate limit; every 5xx (incl. 529 overloaded).
_RETRYABLE_STATUS = frozenset({408, 409, 429})
_BACKOFF_BASE = 0.5
_BACKOFF_CAP = 8.0
_RETRY_AFTER_CAP = 60.0


@dataclass(frozen=True)
class Failure:
    """One failed attempt: the error to raise if we give up, and how it may be retried."""

    error: KimiError
    retryable: bool
    # The primary may be swapped for the fallback base once its retries are spent.
    fallback: bool
    # Server-requested wait in seconds (Retry-After), already capped.
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

    def next_delay(self, failure: Failure, path: str = "") -> float | None:
        """Seconds to wait before the next attempt on `self.base`, or None to give up."""
        if not failure.retryable:
            return None
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
    """The server's requested wait: `retry-after-ms`, else `Retry-After` (seconds or HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return _cap(float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return _cap(float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    return _cap(when.timestamp() - now())


def _cap(seconds: float) -> float | None:
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), _RETRY_AFTER_CAP)


def is_retryable_status(status: int) -> bool:
    return status in _RETRYABLE_STATUS or status >= 500
