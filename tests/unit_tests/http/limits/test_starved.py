"""A pool the gateway serves no more (`langchain_kimi._http.limits.starved`): one probe at a time,
further and further apart, its crowded calls waiting instead of spending retries, and a clear
error when a call's pool timeout runs out meanwhile.

Issue 29: processes sharing a key behind a small concurrency limit keep each other out, one of
them for 20-30 s (simulated); when only the serving window (10 s) decided, those processes lost
calls ("gave up after 2 retries"): 39 of 1,600 for 16 processes behind 20, 70 for 4 behind 10.
A fake clock; nothing sleeps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from langchain_kimi._errors import KimiAPIError, KimiRateLimitError, KimiTimeoutError
from langchain_kimi._http.limits.admission import Admission, AdmittedCall, Permit, _Wait, _Waiter
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import ANSWERED, Outcome
from langchain_kimi._http.limits.retry import Failure
from langchain_kimi._http.limits.starved import Starved
from langchain_kimi._http.pool import shared
from tests.support.fake_clock import Clock

THROTTLED = Outcome("throttled", 0.0)
REFUSED = Failure(KimiRateLimitError("slow down", status_code=429), True, False, 0.0)


# -- the part alone --------------------------------------------------------------------------


def test_probes_wait_longer_after_each_429_up_to_the_cap() -> None:
    starved = Starved()
    assert starved.since is None
    assert starved.limit() is None
    waits = []
    for at in (10.0, 20.0, 30.0, 40.0, 50.0, 60.0):
        starved.refused(at - 1 / 64, at)  # a probe sent after the starvation began
        waits.append(starved.delay(at))
    assert starved.since == 10.0  # the first 429 of the starvation
    assert starved.statuses == [429]  # a refusal naming no status is a 429
    assert starved.limit() == 1
    first, cap = KNOBS.starved_probe, KNOBS.starved_probe_cap
    expected = [min(cap, first * 2**n) for n in range(6)]
    assert waits == expected
    assert expected[-1] == cap > expected[0]  # it doubled up to the cap
    assert starved.delay(60.0 + cap / 2) == cap / 2
    assert starved.delay(60.0 + cap) == 0.0


def test_the_429s_of_the_wave_already_out_do_not_double_the_wait() -> None:
    starved = Starved()
    for _ in range(3):
        starved.refused(sent_at=4.0, now=5.0)  # sent before the starvation began
    assert starved.since == 5.0
    assert starved.delay(5.0) == KNOBS.starved_probe
    starved.refused(sent_at=5.0, now=5.0)  # sent the instant it began: of the wave still
    assert starved.delay(5.0) == KNOBS.starved_probe
    starved.refused(sent_at=5.5, now=6.0)  # a probe: sent once it had begun
    assert starved.delay(6.0) == 2 * KNOBS.starved_probe


def test_an_admission_ends_the_starvation_and_the_next_one_starts_afresh() -> None:
    starved = Starved()
    for at in (1.0, 2.0, 3.0):
        starved.refused(at, at)
    starved.served()
    assert starved.since is None
    assert starved.statuses == []
    assert starved.limit() is None
    assert starved.delay(3.0) == 0.0
    starved.refused(9.0, 9.0, status=503)
    assert starved.since == 9.0
    assert starved.statuses == [503]  # the last starvation's 429s are forgotten
    assert starved.delay(9.0) == KNOBS.starved_probe  # the backoff starts over


def test_each_status_is_named_once_the_latest_last() -> None:
    starved = Starved()
    for status in (429, 529, 429):
        starved.refused(1.0, 1.0, status=status)
    assert starved.statuses == [529, 429]


# -- through Admission -----------------------------------------------------------------------


def starved_pool(capacity: int = 8) -> tuple[Admission, Clock]:
    """A pool past its start, nothing admitted, a crowded request just refused: starved from
    `clock.now`."""
    clock = Clock()
    gate = Admission(capacity, adaptive=True, clock=clock)
    gate.call(30.0).enter(clock.sleep).done(Outcome("other"))  # its start: proves nothing
    clock.now += KNOBS.starting_span
    permit = gate.call(30.0).enter(clock.sleep)
    with waiting_behind(gate):  # another call waits: the refused request went with others
        permit.done(THROTTLED)
    assert gate.starved_for() == 0.0
    return gate, clock


@contextlib.contextmanager
def waiting_behind(gate: Admission) -> Iterator[None]:
    """Another call of the pool for the whole block: queued (the pool's slot is taken, or it is
    starved), or in flight."""
    turns = gate.call(30.0)._turns(_Waiter(10_000, None))
    try:
        next(turns)
    except StopIteration as granted:
        in_flight: Permit = granted.value
        yield
        in_flight.release()
        return
    try:
        yield
    finally:
        turns.close()


def grant(gate: Admission, call_budget: float = 30.0) -> Permit | _Wait:
    """One call's first step: its permit, or how it waits."""
    call = gate.call(call_budget)
    turns = call._turns(_Waiter(call._ticket, None))
    try:
        step = next(turns)
    except StopIteration as granted:
        permit: Permit = granted.value
        return permit
    turns.close()
    return step


