"""One retry decision per failed attempt: the wait before the next attempt, or the error to raise.

Pure (no I/O); the transport's sync and async loops share it. What a response means (the body,
or a `Failure`) is decided in `replies.py`; the server's requested wait is read in
`retry_after.py`; whether a 429 only cost the call its turn is the controller's verdict
(`admission.AdmittedCall.requeues`).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain_kimi._errors import KimiError
from langchain_kimi._http.limits.knobs import KNOBS

logger = logging.getLogger("langchain_kimi")

# 408 request timeout, 409 lock conflict, 429 rate limit; every 5xx (incl. 529 overloaded).
_RETRYABLE_STATUS = frozenset({408, 409, 429})


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
    `budget` is the call's pool timeout (`httpx.Timeout.pool`, None: none): the longest wait the
    server may ask of it.
    """

    def __init__(
        self,
        bases: Sequence[str],
        max_retries: int,
        *,
        budget: float | None = None,
        jitter: Callable[[float, float], float] = random.uniform,
    ) -> None:
        self._bases = bases
        self._max_retries = max_retries
        self._budget = budget
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

    def after(
        self, failure: Failure, path: str = "", *, requeue: bool = False
    ) -> float | KimiError:
        """The decision after a failed attempt on `self.base`: the seconds to wait before the
        next attempt, or the error to raise (the failure's own, or, when the server asks for a
        wait longer than the call's pool timeout, a new one saying so).

        `requeue`: the pool re-queues this attempt (the call only lost its turn); it waits the
        server's delay, if any, and spends no retry. With `max_retries=0` nothing is ever sent
        twice, re-queued attempts included."""
        if not failure.retryable:
            return failure.error
        if requeue and self._max_retries > 0:
            logger.debug("re-queued %s%s after: %s", self.base, path, failure.error.message)
            if failure.retry_after is not None:
                return self._servers_wait(failure, failure.retry_after)
            # A 429's next turn is the pacer's; an overload naming no wait is not hammered.
            throttled = failure.error.status_code == 429
            return 0.0 if throttled else backoff_delay(0, jitter=self._jitter)
        if self._attempt < self._max_retries:
            self._attempt += 1
            # No wait named, or "now" (0): the backoff, as the openai and anthropic SDKs do.
            if not failure.retry_after:
                delay: float | KimiError = backoff_delay(self._attempt - 1, jitter=self._jitter)
            else:
                delay = self._servers_wait(failure, failure.retry_after)
            if not isinstance(delay, KimiError):
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
        return failure.error

    def _servers_wait(self, failure: Failure, seconds: float) -> float | KimiError:
        """The server's requested wait: capped at `retry_after_cap` without a pool timeout; beyond
        the call's pool timeout, the error to raise at once instead."""
        if self._budget is None:
            return min(seconds, KNOBS.retry_after_cap)
        if seconds > self._budget:
            return _not_retried(
                failure.error,
                f"the gateway asked to retry after {seconds:g}s, longer than this call's pool "
                f"timeout of {self._budget:g}s: not retried",
            )
        return seconds


def _not_retried(error: KimiError, why: str) -> KimiError:
    """A new error of the failure's class, its message followed by why it was not retried (the
    failure's own error is left as it was built)."""
    return type(error)(
        f"{error.message} ({why})",
        status_code=error.status_code,
        error_type=error.error_type,
        request_id=error.request_id,
        body=error.body,
        code=error.code,
    )


def backoff_delay(
    attempt: int, *, jitter: Callable[[float, float], float] = random.uniform
) -> float:
    """Exponential backoff: `backoff_first` doubling per retry, capped at `backoff_cap`, times a
    uniform draw from `backoff_jitter` to 1."""
    return min(KNOBS.backoff_cap, KNOBS.backoff_first * 2.0**attempt) * jitter(
        KNOBS.backoff_jitter, 1.0
    )


def is_retryable_status(status: int) -> bool:
    return status in _RETRYABLE_STATUS or status >= 500
