"""The slow start of one pool (`langchain_kimi._http.limits.slow_start`): how many requests may be out
before the gateway could have refused them, and when a 429 is only a lost turn.

Sans-I/O: times are plain floats chosen exact in binary. Through `Admission` the slow start only
applies while the pacer is inert (`test_admission`); here it is driven directly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from langchain_kimi._errors import KimiRateLimitError
from langchain_kimi._http.limits import slow_start as slow_start_module
from langchain_kimi._http.limits.admission import Admission, _Wait, _Waiter
from langchain_kimi._http.limits.controller import Paced
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import ANSWERED, Outcome
from langchain_kimi._http.limits.retry import Failure
from langchain_kimi._http.limits.slow_start import SlowStart
from tests.support.fake_clock import Clock, paced_pacer

REFUSED = Failure(KimiRateLimitError("slow down", status_code=429), True, False, 0.0)


def send(start: SlowStart, now: float) -> object:
    """One request sent at `now` (it must be allowed); returns its key."""
    assert start.delay(now) == 0.0
    key = object()
    start.sent(key, now)
    return key


def test_the_first_window_goes_at_once_then_sends_are_spread_over_the_horizon() -> None:
    start = SlowStart(max_window=4000)
    for _ in range(KNOBS.start_window + 1):  # a burst of KNOBS.start_window beyond the one due now
        send(start, 0.0)
    # The window (KNOBS.start_window) is spread over a horizon: one send per KNOBS.first_horizon / KNOBS.start_window seconds.
    assert start.delay(0.0) == pytest.approx(KNOBS.first_horizon / KNOBS.start_window)


def test_one_call_after_another_never_waits() -> None:
    start = SlowStart(max_window=4000)
    for _ in range(1000):
        key = send(start, 5.0)
        start.answered(key, 5.0, 5.0)
    assert start.delay(5.0) == 0.0


def test_each_admitted_request_widens_the_window_by_one_up_to_the_maximum() -> None:
    start = SlowStart(max_window=12)
    keys = [send(start, 0.0) for _ in range(KNOBS.start_window)]
    start.answered(keys[0], 0.0, 0.125)
    assert start.window == KNOBS.start_window + 1
    # Out for a whole horizon without a 429: admitted, whether answered yet or not.
    assert start.delay(KNOBS.first_horizon) == 0.0
    assert start.unproven == 0
    assert start.window == 12  # capped
    start.answered(keys[1], 0.0, 1.0)  # proven by age already: no second count
    assert start.window == 12


def test_a_request_one_instant_short_of_the_horizon_is_still_unproven() -> None:
    start = SlowStart(max_window=4000)
    send(start, 0.0)
    start.delay(KNOBS.first_horizon - 1 / 1024)
    assert start.unproven == 1
    start.delay(KNOBS.first_horizon)
    assert start.unproven == 0


def test_a_429_halves_the_window_but_never_below_start_and_sets_the_horizon() -> None:
    start = SlowStart(max_window=4000, window=64)
    key = send(start, 0.0)
    start.refused(key, sent_at=0.0, now=0.125)
    assert start.window == 32
    assert start.horizon == 0.25  # twice the slowest refusal seen
    for _ in range(5):
        key = send(start, 10.0)
        start.refused(key, sent_at=10.0, now=10.0)
    assert start.window == KNOBS.start_window
    assert start.horizon == 0.25  # a faster refusal does not shorten it


def test_the_horizon_has_a_floor_for_a_gateway_that_refuses_in_no_time() -> None:
    start = SlowStart(max_window=4000)
    key = send(start, 0.0)
    start.refused(key, sent_at=0.0, now=0.0)
    assert start.horizon == KNOBS.min_horizon


def test_an_ended_request_proves_nothing() -> None:
    start = SlowStart(max_window=4000)
    key = send(start, 0.0)
    start.ended(key)
    assert start.unproven == 0
    assert start.window == KNOBS.start_window
    assert not start.admitted_recently(0.0)


def test_a_request_that_ended_otherwise_leaves_the_unproven() -> None:
    # As the controller reports it: an outcome that is neither an answer nor a 429 (a 500).
    start = SlowStart(max_window=4000)
    request = Sent(0.0)
    start.sent(request, 0.0)
    start.record(request, Outcome("other"), 0.1)
    assert start.unproven == 0


def test_a_request_is_proven_by_age_a_horizon_after_its_own_send() -> None:
    # Far from 0 (a pool in its hundredth second): the age is the time since the send.
    start = SlowStart(max_window=4000)
    send(start, 100.0)
    assert not start.admitted_recently(100.0 + KNOBS.first_horizon - 1 / 64)
    assert start.admitted_recently(100.0 + KNOBS.first_horizon)


def test_starting_and_serving_each_follow_their_own_knob(monkeypatch: pytest.MonkeyPatch) -> None:
    # One knob (`serving_span`) once said both how long a pool starts and how long an
    # admission serves it.
    short = dataclasses.replace(KNOBS, starting_span=3.0, serving_span=20.0)
    monkeypatch.setattr(slow_start_module, "KNOBS", short)
    start = SlowStart(max_window=4000)
    start.answered(send(start, 100.0), 100.0, 100.5)
    assert start.starting(103.0 - 1 / 64)
    assert not start.starting(103.0)
    assert start.admitted_recently(120.5 - 1 / 64)
    assert not start.admitted_recently(120.5)


def test_the_gateway_serves_the_pool_for_a_serving_span_after_it_admitted_a_request() -> None:
    start = SlowStart(max_window=4000)
    start.answered(send(start, 0.0), 0.0, 1.0)
    assert start.admitted_recently(1.0 + KNOBS.serving_span - 1 / 64)
    assert not start.admitted_recently(1.0 + KNOBS.serving_span)


def test_a_request_held_past_the_horizon_counts_as_admitted_from_then() -> None:
    start = SlowStart(max_window=4000)
    send(start, 0.0)
    assert start.admitted_recently(KNOBS.first_horizon)
    assert start.admitted_recently(KNOBS.first_horizon + KNOBS.serving_span - 1 / 64)
    assert not start.admitted_recently(KNOBS.first_horizon + KNOBS.serving_span)


def test_a_pool_is_starting_for_a_starting_span_after_its_first_send_after_idle() -> None:
    start = SlowStart(max_window=4000)
    send(start, 100.0)
    assert start.starting(100.0 + KNOBS.starting_span - 1 / 64)
    assert not start.starting(100.0 + KNOBS.starting_span)
    send(start, 100.0 + KNOBS.idle)  # KNOBS.idle seconds after the last send is not yet idle
    assert not start.starting(100.0 + KNOBS.idle)
    send(start, 100.0 + 2 * KNOBS.idle + 1)  # more than KNOBS.idle: a new start
    assert start.starting(100.0 + 2 * KNOBS.idle + 1)


# -- through Admission ---------------------------------------------------------------------------


def test_a_lone_call_refused_spends_a_retry_a_starting_crowded_pool_does_not() -> None:
    clock = Clock()
    gate = Admission(8, adaptive=True, clock=clock)
    lone = gate.call(30.0)
    permit = lone.enter(clock.sleep)
    assert not permit.crowded  # nothing else in flight, nobody waiting
    permit.done(Outcome("throttled", 0.0))
    assert not lone.requeues(REFUSED)  # a call alone spends its retries, even while starting

    clock.now += KNOBS.idle + 1
    calls = [gate.call(30.0) for _ in range(3)]
    permits = [call.enter(clock.sleep) for call in calls]
    assert [p.crowded for p in permits] == [False, True, True]
    for p in permits:
        p.done(Outcome("throttled", 0.0))
    assert calls[1].requeues(REFUSED)  # sent with others while the pool was starting


def test_a_call_sent_with_others_waiting_behind_it_is_crowded() -> None:
    # Pacing sends one request at a time: none other in flight, but calls wait behind it (the
    # starving process of 16 sharing a key lost answers when only in-flight requests counted).
    clock = Clock()
    gate = Admission(1, adaptive=True, clock=clock)
    holder = gate.call(30.0).enter(clock.sleep)
    second, third = gate.call(30.0), gate.call(30.0)
    turns = [call._turns(_Waiter(call._ticket, None)) for call in (second, third)]
    for waiting in turns:
        assert not next(waiting).timed  # queued for the slot
    holder.release()
    with pytest.raises(StopIteration) as granted:
        next(turns[0])
    assert granted.value.value.crowded
    turns[1].close()
    granted.value.value.release()


def test_a_429_while_the_gateway_answers_the_pool_is_a_lost_turn_an_overload_after_it_not() -> None:
    clock = Clock()
    gate = Admission(8, adaptive=True, clock=clock)
    gate.call(30.0).enter(clock.sleep).done(ANSWERED)  # the pool starts, and is served
    clock.now += KNOBS.serving_span - 1 / 16
    permit = gate.call(30.0).enter(clock.sleep)
    permit.done(Outcome("throttled", 0.0))
    assert gate.lost_turn(permit)  # served (and no longer starting)
    assert gate.starved_for() is None
    clock.now += 1 / 16
    busy = gate.call(30.0).enter(clock.sleep)
    busy.done(Outcome("overloaded", None))
    assert not gate.lost_turn(busy)  # neither served, nor starting, nor starved


def test_a_full_pool_of_slow_answers_grows_before_the_first_answer_returns() -> None:
    # 30-90 s answers: the first slot is released after 30 s, but the requests in flight have been
    # out for KNOBS.slow_answer (1 s) on average long before: the pool grows then.
    clock = Clock()
    gate = Admission(2, adaptive=True, clock=clock, max_capacity=6)
    gate.controller.slow_start.window = 6  # slow start over
    held = [gate.call(30.0).enter(clock.sleep) for _ in range(2)]
    waiter = gate.call(30.0)
    turns = waiter._turns(_Waiter(waiter._ticket, None))
    wait = next(turns)
    assert not wait.timed
    assert wait.seconds == pytest.approx(1.0)  # look again when the holds count as slow
    clock.now += 1.0
    with pytest.raises(StopIteration):
        next(turns)  # granted: the capacity grew
    assert gate.capacity == 4
    assert gate.in_flight == 3
    for permit in held:
        permit.release()


# -- edges a mutation run (issue 19 item 5) showed unpinned ---------------------------------------


def test_a_pool_busy_within_idle_does_not_start_again() -> None:
    # Times far from 0 (a pool in its thousandth second): only the gap between sends counts.
    start = SlowStart(max_window=4000)
    start.refused(send(start, 1000.0), sent_at=1000.0, now=1000.5)
    send(start, 1000.0 + KNOBS.starting_span)
    assert not start.starting(1000.0 + KNOBS.starting_span)
    send(
        start, 1000.0 + KNOBS.starting_span + KNOBS.idle
    )  # a gap of exactly KNOBS.idle is not yet idle
    assert not start.starting(1000.0 + KNOBS.starting_span + KNOBS.idle)
    send(
        start, 1000.0 + KNOBS.starting_span + 2 * KNOBS.idle + 1 / 64
    )  # a gap just over KNOBS.idle is
    assert start.starting(1000.0 + KNOBS.starting_span + 2 * KNOBS.idle + 1 / 64)


def test_a_refused_request_is_never_later_proven_admitted_by_age() -> None:
    start = SlowStart(max_window=4000, window=20)
    key = send(start, 0.0)
    start.refused(key, sent_at=0.0, now=0.0)
    assert start.unproven == 0
    start.delay(1.0)  # long past the horizon
    assert start.window == 10  # halved, and not widened again
    assert not start.admitted_recently(1.0)


def test_a_429_recorded_for_a_request_is_never_later_proven_admitted_by_age() -> None:
    start = SlowStart(max_window=4000, window=20)
    request = Admission(8, adaptive=True, clock=Clock()).call(30.0).enter(Clock().sleep)
    start.sent(request, request.sent_at)
    start.record(request, Outcome("throttled", 0.0), request.sent_at)
    assert start.unproven == 0
    start.delay(request.sent_at + 1.0)  # long past the horizon
    assert start.window == 10
    assert not start.admitted_recently(request.sent_at + 1.0)
    request.release()


def test_a_429_slower_than_the_horizon_for_a_request_already_proven_by_age_is_taken() -> None:
    # A refusal that took longer than the horizon (the horizon follows the slowest seen).
    start = SlowStart(max_window=4000, window=20)
    key = send(start, 0.0)
    start.delay(1.0)  # proven admitted by age: out of the unproven
    assert start.unproven == 0
    start.refused(key, sent_at=0.0, now=1.0)  # and yet refused: no error
    assert start.horizon == KNOBS.horizon_per_refusal * 1.0


def test_an_answer_for_a_request_proven_by_age_does_not_widen_the_window_again() -> None:
    start = SlowStart(max_window=4000)
    key = send(start, 0.0)
    start.delay(KNOBS.first_horizon)  # proven by age: KNOBS.start_window + 1
    assert start.window == KNOBS.start_window + 1
    start.answered(key, 0.0, 1.0)
    start.answered(object(), 0.0, 1.0)  # a request it never counted as unproven
    assert start.window == KNOBS.start_window + 1


def test_a_429_halves_an_odd_window_to_a_whole_number_of_requests() -> None:
    start = SlowStart(max_window=4000, window=65)
    start.refused(send(start, 0.0), sent_at=0.0, now=0.125)
    assert start.window == 32
    assert isinstance(start.window, int)


def test_a_pool_filled_by_a_paced_turn_grows_without_waiting_for_a_slot_to_free() -> None:
    # 20/s with 30-90 s answers at 2,000 concurrent: the paced turn that takes the last slot of
    # the capacity leaves the next call waiting for a slot, and no slot frees for 30 s. It must
    # look again when the requests in flight count as slow (KNOBS.slow_answer on average), as a
    # call arriving at a full pool does; it waited for a free slot (simulated: 1.19x -> 1.31x
    # ideal, nothing sent from 9 s to 31 s, once the pacer's 429s stopped waking the queue).
    clock = Clock()
    gate = Admission(2, adaptive=True, clock=clock, max_capacity=6)
    gate.controller.slow_start.window = 6  # slow start over
    held = gate.call(30.0).enter(clock.sleep)
    assert isinstance(gate.controller, Paced)
    gate.controller.pacer = paced_pacer(rate=1.0, at=clock.now)
    head, second = _Waiter(1, None), _Waiter(2, None)
    head_turns = gate.call(30.0)._turns(head)
    second_turns = gate.call(30.0)._turns(second)
    paced = next(head_turns)
    assert paced.timed  # its paced turn
    assert next(second_turns) == _Wait(30.0, timed=False)  # behind it, up to its pool timeout
    clock.now += paced.seconds or 0.0
    with pytest.raises(StopIteration):
        next(head_turns)  # granted: the capacity of 2 is full now
    assert second.event is not None
    assert second.event.is_set()  # woken to look again when the pool may grow
    mean_age = clock.now - (held.sent_at + clock.now) / 2
    assert next(second_turns) == _Wait(pytest.approx(KNOBS.slow_answer - mean_age), timed=False)
    clock.now += KNOBS.slow_answer
    assert gate.controller.delay(clock.now) == 0.0
    with pytest.raises(StopIteration):
        next(second_turns)  # granted: the capacity grew
    assert gate.capacity == 4
    held.release()


@dataclass(frozen=True, eq=False)
class Sent:
    """A request as the controller sees it (each one its own key)."""

    sent_at: float
    in_flight: int = 1
    crowded: bool = True


def test_a_pool_whose_pacer_healed_owes_the_slow_start_nothing_for_the_paced_sends() -> None:
    # A 429 that took 2 s makes the slow start's horizon 4 s: its window of KNOBS.start_window
    # spaces its sends 0.4 s apart. The pacer then paced 100 sends at 50/s or more, each answered
    # after the next four went (five in flight, so the pool is never empty). Once the pacer
    # heals, the slow start decides the turns again, and the paced sends were not its to space
    # (issue 29: behind 429s taking 0.2-0.4 s, a pool paced at 150/s healed and then held its
    # last calls 20 s, 3.3x ideal).
    controller = Paced(max_window=4000, can_fall_back=False)
    refused = object()
    controller.slow_start.sent(refused, 0.0)
    controller.slow_start.refused(refused, sent_at=0.0, now=2.0)
    controller.pacer = paced_pacer(50.0, at=2.0)
    now = 2.0
    out: list[Sent] = []
    for _ in range(100):
        now += controller.delay(now)
        out.append(Sent(now))
        controller.sent(out[-1], now)
        if len(out) > 5:
            answered = out.pop(0)
            controller.record(answered, ANSWERED, now)
            controller.record(answered, None, now)
    now += KNOBS.heal + 0.25  # the last five still out (long answers)
    assert controller.rate(now) is None  # healed: the slow start's turn
    assert controller.delay(now) == 0.0


@pytest.mark.parametrize(("retry_after", "held"), [(30.0, True), (1.0, False), (None, False)])
def test_a_paced_pool_whose_429s_say_when_the_gateway_reopens_holds_its_pace_until_then(
    retry_after: float | None, held: bool
) -> None:
    # `Paced` hands each 429's Retry-After to the pacer: a step of nothing but 429s asking for
    # 30 s holds the pace (`pacer.py`, a window that says when it reopens); 1 s or none does not.
    controller = Paced(max_window=4000, can_fall_back=False)
    controller.pacer = paced_pacer(20.0, at=2.0)
    for k in range(1, 5):
        request = Sent(2.0 + k / 32)
        controller.sent(request, request.sent_at)
        controller.record(request, Outcome("throttled", retry_after, 429), request.sent_at)
    wait = controller.delay(2.25)
    assert (wait > 29.0) is held
    assert wait < 1.0 or held


def answer_first_window(start: SlowStart | Paced, took: float) -> None:
    """The pool's first KNOBS.start_window requests, sent at 0, all answered `took` later."""
    first_window(start, [took] * KNOBS.start_window)


