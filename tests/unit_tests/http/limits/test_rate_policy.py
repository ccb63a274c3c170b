"""`rate.RatePolicy`, the send rate of one (gateway, key), on its own: its paragraph, clause by
clause (`langchain_kimi/_http/limits/rate.py`). Sans-I/O: the clock is the argument."""

from __future__ import annotations

import math

import pytest

from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.rate import MAX_RATE, RatePolicy, Sent


def test_a_key_starts_at_the_start_rate_and_spaces_its_sends() -> None:
    policy = RatePolicy(0.0)
    assert policy.rate == KNOBS.start_rate
    assert policy.delay(0.0) == 0.0
    first = policy.sent(0.0)
    assert first == Sent(0.0, KNOBS.start_rate)
    assert policy.delay(0.0) == pytest.approx(1 / KNOBS.start_rate)


def test_with_nothing_refused_the_rate_doubles_every_doubling() -> None:
    policy = RatePolicy(0.0)
    policy.delay(KNOBS.doubling)
    assert policy.rate == pytest.approx(2 * KNOBS.start_rate)
    policy.delay(3 * KNOBS.doubling)
    assert policy.rate == pytest.approx(8 * KNOBS.start_rate)


def test_a_doubling_rate_stops_at_unpaced() -> None:
    policy = RatePolicy(0.0)
    policy.delay(1e6)
    assert policy.rate == MAX_RATE
    policy.sent(1e6)
    assert policy.delay(1e6) == 0.0  # unpaced: no spacing at all


def test_a_429_cuts_the_rate_its_request_was_sent_at() -> None:
    policy = RatePolicy(0.0)
    request = policy.sent(0.0)
    policy.refused(request, 2 * KNOBS.doubling)  # the rate has quadrupled since it went
    assert policy.rate == pytest.approx(KNOBS.cut * KNOBS.start_rate)


def test_a_429_cuts_the_current_rate_when_it_is_lower() -> None:
    policy = RatePolicy(0.0)
    policy.delay(KNOBS.doubling)
    request = policy.sent(KNOBS.doubling)  # sent at twice the start rate
    first = policy.sent(KNOBS.doubling)
    policy.refused(first, KNOBS.doubling)
    lowered = policy.rate
    later = policy.sent(KNOBS.doubling)
    policy.refused(later, KNOBS.doubling)
    assert policy.rate == pytest.approx(KNOBS.cut * lowered)
    assert request.rate > lowered


def test_the_429s_of_requests_sent_before_a_cut_cut_nothing_more() -> None:
    policy = RatePolicy(0.0)
    wave = [policy.sent(0.0) for _ in range(5)]
    policy.refused(wave[0], 0.01)
    cut_once = policy.rate
    for request in wave[1:]:
        policy.refused(request, 0.01)
    assert policy.rate == cut_once


def test_a_cut_never_goes_below_cut_times_the_answers_of_the_last_span() -> None:
    policy = RatePolicy(0.0)
    answers = 40
    for i in range(answers):
        policy.answered(i * KNOBS.span / answers)
    now = KNOBS.span
    request = Sent(now, 1.0)  # a request sent at a rate far below what was answered
    policy.refused(request, now)
    assert policy.rate == pytest.approx(KNOBS.cut * answers / KNOBS.span)  # the span's edge in
    policy.answered(now + 0.001)
    later = Sent(now + 0.002, 1.0)
    policy.refused(later, now + 0.002)  # the first answer is now older than the span
    assert policy.rate == pytest.approx(KNOBS.cut * answers / KNOBS.span)


def test_the_rate_never_falls_below_one_request_per_backoff_cap() -> None:
    policy = RatePolicy(0.0)
    for step in range(60):
        now = step * 0.01
        policy.refused(policy.sent(now), now + 0.001)
    assert policy.rate == pytest.approx(1 / KNOBS.backoff_cap)


def test_after_a_cut_the_rate_grows_by_growth_per_second_then_doubles_after_span() -> None:
    policy = RatePolicy(0.0)
    policy.refused(policy.sent(0.0), 0.0)
    cut = policy.rate
    policy.delay(1.0)
    assert policy.rate == pytest.approx(cut * (1 + KNOBS.growth))
    policy.delay(KNOBS.span + KNOBS.doubling)
    expected = cut * (1 + KNOBS.growth) ** KNOBS.span * 2
    assert policy.rate == pytest.approx(expected)


def test_a_later_429_restarts_the_span() -> None:
    policy = RatePolicy(0.0)
    policy.refused(policy.sent(0.0), 0.0)
    policy.delay(KNOBS.span - 0.5)
    early = policy.sent(KNOBS.span - 0.5)
    policy.refused(Sent(-1.0, early.rate), KNOBS.span - 0.5)  # of an older wave: no cut
    rate = policy.rate
    policy.delay(KNOBS.span + 0.5)  # one second later: still within the new span
    assert policy.rate == pytest.approx(rate * (1 + KNOBS.growth))


def test_answers_older_than_the_span_are_forgotten() -> None:
    policy = RatePolicy(0.0)
    for i in range(100):
        policy.answered(i * 0.001)
    policy.answered(10.0)
    assert len(policy._answers) == 1


def test_without_adaptive_nothing_is_paced_and_a_429_changes_nothing() -> None:
    policy = RatePolicy(0.0, adaptive=False)
    assert policy.rate == math.inf
    request = policy.sent(0.0)
    assert policy.delay(0.0) == 0.0
    policy.refused(request, 0.0)
    assert policy.rate == math.inf
    assert policy.delay(5.0) == 0.0


def test_the_repr_shows_the_rate() -> None:
    assert repr(RatePolicy(0.0)) == f"RatePolicy(rate={KNOBS.start_rate:.3g}/s)"


def test_the_spacing_is_measured_from_the_clock_not_from_zero() -> None:
    policy = RatePolicy(100.0)
    policy.sent(100.0)
    assert policy.delay(100.0) == pytest.approx(1 / KNOBS.start_rate)
    assert policy.delay(100.0 + 1 / KNOBS.start_rate) == 0.0


def test_a_stale_clock_reading_neither_grows_nor_rewinds_the_rate() -> None:
    # Threads read the clock before taking the lock: a reading older than the last one counts
    # no time, and the time after it is not counted twice.
    policy, straight = RatePolicy(0.0), RatePolicy(0.0)
    policy.delay(1.0)
    policy.delay(0.5)
    policy.delay(1.5)
    straight.delay(1.5)
    assert policy.rate == pytest.approx(straight.rate)
