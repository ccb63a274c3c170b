"""Admission at its edges: the default cool-down, the serving window, capacity growth from hold
times, the first report of a permit, and the wait before a retry against the pool timeout.

Each test pins one rule of `langchain_kimi._http.limits.admission` that a mutation run (issue 19
item 5) showed unpinned. A fake clock; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable
from dataclasses import dataclass

import pytest

from langchain_kimi._errors import KimiError, KimiRateLimitError, KimiTimeoutError
from langchain_kimi._http.limits.admission import Admission, _Wait, _Waiter
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import ANSWERED, Outcome
from langchain_kimi._http.limits.retry import RetryPlan
from tests.support.fake_clock import Clock, paced_pacer


def gate(capacity: int = 1, **kwargs: object) -> tuple[Admission, Clock]:
    clock = Clock()
    kwargs.setdefault("adaptive", False)
    return Admission(capacity, clock=clock, **kwargs), clock  # type: ignore[arg-type]


@dataclass
class Failure:
    error: KimiError
    retryable: bool = True
    retry_after: float | None = None


def test_a_429_without_retry_after_holds_every_call_back_for_the_default_cool_down() -> None:
    admission, clock = gate()
    admission.call(30.0).enter(clock.sleep).done(Outcome("throttled", None))
    admission.call(30.0).enter(clock.sleep).release()
    assert clock.sleeps == [KNOBS.default_cool_down]


def test_only_the_first_report_of_a_permit_counts() -> None:
    admission, clock = gate()
    permit = admission.call(30.0).enter(clock.sleep)
    permit.done(ANSWERED, keep=True)  # a stream's reply: reported, its slot still held
    permit.done(Outcome("throttled", 5.0))  # a later report is ignored; the slot is freed
    admission.call(30.0).enter(clock.sleep).release()
    assert clock.sleeps == []
    assert admission.in_flight == 0


def test_the_pool_is_served_for_exactly_the_serving_span_after_an_answer() -> None:
    admission, clock = gate()
    assert not admission.serving()
    admission.call(30.0).enter(clock.sleep).done(ANSWERED)
    clock.now += KNOBS.serving_span - 0.5
    assert admission.serving()
    clock.now += 0.5
    assert not admission.serving()


def test_a_full_pool_whose_slots_are_held_one_second_on_average_grows() -> None:
    admission, clock = gate(max_capacity=2)
    first = admission.call(30.0).enter(clock.sleep)
    clock.now += 10.0
    first.release()  # held 10 s: the moving average (weight 0.1, from 0) is 1.0 s
    admission.call(30.0).enter(clock.sleep)
    admission.call(0.0).enter(clock.sleep)  # the pool is full: it grows instead of timing out
    assert admission.capacity == 2


def test_a_full_pool_whose_slots_are_held_briefly_does_not_grow() -> None:
    admission, clock = gate(max_capacity=2)
    first = admission.call(30.0).enter(clock.sleep)
    clock.now += 0.5
    first.release()  # the first release starts the mean hold: 0.5 s
    admission.call(30.0).enter(clock.sleep)
    with pytest.raises(KimiTimeoutError):
        admission.call(0.0).enter(clock.sleep)
    assert admission.capacity == 1


def test_the_repr_shows_the_queue() -> None:
    admission, _ = gate()
    assert repr(admission) == "Admission(in_flight=0, queued=0, rate=None)"


def _throttled(retry_after: float | None) -> Failure:
    return Failure(KimiRateLimitError("rate limited", status_code=429), retry_after=retry_after)


def _after(budget: float | None, failure: Failure) -> float | KimiError:
    """The retry decision for `failure`, the call's first, with a pool timeout of `budget`."""
    plan = RetryPlan(["https://gateway"], 2, budget=budget, jitter=lambda low, high: high)
    return plan.after(failure)  # type: ignore[arg-type]


def test_our_own_backoff_is_waited_whatever_the_pool_timeout() -> None:
    assert _after(0.1, _throttled(None)) == 0.5  # a first retry's backoff (unjittered), past 0.1 s
    assert _after(0.5, _throttled(0.25)) == 0.25  # the gateway's wait, within the budget


