"""`retry.RetryPlan.after`, the one decision per failed attempt, on its own: re-queued attempts,
a wait of 0, the fallback walk, what it logs, and the error it builds when it does not retry.

Pure: no transport, no clock; the jitter is pinned to the top of its range (the whole backoff).
"""

from __future__ import annotations

import logging

import pytest

from langchain_kimi._errors import KimiAPIError, KimiError, KimiRateLimitError
from langchain_kimi._http.limits.retry import Failure, RetryPlan, backoff_delay

A, B, C = "https://a.example", "https://b.example", "https://c.example"


def plan(*bases: str, max_retries: int = 2, budget: float | None = None) -> RetryPlan:
    return RetryPlan(bases or (A,), max_retries, budget=budget, jitter=lambda low, high: high)


def throttled(retry_after: float | None = None) -> Failure:
    error = KimiRateLimitError("slow down", status_code=429)
    return Failure(error, retryable=True, fallback=False, retry_after=retry_after)


def busy(retry_after: float | None = None, *, status: int = 503) -> Failure:
    error = KimiAPIError("busy", status_code=status)
    return Failure(error, retryable=True, fallback=True, retry_after=retry_after)


# -- a wait of 0 ("now") ------------------------------------------------------------------------


def test_a_retry_told_to_wait_0_backs_off_as_told_nothing() -> None:
    # The openai and anthropic SDKs honour a Retry-After only above 0 (issue 29).
    told_zero, told_nothing = plan(), plan()
    waits = [told_zero.after(throttled(0.0)) for _ in range(2)]
    assert waits == [told_nothing.after(throttled(None)) for _ in range(2)]
    assert waits == [backoff_delay(0, jitter=lambda low, high: high), 1.0]
    assert told_zero.attempt == 2


def test_a_retry_told_to_wait_a_little_waits_just_that() -> None:
    assert plan().after(throttled(0.01)) == 0.01


# -- re-queued attempts (a crowded call that only lost its turn) ---------------------------------


def test_a_requeued_429_waits_its_retry_after_and_spends_no_retry() -> None:
    requeued = plan(max_retries=1)
    assert requeued.after(throttled(0.25), requeue=True) == 0.25
    assert requeued.after(throttled(0.0), requeue=True) == 0.0  # "now": its paced turn only
    assert requeued.attempt == 0


def test_a_requeued_429_naming_no_wait_goes_for_its_paced_turn_at_once() -> None:
    assert plan(max_retries=1).after(throttled(None), requeue=True) == 0.0


def test_a_requeued_overload_naming_no_wait_backs_off_once() -> None:
    for status in (503, 529):
        requeued = plan(max_retries=1)
        assert requeued.after(busy(None, status=status), requeue=True) == 0.5
        assert requeued.after(busy(None, status=status), requeue=True) == 0.5  # never more
        assert requeued.attempt == 0


def test_a_requeued_wait_beyond_the_pool_timeout_fails_the_call() -> None:
    error = plan(budget=1.0).after(throttled(2.0), requeue=True)
    assert isinstance(error, KimiRateLimitError)
    assert "longer than this call's pool timeout of 1s" in error.message


def test_with_max_retries_0_a_requeue_is_refused_too() -> None:
    failure = throttled(0.25)
    assert plan(max_retries=0).after(failure, requeue=True) is failure.error


# -- the fallback walk -------------------------------------------------------------------------


def test_the_fallbacks_are_walked_in_order_each_with_its_retries() -> None:
    walk = plan(A, B, C, max_retries=0)
    assert walk.after(busy()) == 0.0
    assert walk.base == B
    assert walk.after(busy()) == 0.0
    assert walk.base == C
    failure = busy()
    assert walk.after(failure) is failure.error  # no base left


# -- what it logs --------------------------------------------------------------------------------


def _logged(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(record.levelno, record.getMessage()) for record in caplog.records]


def test_each_decision_is_logged_with_the_base_the_path_and_the_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="langchain_kimi")
    walk = plan(A, B, max_retries=1)
    walk.after(throttled(0.25), "/v1/chat", requeue=True)
    walk.after(busy(), "/v1/chat")
    walk.after(busy(), "/v1/chat")
    assert _logged(caplog) == [
        (logging.DEBUG, f"re-queued {A}/v1/chat after: slow down"),
        (logging.INFO, f"retrying {A}/v1/chat in 0.50s (retry 1 of 1): busy"),
        (logging.WARNING, f"{A}/v1/chat failed (busy); switching to the fallback {B}"),
    ]


def test_without_a_path_the_log_names_the_base_alone(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="langchain_kimi")
    plan().after(throttled(0.25), requeue=True)
    assert _logged(caplog) == [(logging.DEBUG, f"re-queued {A} after: slow down")]


def test_a_wait_refused_for_the_pool_timeout_is_not_logged_as_a_retry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="langchain_kimi")
    assert isinstance(plan(budget=1.0).after(throttled(2.0)), KimiError)
    assert _logged(caplog) == []


# -- the error built when the wait is too long -------------------------------------------------


def test_the_error_for_a_wait_beyond_the_pool_timeout_keeps_every_field_of_the_failure() -> None:
    original = KimiRateLimitError(
        "slow down",
        status_code=429,
        error_type="rate_limit_error",
        request_id="req_1",
        body='{"error": "slow down"}',
        code="rate_limited",
    )
    error = plan(budget=1.0).after(Failure(original, True, False, retry_after=2.0))
    assert type(error) is KimiRateLimitError
    kept = ("status_code", "error_type", "request_id", "body", "code")
    assert [getattr(error, name) for name in kept] == [getattr(original, name) for name in kept]
    assert error.message == (
        "slow down (the gateway asked to retry after 2s, longer than this call's pool timeout "
        "of 1s: not retried)"
    )