def test_a_starved_pool_sends_one_probe_at_a_time_spaced_by_the_backoff() -> None:
    gate, clock = starved_pool()
    assert gate.controller.limit(clock.now, gate.in_flight) == 1
    start = clock.now
    probe = gate.call(30.0).enter(clock.sleep)
    assert clock.now - start >= KNOBS.starved_probe  # the next probe's time (or the pace's)
    assert not grant(gate).timed  # one in flight: the next waits to be woken (or its timeout)
    with waiting_behind(gate):
        probe.done(THROTTLED)
    assert gate.controller.starved.delay(clock.now) == 2 * KNOBS.starved_probe
    wait = grant(gate)
    assert isinstance(wait, _Wait)
    assert wait.timed
    assert wait.seconds is not None
    assert wait.seconds >= 2 * KNOBS.starved_probe
    assert gate.starved_for() == clock.now - start


def test_an_answer_ends_the_starvation_and_the_pool_sends_at_its_pace_again() -> None:
    gate, clock = starved_pool()
    probe = gate.call(30.0).enter(clock.sleep)
    probe.done(ANSWERED)
    assert gate.starved_for() is None
    assert gate.controller.limit(clock.now, gate.in_flight) is None
    assert gate.controller.starved.delay(clock.now) == 0.0


def test_a_probe_held_past_the_horizon_ends_the_starvation_before_its_answer() -> None:
    gate, clock = starved_pool()
    probe = gate.call(30.0).enter(clock.sleep)
    clock.now += gate.controller.slow_start.horizon + 1 / 64  # not refused in time: admitted
    assert gate.starved_for() is None
    assert gate.controller.limit(clock.now, gate.in_flight) is None
    probe.release()


def test_a_crowded_call_in_a_starved_pool_loses_its_turn_a_lone_one_spends_a_retry() -> None:
    gate, clock = starved_pool()
    crowded = gate.call(30.0)
    permit = crowded.enter(clock.sleep)
    waiting = gate.call(30.0)._turns(_Waiter(99, None))
    next(waiting)  # another call waits behind it
    permit.done(THROTTLED)
    assert crowded.requeues(REFUSED)
    waiting.close()

    lone = gate.call(30.0)
    alone = lone.enter(clock.sleep)
    assert not alone.crowded
    alone.done(THROTTLED)
    assert gate.starved_for() is not None
    assert not lone.requeues(REFUSED)  # `max_retries` as the peers' users read it


def test_a_call_whose_attempt_went_alone_is_crowded_when_others_are_in_flight_at_its_429() -> None:
    # The others slept their own Retry-After, out of the queue, when it was sent; 8 processes
    # behind a limit of 3 lost such calls.
    clock = Clock()
    gate = Admission(8, adaptive=True, clock=clock)
    call = gate.call(30.0)
    permit = call.enter(clock.sleep)
    assert not permit.crowded
    other = gate.call(30.0).enter(clock.sleep)  # granted before the 429 came back
    permit.done(THROTTLED)
    assert call.requeues(REFUSED)  # the pool is starting, and the call went with others
    other.release()