def test_the_gateways_wait_is_capped_for_a_call_without_a_pool_timeout() -> None:
    wait = KNOBS.retry_after_cap + 100.0
    assert _after(None, _throttled(wait)) == KNOBS.retry_after_cap
    assert _after(None, _throttled(2.0)) == 2.0


def test_the_gateways_wait_up_to_the_pool_timeout_is_waited() -> None:
    assert _after(5.0, _throttled(5.0)) == 5.0


def test_the_gateways_wait_beyond_the_pool_timeout_is_a_new_error_saying_why() -> None:
    failure = _throttled(6.0)
    error = _after(5.0, failure)
    assert isinstance(error, KimiRateLimitError)
    assert "retry after 6s, longer than this call's pool timeout of 5s" in str(error)
    assert error.status_code == 429
    assert str(failure.error) == "rate limited (status 429)"  # built once, never edited


async def _yield_then_advance(clock: Clock, seconds: float) -> None:
    """An async sleep on the fake clock that lets the other tasks run first."""
    await asyncio.sleep(0)
    clock.sleep(seconds)


async def test_the_head_granted_after_its_cool_down_wakes_the_calls_granted_with_it() -> None:
    admission, clock = gate(capacity=2)
    admission.call(30.0).enter(clock.sleep).done(Outcome("throttled", None))  # a cool-down

    def sleep(seconds: float) -> Awaitable[None]:
        return _yield_then_advance(clock, seconds)

    head = asyncio.create_task(admission.call(30.0).aenter(sleep))
    second = asyncio.create_task(admission.call(30.0).aenter(sleep))
    # The head's poll after its cool-down grants both; the second must be woken by it (a second
    # of real time is a generous bound: it is woken at once).
    permits = await asyncio.wait_for(asyncio.gather(head, second), 1.0)
    assert admission.in_flight == 2
    for permit in permits:
        permit.release()


async def test_a_slot_handed_on_by_a_cancelled_call_wakes_the_next_call() -> None:
    admission, clock = gate()
    holder = admission.call(30.0).enter(clock.sleep)

    async def no_sleep(seconds: float) -> None:
        raise AssertionError("nothing here is paced")

    first = asyncio.create_task(admission.call(30.0).aenter(no_sleep))
    second = asyncio.create_task(admission.call(30.0).aenter(no_sleep))
    await asyncio.sleep(0)
    holder.release()  # granted to `first`...
    first.cancel()  # ...which is cancelled before it runs: the slot goes on to `second`
    with pytest.raises(asyncio.CancelledError):
        await first
    permit = await asyncio.wait_for(second, 1.0)  # woken at once (the bound is generous)
    assert admission.in_flight == 1
    permit.release()


def test_a_head_waiting_for_a_slot_is_woken_when_its_wait_becomes_a_paced_turn() -> None:
    # The head waits to be woken (no time limit) while every slot is taken. When the slot frees
    # and the pace holds the next send back, the head must be woken to sleep its turn instead.
    admission, clock = gate(adaptive=True)
    admission.controller.pacer = paced_pacer(
        1.0, at=clock.now
    )  # an empty bucket: the next turn is 1 s off
    holder = admission.call(30.0).enter(clock.sleep)
    head = _Waiter(1, None)
    turns = admission.call(30.0)._turns(head)
    assert next(turns) == _Wait(30.0, timed=False)  # a slot-wait, bounded by its pool timeout
    assert head.event is not None
    assert not head.event.is_set()
    holder.release()
    assert head.event.is_set()  # woken: its next look finds a paced turn
    turn = next(turns)
    assert not head.event.is_set()  # a wake ends only the wait it came for
    assert turn.timed
    assert turn.seconds is not None
    assert turn.seconds > 0
    turns.close()
    assert admission.queued == 0