def test_where_every_answer_beats_the_horizon_age_proves_nothing_and_the_window_bounds() -> None:
    # 429s taking 2 s behind a 50/s bucket whose answers take 50-250 ms (issue 29): every request
    # out KNOBS.first_horizon counted as admitted, the window grew to 338 before the first 429
    # came back and 239 requests were refused by then (1.52x ideal, 1.77 requests per answer).
    start = SlowStart(max_window=4000)
    answer_first_window(start, took=1 / 8)
    window = 2 * KNOBS.start_window
    assert start.window == window
    out = [Sent(1 / 8) for _ in range(window)]
    for request in out:
        start.sent(request, 1 / 8)  # (the spacing aside)
    now = 13 / 32  # out longer than the horizon, no 429 yet
    start.delay(now)
    assert start.unproven == window  # not proven by age: the answers came back sooner
    assert start.window == window  # nor grown by it
    assert start.quick
    assert start.limit(in_flight=window) == window  # nothing more until one is answered
    start.record(out[0], ANSWERED, now)  # within KNOBS.quick_answers horizons: still quick
    assert start.limit(in_flight=window) == window + 2  # its slot still held (a stream)
    start.record(out[0], None, now)
    assert start.limit(in_flight=window - 1) == window + 1  # one for the answer, one for growth
    start.delay(4.0)  # the others, out for seconds: still unproven
    assert start.unproven == window - 1