async def test_a_call_whose_pool_timeout_runs_out_for_its_probe_fails_with_the_rate_limit() -> None:
    gate, clock = starved_pool()
    budget = KNOBS.starved_probe / 4  # shorter than the next probe's wait
    with pytest.raises(KimiRateLimitError, match=r"answered every request of this pool with 429 "):
        gate.call(budget).enter(clock.sleep)
    with pytest.raises(KimiRateLimitError, match=r"for 0s, admitting none; .* timeout of 0.125s"):
        await gate.call(budget).aenter(clock.async_sleep)
    assert gate.queued == 0


async def test_a_call_whose_pool_timeout_runs_out_behind_the_probe_fails_with_the_rate_limit() -> (
    None
):
    gate, clock = starved_pool()
    clock.now += 12.0
    probe = gate.call(30.0).enter(clock.sleep)
    with pytest.raises(KimiRateLimitError, match=r"429 for 12s, admitting none"):
        gate.call(0.0).enter(clock.sleep)
    with pytest.raises(KimiRateLimitError, match=r"429 for 12s, admitting none"):
        await gate.call(0.0).aenter(clock.async_sleep)
    assert gate.queued == 0
    probe.release()


def test_a_pool_served_again_times_out_as_before() -> None:
    gate, clock = starved_pool(capacity=1)
    clock.now += KNOBS.starved_probe
    probe = gate.call(30.0).enter(clock.sleep)
    probe.done(ANSWERED, keep=True)  # answered, its stream still open: the one slot is held
    with pytest.raises(KimiTimeoutError, match="free connection"):
        gate.call(0.0).enter(clock.sleep)
    probe.release()


def test_a_lone_calls_429_does_not_starve_the_pool() -> None:
    # A call alone waits what the gateway asked, as the peers' SDKs do (`test_max_retries`): its
    # 429 neither starts a probe's wait nor limits the pool, however long ago the last answer.
    clock = Clock()
    gate = Admission(8, adaptive=True, clock=clock)
    gate.call(30.0).enter(clock.sleep).done(ANSWERED)
    clock.now += 2 * max(KNOBS.serving_span, KNOBS.starting_span)  # neither served nor starting
    lone = gate.call(30.0).enter(clock.sleep)
    lone.done(THROTTLED)
    assert not lone.crowded
    assert gate.starved_for() is None
    assert gate.controller.limit(clock.now, gate.in_flight) is None


def test_a_call_that_went_with_others_once_carries_it_into_its_later_attempts() -> None:
    # Its siblings may sleep their own waits, out of the queue, when its next attempt goes.
    clock = Clock()
    gate = Admission(8, adaptive=True, clock=clock)
    call = gate.call(30.0)
    first = call.enter(clock.sleep)
    other = gate.call(30.0).enter(clock.sleep)
    first.done(THROTTLED)  # refused with another in flight
    assert first.crowded
    assert call.requeues(REFUSED)
    other.release()
    again = call.enter(clock.sleep)  # alone in the pool now
    assert again.crowded
    again.release()


def test_the_head_waits_for_the_probes_time_when_it_is_later_than_the_pace() -> None:
    gate, clock = starved_pool()
    gate.controller.pacer.rate = None  # no pace: the probe's time alone
    assert gate.controller.delay(clock.now) == KNOBS.starved_probe
    assert grant(gate) == _Wait(KNOBS.starved_probe, timed=True)


def test_a_crowded_call_loses_turns_up_to_exactly_its_pool_timeout() -> None:
    clock = Clock()
    gate = Admission(8, adaptive=True, clock=clock)
    holder = gate.call(30.0).enter(clock.sleep)  # in flight all along: the call is crowded
    call = gate.call(30.0)
    verdicts = []
    first = None
    for elapsed in (0.0, 30.0 - 1 / 64, 30.0):
        gate.call(30.0).enter(clock.sleep).done(ANSWERED)  # the gateway serves the pool
        call.enter(clock.sleep).done(THROTTLED)
        first = clock.now if first is None else first
        clock.now = first + elapsed
        verdicts.append(call.requeues(REFUSED))
    assert verdicts == [True, True, False]
    holder.release()