async def test_a_waiter_woken_twice_before_it_looks_again_is_resolved_once() -> None:
    # Two releases in a row both wake the head before its task runs: the second wake finds the
    # future already resolved and leaves it alone.
    waiter = _Waiter(0, asyncio.get_running_loop())
    waiter.arm()
    waiter.wake()
    waiter.wake()
    await asyncio.sleep(0)
    assert waiter.future is not None
    assert waiter.future.done()
    waiter._resolve()  # once more, directly: still no error


def test_a_refusal_while_the_pool_starts_is_a_lost_turn_and_after_it_starves_the_pool() -> None:
    admission, clock = gate(capacity=8, adaptive=True)
    first = [admission.call(30.0).enter(clock.sleep) for _ in range(2)]
    first[0].done(Outcome("other"))  # e.g. a 500: it proves nothing, and ends nothing
    clock.now += 1.0
    first[1].done(Outcome("throttled", 0.0))  # a slow 429: a request is proven only after 2 s
    clock.now += KNOBS.starting_span - 1 - 1 / 16
    early = [admission.call(30.0).enter(clock.sleep) for _ in range(2)]
    early[1].done(Outcome("throttled", 0.0))
    assert early[1].crowded
    assert admission.lost_turn(early[1])  # sent while the pool was starting
    early[0].done(Outcome("other"))
    clock.now += 1 / 16
    late = [admission.call(30.0).enter(clock.sleep) for _ in range(2)]
    assert admission.starved_for() is None
    late[1].done(Outcome("throttled", 0.0))
    assert late[1].crowded
    assert admission.starved_for() == 0.0  # nothing admitted since the start: starved from now
    assert admission.lost_turn(late[1])  # the call waits for the gateway (`starved.py`)
    late[0].release()


@pytest.mark.parametrize(("budget", "wait"), [(0.5, 0.5), (5.0, 1.0), (None, 1.0)])
def test_a_wait_for_the_pool_to_grow_is_bounded_by_the_pool_timeout(
    budget: float | None, wait: float
) -> None:
    # A full pool may grow once its requests have been out KNOBS.slow_answer (1 s) on average: the head
    # looks again then, or when its own pool timeout ends, whichever comes first.
    admission, clock = gate(adaptive=True, max_capacity=2)
    holder = admission.call(30.0).enter(clock.sleep)
    turns = admission.call(budget)._turns(_Waiter(1, None))
    assert next(turns) == _Wait(wait, timed=False)
    turns.close()
    holder.release()
    assert admission.queued == 0


# A request proves the gateway admits the pool's requests only by an answer, or by being held
# past the horizon without a 429 (`slow_start`); whatever else ends it proves nothing.


def test_a_request_cancelled_in_flight_proves_nothing() -> None:
    admission, clock = gate(adaptive=True)
    admission.call(30.0).enter(clock.sleep).release()  # no report: cancelled mid-request
    clock.now += 1.0  # long past the horizon
    assert not admission.serving()


def test_a_request_that_failed_otherwise_proves_nothing() -> None:
    admission, clock = gate(adaptive=True)
    admission.call(30.0).enter(clock.sleep).done(Outcome("other"))  # e.g. a 500
    clock.now += 1.0
    assert not admission.serving()


def test_a_slot_granted_to_a_call_that_gave_up_proves_nothing() -> None:
    admission, clock = gate(adaptive=True)
    holder = admission.call(30.0).enter(clock.sleep)
    waiter = _Waiter(1, None)
    turns = admission.call(30.0)._turns(waiter)
    next(turns)  # queued behind the holder
    holder.done(Outcome("other"))  # the slot goes to the waiter...
    assert waiter.granted
    turns.close()  # ...which gives up before it sends anything
    assert admission.in_flight == 0
    clock.now += 1.0
    assert not admission.serving()


def test_a_streams_reply_counts_at_once_while_its_slot_is_still_held() -> None:
    admission, clock = gate(adaptive=True)
    permit = admission.call(30.0).enter(clock.sleep)
    permit.done(ANSWERED, keep=True)
    assert admission.serving()
    assert admission.in_flight == 1
    permit.release()


