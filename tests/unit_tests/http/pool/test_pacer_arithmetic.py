"""The pacer's arithmetic at its edges: bursts, floors, caps, step and look-back boundaries.

Each test pins one rule of `langchain_kimi._http.pool.pacer` that a mutation run (issue 19 item 5)
showed unpinned. Times are plain floats chosen exact in binary, so the boundaries are exact.
"""

from __future__ import annotations

import pytest

from langchain_kimi._http.pool.pacer import HEAL, MARGIN, PROBE, Pacer
from tests.support.fake_clock import paced_pacer


def test_a_slow_pool_after_an_idle_spell_sends_one_request_then_waits() -> None:
    # At 4 requests/s the client bucket holds one send: the next waits a full 1/rate.
    pacer = paced_pacer(4.0)
    assert pacer.delay(3.0) == 0.0
    pacer.sent(3.0)
    assert pacer.delay(3.0) == pytest.approx(1 / 4.0)


def test_a_fast_pool_after_an_idle_spell_sends_a_burst_of_a_quarter_step() -> None:
    # Burst = rate * STEP / 4 = 40 * 0.25 / 4 = 2.5 sends: two go at once, the third waits half
    # a token.
    pacer = paced_pacer(40.0)
    for _ in range(2):
        assert pacer.delay(3.0) == 0.0
        pacer.sent(3.0)
    assert pacer.delay(3.0) == pytest.approx(0.5 / 40.0)


def test_a_send_after_an_idle_spell_uses_the_refilled_token() -> None:
    # `sent` refills the bucket before taking its token: after 1 s idle at 4/s, one send empties
    # the (one-token) bucket, and the next send must wait a full 1/rate.
    pacer = paced_pacer(4.0)
    pacer.sent(3.0)  # no `delay` asked first
    assert pacer.delay(3.0) == pytest.approx(1 / 4.0)


def test_a_send_closes_a_finished_step_before_counting_itself() -> None:
    pacer = paced_pacer(100.0)
    for i in range(1, 5):
        now = 2.0 + i / 64
        pacer.sent(now)
        if i % 2:
            pacer.throttled(sent_at=now, now=now)
    pacer.sent(2.5)  # nothing else asked: the send itself closes the step
    assert pacer.rate == pytest.approx(MARGIN * 2 / 0.5)


def test_a_slow_gateway_measured_below_one_request_per_second_is_kept() -> None:
    # Two sends in a 2 s step, one refused: 0.9 * 1 / 2 = 0.45/s, above the 0.1/s floor.
    pacer = paced_pacer(1.5)
    pacer.sent(2.5)
    pacer.sent(3.0)
    pacer.throttled(sent_at=3.0, now=3.0)
    assert pacer.current(4.0) == pytest.approx(MARGIN * 1 / 2.0)


def test_a_clean_step_at_most_doubles_a_slow_rate() -> None:
    # PROBE (2/s) is more than the rate (1.5/s): the raise is capped at doubling.
    pacer = paced_pacer(1.5)
    assert pacer.delay(2.125) > 0  # a call waited for its turn
    for now in (2.5, 3.0, 3.5):
        pacer.sent(now)
    assert pacer.current(4.0) == 3.0


def test_a_step_closes_at_exactly_step_seconds_and_probes_at_exactly_the_used_share() -> None:
    # 32/s over 0.25 s: USED (0.75) of the pace is exactly 6 sends; a call waited in the step.
    pacer = paced_pacer(32.0)
    assert pacer.delay(2.0 + 1 / 64) > 0
    for k in range(1, 7):
        pacer.sent(2.0 + k / 32)
    assert pacer.current(2.25) == 32.0 + PROBE


def test_a_wait_at_the_instant_the_step_began_does_not_make_the_step_probe() -> None:
    pacer = paced_pacer(32.0)
    assert pacer.delay(2.0) > 0  # waited at the step's first instant (the previous step's wait)
    for k in range(1, 7):
        pacer.sent(2.0 + k / 32)
    assert pacer.current(2.25) == 32.0


def test_pacing_heals_at_exactly_heal_seconds_after_the_last_429() -> None:
    pacer = paced_pacer(10.0)
    assert pacer.current(2.0 + HEAL - 0.25) == 10.0
    assert pacer.current(2.0 + HEAL) is None


def test_probed_rates_are_not_remembered_for_the_next_episode() -> None:
    # Only a measured rate (a throttled step or the first wave) seeds the next episode: a rate
    # reached by probing is a guess the gateway never confirmed.
    pacer = paced_pacer(10.0)
    now = 2.0
    for _ in range(3):  # three clean steps in which calls waited: 10 -> 12 -> 16 -> 24
        for k in range(1, 9):
            pacer.delay(now + k / 32)
            pacer.sent(now + k / 32)
        now += 0.25
    assert pacer.current(now) == 24.0
    assert pacer.current(now + HEAL) is None
    pacer.sent(20.0)
    pacer.throttled(sent_at=20.0, now=20.0)  # a lone 429 much later
    assert pacer.rate == 1.0


def test_the_first_estimate_counts_only_the_sends_of_the_last_second() -> None:
    pacer = Pacer()
    for _ in range(10):
        pacer.sent(0.0)
    for _ in range(10):
        pacer.sent(0.9)
    pacer.throttled(sent_at=0.9, now=1.5)  # the sends at 0.0 are more than a second old
    assert pacer.rate == 9.0


def test_the_look_back_second_includes_its_first_instant() -> None:
    pacer = Pacer()
    for _ in range(10):
        pacer.sent(0.0)
    pacer.throttled(sent_at=0.0, now=0.0)
    assert pacer.rate == 9.0
    pacer.throttled(sent_at=0.0, now=1.0)  # same wave: sends and 429s at 0.0 are still counted
    assert pacer.rate == 8.0


def test_an_inert_pool_remembers_only_the_last_second_of_sends() -> None:
    pacer = Pacer()
    for i in range(1000):
        pacer.sent(i / 100)
    assert pacer.rate is None
    assert len(pacer._sends) <= 102