def test_answers_slower_than_the_horizon_keep_the_proof_by_age_and_no_bound() -> None:
    # Every LLM answer of more than a few tokens: 0.5 s to minutes.
    start = SlowStart(max_window=4000)
    answer_first_window(start, took=1 / 2)  # more than KNOBS.quick_answers horizons
    send(start, 1.0)
    start.delay(1.0 + KNOBS.first_horizon)
    assert start.unproven == 0
    assert not start.quick
    assert start.limit(in_flight=1) is None


def test_a_late_answer_in_ten_leaves_the_answers_quick() -> None:
    # One answer 9 ms past the bound (0.321 s against 1.25 x 0.25 s: a busy event loop) ended
    # the quick answers for good, and the window grew by age while 429s took 2 s: 1.52x ideal
    # where the run before, its slowest answer 0.312 s, was 1.09x (the loopback gateway,
    # docs/benchmarks.md, "A late answer").
    start = SlowStart(max_window=4000)
    late = KNOBS.quick_answers * KNOBS.first_horizon
    first_window(start, [1 / 8] * (KNOBS.start_window - 1) + [late])
    assert start.quick


def test_more_late_answers_than_one_in_ten_end_the_quick_answers() -> None:
    # Counted from each request's send, a request proven by age included.
    start = SlowStart(max_window=4000)
    first = [Sent(0.0) for _ in range(KNOBS.start_window)]
    for request in first:
        start.sent(request, 0.0)
    for request in first[1:]:
        start.record(request, ANSWERED, 1 / 8)
    start.delay(KNOBS.first_horizon)  # the first window not all answered yet: proven by age
    assert start.unproven == 0
    start.record(first[0], ANSWERED, 1 / 2)
    assert start.quick  # one late answer in ten
    answer(start, at=1.0, took=1 / 2)
    assert not start.quick  # two in eleven