def test_only_a_429_may_go_back_to_its_place_in_the_queue() -> None:
    admission, clock = gate(capacity=2, adaptive=True)
    admission.call(30.0).enter(clock.sleep).done(ANSWERED)  # the gateway serves the pool
    other = admission.call(30.0).enter(clock.sleep)  # in flight: the next call is crowded
    call = admission.call(30.0)
    call.enter(clock.sleep).done(Outcome("other"))
    server_error = Failure(KimiError("internal error", status_code=500))
    assert not call.requeues(server_error)  # it spends a retry
    assert call.requeues(_throttled(1.0))
    other.release()


def test_the_next_head_is_woken_to_wait_for_the_pool_to_grow() -> None:
    # The second in line waits to be woken (up to its pool timeout); when the head gives up, it
    # becomes the head and must look again when the pool may grow, not at its timeout.
    admission, clock = gate(adaptive=True, max_capacity=2)
    holder = admission.call(30.0).enter(clock.sleep)
    first, second = _Waiter(1, None), _Waiter(2, None)
    first_turns = admission.call(30.0)._turns(first)
    second_turns = admission.call(30.0)._turns(second)
    assert next(first_turns) == _Wait(1.0, timed=False)  # KNOBS.slow_answer away
    assert next(second_turns) == _Wait(30.0, timed=False)
    first_turns.close()
    assert second.event is not None
    assert second.event.is_set()
    assert next(second_turns) == _Wait(1.0, timed=False)
    second_turns.close()
    holder.release()


def test_a_cold_pool_spreads_a_burst_beyond_the_first_window() -> None:
    # Inert pacer: the slow start spaces the sends beyond its first KNOBS.start_window, KNOBS.first_horizon / KNOBS.start_window.
    admission, clock = gate(capacity=100, adaptive=True)
    permits = [admission.call(30.0).enter(clock.sleep) for _ in range(KNOBS.start_window + 2)]
    assert clock.sleeps == [pytest.approx(KNOBS.first_horizon / KNOBS.start_window)]
    for permit in permits:
        permit.release()


def test_the_pool_grows_from_the_mean_age_of_the_requests_still_in_flight() -> None:
    admission, clock = gate(capacity=2, max_capacity=4)
    admission.call(30.0).enter(clock.sleep).release()  # the pool empties once
    old, gone = (admission.call(30.0).enter(clock.sleep) for _ in range(2))
    clock.now += 0.5
    gone.release()
    young = admission.call(30.0).enter(clock.sleep)
    turns = admission.call(30.0)._turns(_Waiter(9, None))
    # In flight: one out 0.5 s, one just sent: 0.25 s on average, KNOBS.slow_answer (1 s) in 0.75 s.
    assert next(turns) == _Wait(0.75, timed=False)
    turns.close()
    old.release()
    young.release()


@pytest.mark.parametrize(
    ("outcome", "sleeps"),
    [
        (Outcome("throttled", 0.0), [KNOBS.default_cool_down]),  # "retry now" is still a 429
        (Outcome("throttled", 0.75), [0.75]),
        (Outcome("overloaded", 0.0), []),
    ],
)
def test_the_cool_down_after_a_refusal_without_pacing(
    outcome: Outcome, sleeps: list[float]
) -> None:
    admission, clock = gate()
    admission.call(30.0).enter(clock.sleep).done(outcome)
    admission.call(30.0).enter(clock.sleep).release()
    assert clock.sleeps == sleeps


@pytest.mark.parametrize("budget", [1.0, None])
def test_a_paced_turn_exactly_as_far_as_the_pool_timeout_is_waited(budget: float | None) -> None:
    admission, clock = gate(capacity=8, adaptive=True)
    permits = [admission.call(30.0).enter(clock.sleep) for _ in range(3)]
    for permit in permits[:2]:
        permit.done(Outcome("throttled", 1.0))  # one admitted in the last second: 1 request/s
    admission.call(budget).enter(clock.sleep).release()
    assert clock.sleeps == [1.0]