async def test_a_starved_pools_retry_after_beyond_the_pool_timeouts_fails_the_queue_at_once() -> (
    None
):
    # A key refused for hours (a daily cap, `Retry-After: 3600`): every queued call would meet
    # the same answer on its turn, so none waits for its probe, and none is sent.
    gate, clock = starved_pool()
    probe = gate.call(30.0).enter(clock.sleep)
    with waiting_behind(gate):
        probe.done(Outcome("throttled", 3600.0))
    assert gate.controller.delay(clock.now) == 3600.0
    with pytest.raises(KimiRateLimitError, match="admitting none"):
        gate.call(900.0).enter(clock.sleep)
    with pytest.raises(KimiRateLimitError, match="admitting none"):
        await gate.call(900.0).aenter(clock.async_sleep)
    assert gate.in_flight == 0
    assert gate.queued == 0


def test_a_shorter_retry_after_does_not_bring_the_next_probe_forward() -> None:
    starved = Starved()
    starved.refused(sent_at=0.0, now=1.0, retry_after=60.0)
    starved.refused(sent_at=0.5, now=1.5, retry_after=1.0)  # of the wave already out
    assert starved.delay(1.5) == 59.5


# -- an overload that says when to come back -------------------------------------------------
# Issue 29: "an overload that says when to come back must cost no answer". A batch's last calls,
# refused by a 70 % 529 `Retry-After: 1` for 30 s while the rest of their pool was done, found
# nothing of the pool admitted for `serving_span` and spent their retries: 4 of 5,000 random
# gateways lost 1-4 calls (`tests.support.random_gateways`, draws 10,000-14,999; pinned in
# `test_rate_profiles.STRAGGLERS_OF_A_LONG_OVERLOAD`).

OVERLOADED = Outcome("overloaded", 1.0, status=529)
OVERLOAD_FAILURE = Failure(
    KimiAPIError("overloaded", status_code=529), retryable=True, fallback=True, retry_after=1.0
)


def unserved_pool(*, can_fall_back: bool = False) -> tuple[Admission, Clock]:
    """A pool past its start whose requests the gateway has admitted none of lately."""
    clock = Clock()
    # Without a word of a fallback base, an admission has none (the simulations' pools).
    fallback = {"can_fall_back": True} if can_fall_back else {}
    gate = Admission(8, adaptive=True, clock=clock, **fallback)
    gate.call(30.0).enter(clock.sleep).done(ANSWERED)
    clock.now += 2 * max(KNOBS.serving_span, KNOBS.starting_span)  # neither served nor starting
    return gate, clock


def overloaded_with_company(gate: Admission, clock: Clock, outcome: Outcome) -> AdmittedCall:
    """A call of a batch refused with `outcome` while another call of its pool waits."""
    call = gate.call(30.0)
    permit = call.enter(clock.sleep)
    with waiting_behind(gate):
        permit.done(outcome)
    return call


def test_an_overload_that_says_when_to_come_back_starves_the_pool_like_a_429() -> None:
    gate, clock = unserved_pool()
    call = overloaded_with_company(gate, clock, OVERLOADED)
    assert gate.starved_for() == 0.0
    assert gate.controller.limit(clock.now, gate.in_flight) == 1  # one probe at a time
    assert gate.controller.delay(clock.now) == max(KNOBS.starved_probe, 1.0)
    assert call.requeues(OVERLOAD_FAILURE)  # its turn, not a retry


def test_a_lone_calls_overload_spends_its_retry_and_starves_nothing() -> None:
    gate, clock = unserved_pool()
    call = gate.call(30.0)
    call.enter(clock.sleep).done(OVERLOADED)
    assert gate.starved_for() is None
    assert not call.requeues(OVERLOAD_FAILURE)  # `max_retries` as the peers' users read it