def test_the_latest_answers_say_whether_the_answers_are_quick() -> None:
    # A pool whose answers turn slow (longer prompts) stops counting as quick, and one whose
    # late answers are long past counts as quick again.
    start = SlowStart(max_window=4000)
    answer_first_window(start, took=1 / 8)
    now = 1.0
    late = int(KNOBS.late_answers * KNOBS.answer_sample) + 1
    for _ in range(late):
        answer(start, at=now, took=1 / 2)
    assert not start.quick
    for _ in range(KNOBS.answer_sample - late):
        answer(start, at=now, took=1 / 8)
    assert not start.quick  # the late ones still more than one in ten of the latest
    answer(start, at=now, took=1 / 8)
    assert start.quick


def test_a_late_answer_is_judged_against_the_horizon_as_it_grows() -> None:
    # A slow 429 widens the horizon: an answer late for the first one is quick for the new one.
    start = SlowStart(max_window=4000)
    first_window(start, [1 / 8] * (KNOBS.start_window - 2) + [1 / 2] * 2)  # two late for it
    assert not start.quick
    refused = Sent(1.0)
    start.sent(refused, 1.0)
    start.record(refused, Outcome("throttled"), 1.25)  # a 429 in 1/4 s: a horizon of 1/2 s
    assert start.horizon == 2 * (1 / 4)
    assert start.quick  # 1/2 s is within 1.25 of those horizons