def test_an_error_reported_while_the_slot_is_still_held_proves_nothing() -> None:
    admission, clock = gate(adaptive=True)
    permit = admission.call(30.0).enter(clock.sleep)
    permit.done(Outcome("overloaded", 0.0), keep=True)  # reported; its connection still drains
    clock.now += 1.0
    assert not admission.serving()
    permit.release()


# -- found unpinned by the mutation run of issue 29 (tests/mutation/…admission.md) ----------------


def test_waking_a_waiter_whose_loop_was_closed_is_harmless() -> None:
    # A release on one thread may wake an async call whose event loop has ended meanwhile.
    loop = asyncio.new_event_loop()
    waiter = _Waiter(0, loop)
    loop.close()
    waiter.wake()  # nobody left to wake: no error


async def test_a_slot_granted_to_a_cancelled_call_is_freed_while_others_are_in_flight() -> None:
    admission, clock = gate(capacity=2)
    holders = [admission.call(30.0).enter(clock.sleep) for _ in range(2)]
    task = asyncio.create_task(admission.call(30.0).aenter(clock.async_sleep))
    await asyncio.sleep(0)
    holders[0].release()  # granted to the queued task...
    task.cancel()  # ...which is cancelled before it runs again: its slot is freed
    with pytest.raises(asyncio.CancelledError):
        await task
    assert admission.in_flight == 1
    holders[1].release()
    assert admission.in_flight == 0


def test_the_mean_hold_moves_a_tenth_of_the_way_to_each_released_slots_hold() -> None:
    # The first slot held 0.5 s starts the mean; then slots held 5 s each: the mean hold goes
    # 0.5, 0.95, 1.355 s. A full pool grows once it reaches KNOBS.slow_answer (1 s): after the
    # third release, not the second.
    assert (KNOBS.hold_weight, KNOBS.slow_answer) == (0.1, 1.0)
    admission, clock = gate(max_capacity=2)
    for held_for in (0.5, 5.0):
        held = admission.call(30.0).enter(clock.sleep)
        clock.now += held_for
        held.release()
    fresh = admission.call(30.0).enter(clock.sleep)  # just sent: the pool is full
    with pytest.raises(KimiTimeoutError):
        admission.call(0.0).enter(clock.sleep)
    clock.now += 5.0
    fresh.release()
    admission.call(30.0).enter(clock.sleep)
    admission.call(0.0).enter(clock.sleep)  # the pool grows instead of timing out
    assert admission.capacity == 2


@pytest.mark.parametrize("held_for", [1.5, KNOBS.slow_answer], ids=["1.5 s", "exactly slow_answer"])
def test_the_first_released_slot_starts_the_mean_hold(held_for: float) -> None:
    # One slot held 1.5 s: the mean hold is 1.5 s at once (from 0 it would be 0.15 s, and a
    # full pool of 1-2 s answers waited for ten of them before it grew: 500/s of 1-2 s answers
    # lost half a second, issue 29). Held exactly KNOBS.slow_answer (1 s, exact in binary):
    # "held slow_answer on average" includes the bound. The pool full of a request just sent
    # grows at once.
    admission, clock = gate(max_capacity=2)
    held = admission.call(30.0).enter(clock.sleep)
    clock.now += held_for
    held.release()
    admission.call(30.0).enter(clock.sleep)  # just sent: the pool is full, its mean age 0
    admission.call(0.0).enter(clock.sleep)  # the pool grows instead of timing out
    assert admission.capacity == 2


def test_requests_out_slow_answer_on_average_but_for_rounding_grow_a_full_pool() -> None:
    # The one request in flight has been out 1 s less 1e-10 s (in binary: ~9e-11 s short): due
    # but for rounding is due, the pool grows at once rather than waiting 1e-10 s.
    admission, clock = gate(max_capacity=2)
    admission.call(30.0).enter(clock.sleep)
    clock.now += KNOBS.slow_answer - 1e-10
    admission.call(0.0).enter(clock.sleep)
    assert admission.capacity == 2


