"""`retry.RetryPlan.after`, the one decision per failed attempt, on its own: refusals wait within
`rate_limit_timeout` and spend no retry, other failures spend `max_retries` then move to the
fallback, what it logs, and the error it builds when it gives up.

Pure: no transport, no clock; the jitter is pinned to the top of its range (the whole backoff).
"""

from __future__ import annotations

import logging

import pytest

from langchain_kimi._errors import (
    KimiAPIError,
    KimiConnectionError,
    KimiQuotaExceededError,
    KimiRateLimitError,
)
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.retry import (
    REFUSAL_STATUS,
    Failure,
    RetryPlan,
    backoff_delay,
    is_retryable_status,
    not_retried,
)

A, B = "https://a.example", "https://b.example"


def top(low: float, high: float) -> float:
    return high


def plan(*bases: str, max_retries: int = 2, budget: float = 300.0) -> RetryPlan:
    return RetryPlan(bases or (A,), max_retries, budget, jitter=top)


def refused(retry_after: float | None = None, *, status: int = 429) -> Failure:
    cls = KimiRateLimitError if status == 429 else KimiAPIError
    error = cls("slow down", status_code=status, request_id="req_1")
    return Failure(error, retryable=True, fallback=status >= 500, retry_after=retry_after)


def failed(status: int = 500, retry_after: float | None = None) -> Failure:
    error = KimiAPIError("broken", status_code=status)
    return Failure(error, retryable=True, fallback=True, retry_after=retry_after)


# -- refusals: no retry spent, a wait within the budget ----------------------------------------


@pytest.mark.parametrize("status", sorted(REFUSAL_STATUS))
def test_a_refusal_spends_no_retry_and_waits_its_retry_after(status: int) -> None:
    call = plan(max_retries=0)
    for _ in range(5):
        assert call.after(refused(1.5, status=status)) == 1.5
    assert call.attempt == 0
    assert call.waited == pytest.approx(7.5)


def test_a_refusal_naming_no_wait_or_now_backs_off_per_refusal() -> None:
    call = plan()
    waits = [call.after(refused(None)), call.after(refused(0.0)), call.after(refused(None))]
    assert waits == [backoff_delay(n, jitter=top) for n in range(3)]
    assert waits == [KNOBS.backoff_first, 2 * KNOBS.backoff_first, 4 * KNOBS.backoff_first]


def test_a_refusal_is_raised_once_the_budget_cannot_hold_its_wait() -> None:
    call = plan(budget=10.0)
    assert call.after(refused(6.0)) == 6.0
    error = call.after(refused(6.0))  # 12 s in all would pass the budget: raised now
    assert isinstance(error, KimiRateLimitError)
    assert error.message == (
        "slow down (waited 6s for the gateway's rate limit, and rate_limit_timeout=10s)"
    )
    assert error.request_id == "req_1"
    assert error.status_code == 429


def test_a_wait_that_fits_the_budget_exactly_is_waited() -> None:
    call = plan(budget=2.0)
    assert call.after(refused(2.0)) == 2.0
    assert call.left == 0.0


def test_a_budget_of_0_raises_the_first_refusal() -> None:
    error = plan(budget=0.0).after(refused(0.5))
    assert isinstance(error, KimiRateLimitError)


def test_an_overload_is_raised_with_its_own_class() -> None:
    error = plan(budget=0.0).after(refused(1.0, status=529))
    assert type(error) is KimiAPIError
    assert error.status_code == 529


def test_a_429_never_moves_to_the_fallback() -> None:
    call = plan(A, B, max_retries=0)
    for _ in range(3):
        assert call.after(refused(0.1)) == 0.1
    assert call.base == A


@pytest.mark.parametrize("status", [503, 529])
def test_an_overload_with_a_fallback_after_it_spends_retries_then_moves(status: int) -> None:
    call = plan(A, B, max_retries=1)
    assert call.after(refused(0.1, status=status)) == 0.1  # a retry spent
    assert call.attempt == 1
    assert call.after(refused(0.1, status=status)) == 0.0
    assert call.base == B
    for _ in range(4):  # on the last base it is a refusal: no retry spent
        assert call.after(refused(0.1, status=status)) == 0.1
    assert call.attempt == 0