def test_an_overload_naming_no_wait_still_spends_retries_once_the_pool_is_not_served() -> None:
    # A 503 without Retry-After may be an outage: the calls fail after their retries, as before.
    gate, clock = unserved_pool()
    call = overloaded_with_company(gate, clock, Outcome("overloaded", None, status=503))
    assert gate.starved_for() is None
    no_wait = Failure(KimiAPIError("unavailable", status_code=503), True, True)
    assert not call.requeues(no_wait)


def test_with_a_fallback_base_an_overloaded_pool_moves_on_instead_of_waiting() -> None:
    # The fallback takes what the primary keeps refusing (`RetryPlan`): a starved pool would
    # hold both bases' requests to one probe at a time, and the calls would never reach it.
    gate, clock = unserved_pool(can_fall_back=True)
    call = overloaded_with_company(gate, clock, OVERLOADED)
    assert gate.starved_for() is None
    assert not call.requeues(OVERLOAD_FAILURE)


def test_an_overload_of_no_known_status_is_named_a_503() -> None:
    gate, clock = unserved_pool()
    overloaded_with_company(gate, clock, Outcome("overloaded", 1.0))
    with pytest.raises(KimiAPIError, match=r"with 503 for 0s"):
        gate.call(0.0).enter(clock.sleep)


def test_a_429_naming_no_wait_starves_the_pool_even_with_a_fallback_base() -> None:
    # A 429 is this key's rate: the fallback base serves the same key, so it never moves on.
    gate, clock = unserved_pool(can_fall_back=True)
    call = overloaded_with_company(gate, clock, Outcome("throttled", None, status=429))
    assert gate.starved_for() == 0.0
    assert call.requeues(Failure(KimiRateLimitError("slow down", status_code=429), True, False))


def test_an_answer_ends_an_overloads_starvation() -> None:
    gate, clock = unserved_pool()
    overloaded_with_company(gate, clock, OVERLOADED)
    clock.now += 1.0
    gate.call(30.0).enter(clock.sleep).done(ANSWERED)
    assert gate.starved_for() is None
    assert gate.controller.limit(clock.now, gate.in_flight) is None


async def test_a_call_whose_pool_timeout_runs_out_in_an_overload_fails_naming_its_status() -> None:
    gate, clock = unserved_pool()
    overloaded_with_company(gate, clock, OVERLOADED)
    clock.now += 12.0
    probe = gate.call(30.0).enter(clock.sleep)
    with pytest.raises(KimiAPIError, match=r"with 529 for 12s, admitting none") as raised:
        gate.call(0.0).enter(clock.sleep)
    assert not isinstance(raised.value, KimiRateLimitError)
    assert raised.value.status_code == 529
    with waiting_behind(gate):
        probe.done(THROTTLED)  # a 429 as well: both named, the latest one's class
    with pytest.raises(KimiRateLimitError, match=r"with 429 and 529 for 12s") as limited:
        await gate.call(0.0).aenter(clock.async_sleep)
    assert limited.value.status_code == 429
    assert gate.queued == 0


@pytest.mark.parametrize(
    ("bases", "starves"),
    [
        (("https://direct.evolink.ai",), True),
        (("https://direct.evolink.ai", "https://api.evolink.ai"), False),
    ],
)
def test_a_shared_pool_starves_on_overloads_only_without_a_fallback_base(
    bases: tuple[str, ...], starves: bool
) -> None:
    clock = Clock()
    key = shared.PoolKey(
        bases=bases,
        key_digest=shared.PoolKey.digest("sk-starved-test"),
        adaptive=True,
        clock=clock,
        http_client=None,
        http_async_client=None,
    )
    gate = shared.SharedPool(key).admission
    gate.call(30.0).enter(clock.sleep).done(ANSWERED)
    clock.now += 2 * max(KNOBS.serving_span, KNOBS.starting_span)
    call = overloaded_with_company(gate, clock, OVERLOADED)
    assert (gate.starved_for() is not None) is starves
    assert call.requeues(OVERLOAD_FAILURE) is starves