def answer(start: SlowStart, *, at: float, took: float) -> None:
    """One request sent at `at`, answered `took` later."""
    request = Sent(at)
    start.sent(request, at)
    start.record(request, ANSWERED, at + took)


def first_window(start: SlowStart | Paced, took: list[float]) -> None:
    """The first KNOBS.start_window requests, sent at 0, answered after `took` in that order
    (their slots given back)."""
    assert len(took) == KNOBS.start_window
    first = [Sent(0.0) for _ in took]
    for request in first:
        start.sent(request, 0.0)
    for request, seconds in zip(first, took, strict=True):
        start.record(request, ANSWERED, seconds)
        start.record(request, None, seconds)


def test_an_answer_exactly_at_the_bound_is_late() -> None:
    bound = KNOBS.quick_answers * KNOBS.first_horizon  # 5/16 s: exact in binary
    start = SlowStart(max_window=4000)
    first_window(start, [1 / 8] * (KNOBS.start_window - 2) + [bound] * 2)
    assert not start.quick  # two late in ten


def test_a_late_answer_leaving_the_sample_no_longer_counts() -> None:
    bound = KNOBS.quick_answers * KNOBS.first_horizon
    allowed = int(KNOBS.late_answers * KNOBS.answer_sample)  # late ones in a full sample
    start = SlowStart(max_window=4000)
    first_window(start, [bound] * allowed + [1 / 8] * (KNOBS.start_window - allowed))
    for _ in range(KNOBS.answer_sample - KNOBS.start_window):  # the sample full, quick
        answer(start, at=1.0, took=1 / 8)
    assert start.quick
    answer(start, at=2.0, took=bound)  # one more late; the oldest, late, leaves
    assert start.quick