def test_a_spent_quota_is_not_a_refusal_and_is_raised_at_once() -> None:
    error = KimiQuotaExceededError("quota", status_code=429)
    failure = Failure(error, retryable=False, fallback=False)
    assert not failure.refusal
    assert plan().after(failure) is error


def test_only_429_503_and_529_are_refusals() -> None:
    assert {429, 503, 529} == REFUSAL_STATUS
    for status in (500, 502, 504, 408, 409):
        assert not failed(status).refusal
    assert refused(status=503).refusal


# -- other failures: max_retries, then the fallback --------------------------------------------


def test_a_failure_spends_a_retry_after_the_backoff() -> None:
    call = plan(max_retries=2)
    assert call.after(failed()) == KNOBS.backoff_first
    assert call.after(failed()) == 2 * KNOBS.backoff_first
    assert call.attempt == 2
    error = failed()
    assert call.after(error) is error.error
    assert call.waited == 0.0  # failures do not spend the rate-limit budget


def test_a_failure_waits_its_retry_after_when_it_names_one() -> None:
    assert plan().after(failed(retry_after=3.0)) == 3.0


def test_a_failures_retry_after_is_waited_at_most_the_backoff_cap() -> None:
    assert plan(budget=0.0).after(failed(retry_after=3600.0)) == KNOBS.backoff_cap


def test_spent_retries_move_to_the_fallback_with_retries_again() -> None:
    call = plan(A, B, max_retries=1)
    call.after(failed())
    assert call.after(failed()) == 0.0
    assert call.base == B
    assert call.attempt == 0
    call.after(failed())
    error = failed()
    assert call.after(error) is error.error


def test_each_base_is_tried_in_turn() -> None:
    third = "https://c.example"
    call = plan(A, B, third, max_retries=0)
    assert [call.after(failed()) for _ in range(2)] == [0.0, 0.0]
    assert call.base == third


def test_a_failure_the_fallback_cannot_cure_is_raised_after_the_retries() -> None:
    error = KimiConnectionError("no route")
    failure = Failure(error, retryable=True, fallback=False)
    call = plan(A, B, max_retries=0)
    assert call.after(failure) is error
    assert call.base == A


def test_a_failure_not_retryable_is_raised_at_once() -> None:
    error = KimiAPIError("bad", status_code=400)
    assert plan().after(Failure(error, retryable=False, fallback=False)) is error


def test_the_backoff_doubles_up_to_the_cap_with_full_jitter() -> None:
    waits = [backoff_delay(n, jitter=top) for n in range(8)]
    assert waits[0] == KNOBS.backoff_first
    assert max(waits) == KNOBS.backoff_cap
    assert backoff_delay(3, jitter=lambda low, high: low) == 0.0


def test_retryable_statuses() -> None:
    assert [s for s in (400, 401, 404, 408, 409, 429, 500, 503, 529) if is_retryable_status(s)] == [
        408, 409, 429, 500, 503, 529,
    ]  # fmt: skip


def test_not_retried_keeps_the_class_and_fields_and_adds_why() -> None:
    error = KimiRateLimitError(
        "slow", status_code=429, error_type="t", request_id="r", code="c", body="the body"
    )
    again = not_retried(error, "why")
    assert type(again) is KimiRateLimitError
    assert (again.message, again.status_code, again.error_type, again.request_id, again.code) == (
        "slow (why)", 429, "t", "r", "c",
    )  # fmt: skip
    assert again.body == "the body"
    assert error.message == "slow"


def test_what_it_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="langchain_kimi")
    call = plan(A, B, max_retries=1)
    call.after(refused(0.25), "/v1/messages")
    call.after(failed(), "/v1/messages")
    call.after(failed(), "/v1/messages")
    plan(A).after(failed())  # no path given: the base alone
    assert [r.getMessage() for r in caplog.records] == [
        f"refused: {A}/v1/messages again in 0.25s: slow down",
        f"retrying {A}/v1/messages in 0.50s (retry 1 of 1): broken",
        f"{A}/v1/messages failed (broken); switching to the fallback {B}",
        f"retrying {A} in 0.50s (retry 1 of 2): broken",
    ]
