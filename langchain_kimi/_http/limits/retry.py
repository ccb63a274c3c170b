"""One retry decision per failed attempt: the wait before the next attempt, or the error to raise.

Pure; the sync and async loops share it. Two kinds of failed attempt, two budgets:

- **A refusal** (a 429 that is not a spent quota, a 503, a 529 `overloaded_error`): the gateway
  turns load away and waiting is the cure. The call waits its `Retry-After` (the backoff when it
  names none) and takes its turn again, spending no retry, while its `rate_limit_timeout` lasts;
  then the refusal is raised, saying how long it waited.
- **Any other retryable failure** (another 5xx, 408, 409, a connection error, a timeout; and an
  overload on a base with a fallback after it) spends one of `max_retries` after the backoff (or
  the `Retry-After`, at most `backoff_cap`); once they are spent, a 5xx, a connection error or a
  timeout moves the call to the fallback base, with `max_retries` again.
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
# 429 rate limit, 503 service unavailable, 529 `overloaded_error` (Messages, 000): load refused.
REFUSAL_STATUS = frozenset({429, 503, 529})


@dataclass(frozen=True)
class Failure:
    """One failed attempt: the error to raise if we give up, and how it may be retried."""

    error: KimiError
    retryable: bool
    # The primary may be swapped for the fallback base once its retries are spent.
    fallback: bool
    # Server-requested wait in seconds (Retry-After and its cousins), never negative.
    retry_after: float | None = None

    @property
    def refusal(self) -> bool:
        """The gateway turned the load away (not a spent quota: that one is not retryable)."""
        return self.retryable and self.error.status_code in REFUSAL_STATUS


class RetryPlan:
    """Walks (base URL × attempt) for one call: `max_retries` retries of failures on each base,
    then the next base; refusals wait within `rate_limit_timeout` seconds (see the module)."""

    def __init__(
        self,
        bases: Sequence[str],
        max_retries: int,
        rate_limit_timeout: float,
        *,
        jitter: Callable[[float, float], float] = random.uniform,
    ) -> None:
        self._bases = bases
        self._max_retries = max_retries
        self._jitter = jitter
        self._base_index = 0
        self._attempt = 0
        self._refusals = 0
        self.budget = rate_limit_timeout
        self.waited = 0.0
        """Seconds the call has waited so far after refusals."""

    @property
    def base(self) -> str:
        return self._bases[self._base_index]

    @property
    def attempt(self) -> int:
        """Retries already spent on the current base."""
        return self._attempt

    @property
    def left(self) -> float:
        """Seconds the call may still wait for the rate limit."""
        return max(0.0, self.budget - self.waited)

    def after(self, failure: Failure, path: str = "") -> float | KimiError:
        """The decision after a failed attempt on `self.base`: the seconds to wait before the
        next attempt, or the error to raise."""
        if not failure.retryable:
            return failure.error
        overload = failure.error.status_code in (503, 529)
        if failure.refusal and not (overload and self._base_index + 1 < len(self._bases)):
            return self._after_refusal(failure, path)
        if self._attempt < self._max_retries:
            self._attempt += 1
            delay = min(
                KNOBS.backoff_cap,
                failure.retry_after or backoff_delay(self._attempt - 1, jitter=self._jitter),
            )
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

    def out_of_time(self, error: KimiError) -> KimiError:
        """The refusal `error` once the budget is spent."""
        return not_retried(
            error,
            f"waited {self.waited:.3g}s for the gateway's rate limit, and "
            f"rate_limit_timeout={self.budget:g}s",
        )

    def _after_refusal(self, failure: Failure, path: str) -> float | KimiError:
        # No wait named, or "now" (0): the backoff, as the openai and anthropic SDKs do.
        self._refusals += 1
        delay = failure.retry_after or backoff_delay(self._refusals - 1, jitter=self._jitter)
        if delay > self.left:
            return self.out_of_time(failure.error)
        self.waited += delay
        logger.debug("refused: %s%s again in %.2fs: %s", self.base, path, delay,
                     failure.error.message)  # fmt: skip
        return delay


def not_retried(error: KimiError, why: str) -> KimiError:
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
    """Exponential backoff with full jitter: a uniform draw up to `backoff_first` doubled per
    retry, capped at `backoff_cap`."""
    return jitter(0.0, min(KNOBS.backoff_cap, KNOBS.backoff_first * 2.0**attempt))


def is_retryable_status(status: int) -> bool:
    return status in _RETRYABLE_STATUS or status >= 500