def test_answers_at_the_bound_of_a_wider_horizon_are_late_for_it_too() -> None:
    start = SlowStart(max_window=4000)
    first_window(start, [1 / 8] * (KNOBS.start_window - 2) + [5 / 8] * 2)
    assert not start.quick
    refused = Sent(1.0)
    start.sent(refused, 1.0)
    start.record(refused, Outcome("throttled"), 1.25)  # a horizon of 1/2 s: a bound of 5/8 s
    assert KNOBS.quick_answers * start.horizon == 5 / 8
    assert not start.quick  # counted again against the new bound: still two late in ten


@pytest.mark.parametrize("outcome", [Outcome("throttled"), Outcome("other")], ids=["429", "failed"])
def test_a_first_window_with_a_request_not_answered_is_no_sample_of_the_answers(
    outcome: Outcome,
) -> None:
    # The first answers alone are the quick part of them: only a whole window tells; a request
    # of it refused, or failed otherwise, leaves it never whole.
    start = SlowStart(max_window=4000)
    first = [Sent(0.0) for _ in range(KNOBS.start_window)]
    for request in first:
        start.sent(request, 0.0)
    start.record(first[0], outcome, 1 / 16)
    start.record(first[0], None, 1 / 16)  # its slot given back
    for request in first[1:]:
        start.record(request, ANSWERED, 1 / 8)
    assert not start.quick
    assert start.limit(in_flight=0) is None


