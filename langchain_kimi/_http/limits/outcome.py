"""What the rate policy is told: a request (when it went, whether others went with it) and how it
ended (answered, throttled: 429, overloaded: 503 or 529, or other)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from langchain_kimi._http.limits.retry import Failure


class Request(Protocol):
    """A request as the controller sees it (admission's `Permit`): also its key while out."""

    @property
    def sent_at(self) -> float: ...

    @property
    def crowded(self) -> bool: ...

    @property
    def in_flight(self) -> int: ...


@dataclass(frozen=True)
class Outcome:
    """A finished attempt as the controller sees it."""

    kind: Literal["answered", "throttled", "overloaded", "other"]
    retry_after: float | None = None
    status: int | None = None
    """The HTTP status of a refusal (429, 503, 529): what a starved pool's error names."""


ANSWERED = Outcome("answered")
OTHER = Outcome("other")


def outcome_of(failure: Failure | None) -> Outcome:
    """A finished attempt, from its `retry.Failure` (None: a reply)."""
    if failure is None:
        return ANSWERED
    if not failure.retryable:  # e.g. an exhausted quota's 429 (`replies`): no pause
        return OTHER
    status = failure.error.status_code
    if status == 429:
        return Outcome("throttled", failure.retry_after, status)
    # 503 "service unavailable" and 529 `overloaded_error` (Messages, 000): busy, not limiting
    # this key; with or without a Retry-After.
    if status in (503, 529):
        return Outcome("overloaded", failure.retry_after, status)
    return OTHER