def test_an_emptied_pool_starts_its_sum_of_send_times_afresh() -> None:
    # Summed send times lose their low bits at large clock values: at 2**53 s (spacing 2 s) a
    # send at +2 s is lost from the sum, which after both are freed would read -2 s. An empty
    # pool starts from 0, so a request just sent is 0 s old, not 2 s (a slow answer: growth).
    admission, clock = gate(capacity=2, max_capacity=3)
    clock.now = 2.0**53
    first = admission.call(30.0).enter(clock.sleep)
    clock.now += 2.0
    second = admission.call(30.0).enter(clock.sleep)
    second.release()  # held 0 s: it starts the mean hold (then 0.2 s: not slow)
    first.release()
    assert admission.in_flight == 0
    pair = [admission.call(30.0).enter(clock.sleep) for _ in range(2)]  # the pool is full
    with pytest.raises(KimiTimeoutError):
        admission.call(0.0).enter(clock.sleep)  # just sent: no slow answers, no growth
    assert admission.capacity == 2
    for permit in pair:
        permit.release()


def test_a_call_that_has_sent_nothing_yet_has_no_turn_to_lose() -> None:
    admission, _ = gate(capacity=2, adaptive=True)
    assert not admission.call(30.0).requeues(_throttled(1.0))


def test_an_overload_to_a_crowded_call_of_a_served_pool_goes_back_to_its_place() -> None:
    # A 503 or 529 while the gateway serves the pool only cost the call its turn, as a 429 does.
    admission, clock = gate(capacity=2, adaptive=True)
    admission.call(30.0).enter(clock.sleep).done(ANSWERED)  # the gateway serves the pool
    other = admission.call(30.0).enter(clock.sleep)
    for status in (503, 529):
        call = admission.call(30.0)
        call.enter(clock.sleep).done(Outcome("overloaded", None))
        assert call.requeues(Failure(KimiError("overloaded", status_code=status)))
    other.release()


def test_a_crowded_429_while_the_pool_starts_goes_back_to_its_place() -> None:
    # Nothing admitted yet (not served), but the request went with another while the pool was
    # starting: the call keeps its place (`slow_start.lost_turn`, from the request itself).
    admission, clock = gate(capacity=2, adaptive=True)
    other = admission.call(30.0).enter(clock.sleep)
    call = admission.call(30.0)
    call.enter(clock.sleep).done(Outcome("throttled", 0.0))
    assert not admission.serving()
    assert call.requeues(_throttled(0.0))
    other.release()


def test_the_pool_timeout_error_says_what_it_waited_for_and_that_nothing_was_sent() -> None:
    admission, clock = gate()
    holder = admission.call(30.0).enter(clock.sleep)
    with pytest.raises(KimiTimeoutError) as timed_out:
        admission.call(0.0).enter(clock.sleep)
    assert str(timed_out.value) == (
        "waiting for a free connection would outlast this call's pool timeout of 0s "
        "(httpx.Timeout.pool); nothing was sent"
    )
    holder.release()


def test_a_sync_wait_for_a_slot_nobody_frees_ends_at_its_pool_timeout() -> None:
    # On the real clock: the waiting thread is never woken, its wait is bounded by its budget.
    admission = Admission(1, adaptive=False, clock=time.monotonic)
    holder = admission.call(30.0).enter(time.sleep)
    errors: list[BaseException] = []

    def wait() -> None:
        try:
            admission.call(0.05).enter(time.sleep)
        except KimiTimeoutError as error:
            errors.append(error)

    waiting = threading.Thread(target=wait, daemon=True)
    waiting.start()
    waiting.join(5.0)  # a generous bound: it ends after 0.05 s
    assert not waiting.is_alive()
    assert len(errors) == 1
    holder.release()


async def test_an_async_wait_for_a_slot_nobody_frees_ends_at_its_pool_timeout() -> None:
    admission = Admission(1, adaptive=False, clock=time.monotonic)
    holder = admission.call(30.0).enter(time.sleep)
    with pytest.raises(KimiTimeoutError):
        await asyncio.wait_for(admission.call(0.05).aenter(asyncio.sleep), 5.0)
    holder.release()