def test_the_window_bounds_the_requests_in_flight_only_while_the_pacer_is_inert() -> None:
    controller = Paced(max_window=4000, can_fall_back=False)
    answer_first_window(controller, took=1 / 8)
    window = 2 * KNOBS.start_window
    assert controller.limit(1 / 8, 0) == window  # the first window's slots given back
    for _ in range(5):
        controller.sent(Sent(1 / 8), 1 / 8)
    assert controller.limit(1.0, 5) == window  # 5 in flight, all unproven
    controller.pacer = paced_pacer(rate=50.0, at=1.0)
    assert controller.limit(1.0, 5) is None  # paced: the pacer's turns, not the window


def test_the_first_window_is_all_of_its_requests_not_the_first_answered() -> None:
    # Half of the first window answered quickly, the other half still out: no whole sample yet.
    start = SlowStart(max_window=4000)
    first = [Sent(0.0) for _ in range(KNOBS.start_window)]
    for request in first:
        start.sent(request, 0.0)
    for request in first[: KNOBS.start_window // 2]:
        start.record(request, ANSWERED, 1 / 8)
    assert not start.quick
    for request in first[KNOBS.start_window // 2 :]:
        start.record(request, ANSWERED, 1 / 8)
    assert start.quick


def test_an_in_flight_cap_and_the_quick_answers_window_both_bound_the_pool() -> None:
    # Answers in 1/128 s (quick) from a gateway that also refuses above 12 in flight: the cap
    # learnt from its 429s (two bursts a step apart, refused from count 13 on) is tighter than
    # the window of 20 the first answers grew, and the tighter one holds.
    controller = Paced(max_window=4000, can_fall_back=False)
    answer_first_window(controller, took=1 / 128)
    now = 1.0
    for _ in range(2):
        for count in range(1, 12 + 3):
            request = Sent(now, in_flight=count)
            controller.in_flight.sent(request, now)
            if count > 12:
                controller.in_flight.refused(request, now)
        now += KNOBS.step
    assert controller.slow_start.quick
    assert controller.slow_start.limit(in_flight=0) == 2 * KNOBS.start_window
    assert controller.limit(now, 0) == 12
