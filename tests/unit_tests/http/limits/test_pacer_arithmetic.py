"""The pacer's arithmetic at its edges: bursts, floors, caps, step and look-back boundaries.

Each test pins one rule of `langchain_kimi._http.limits.pacer` that a mutation run (issue 19 item 5)
showed unpinned. Times are plain floats chosen exact in binary, so the boundaries are exact.
"""

from __future__ import annotations

import dataclasses

import pytest

from langchain_kimi._http.limits import pacer as pacer_module
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.pacer import Pacer
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
    pacer = paced_pacer(5.0)
    for i in range(1, 5):
        now = 2.0 + i / 64
        pacer.sent(now)
        if i % 2:
            pacer.throttled(sent_at=now, now=now)
    pacer.sent(2.5)  # nothing else asked: the send itself closes the step
    assert pacer.rate == pytest.approx(KNOBS.margin * 2 / 0.5)


def test_a_slow_gateway_measured_below_one_request_per_second_is_kept() -> None:
    # Two sends in a 2 s step, one refused: 0.9 * 1 / 2 = 0.45/s, above the 0.1/s floor (and
    # above half the rate before).
    pacer = paced_pacer(0.8)
    pacer.sent(2.0625)
    pacer.sent(2.125)
    pacer.throttled(sent_at=2.125, now=2.125)
    assert pacer.current(3.875) == 0.8  # a step with a 429 but too few sends measures on
    assert pacer.current(4.0) == pytest.approx(KNOBS.margin * 1 / 2.0)


def test_a_clean_step_raises_a_slow_rate_by_at_most_max_probe_of_it() -> None:
    # KNOBS.probe (1/s) is more than twice the rate (0.25/s): the raise is capped at max_probe
    # of the rate. At 0.25/s a 0.25 s step holds no send at all, and still probes: the call
    # waited through it.
    pacer = paced_pacer(0.25)
    assert pacer.delay(2.125) > 0  # a call waited for its turn
    assert pacer.current(2.25) == pytest.approx(0.25 * (1 + KNOBS.max_probe))


def test_a_throttled_step_keeps_at_least_half_the_rate() -> None:
    # A pool sharing the key measures its share; 1 of 4 sends admitted over 0.25 s would be
    # 0.9 * 4 = 3.6/s from 40/s: one step never cuts more than half.
    pacer = paced_pacer(40.0)
    for k in range(1, 5):
        pacer.sent(2.0 + k / 32)
        if k > 1:
            pacer.throttled(sent_at=2.0 + k / 32, now=2.0 + k / 32)
    assert pacer.current(2.25) == pytest.approx(20.0)


def _first_step_after_a_saved_burst(admitted: int, refused: int) -> Pacer:
    """A pacer whose first 429 came after 200 admitted sends in the last second (a saved burst,
    read as 200/s), and whose first step, within 0.25 s, had `admitted` sends and `refused`."""
    pacer = Pacer()
    for k in range(200):
        pacer.sent(k / 256)
    pacer.sent(1.0)
    pacer.throttled(sent_at=1.0, now=1.0)
    assert pacer.rate == pytest.approx(200 / KNOBS.lookback)
    for k in range(1, admitted + refused + 1):
        pacer.sent(1.0 + k / 256)
        if k > admitted:
            pacer.throttled(sent_at=1.0 + k / 256, now=1.0 + k / 256)
    return pacer


@pytest.mark.parametrize("admitted", [KNOBS.step_sends, 12])
def test_a_first_step_the_gateway_mostly_refused_measures_it_below_half_the_first_rate(
    admitted: int,
) -> None:
    # 12 admitted and 36 refused over 0.25 s: 0.9 * 12 / 0.25 = 43.2/s, not half of 200/s
    # (halving step by step sent the saved burst's excess into an empty bucket); so too with
    # exactly step_sends admitted.
    pacer = _first_step_after_a_saved_burst(admitted, refused=3 * admitted)
    assert pacer.current(1.25) == pytest.approx(KNOBS.margin * admitted / 0.25)


@pytest.mark.parametrize(
    ("admitted", "refused"),
    [(24, 24), (24, 23), (KNOBS.step_sends - 1, 12)],
    ids=["half refused", "most admitted", "too few admitted"],
)
def test_a_first_step_not_mostly_refused_or_with_few_admitted_keeps_half_the_first_rate(
    admitted: int, refused: int
) -> None:
    # Not most of the sends refused, or fewer than step_sends admitted: the step may be a
    # share's, or a few sends that say little; 0.9 x what it admitted is below half of 200/s,
    # and half it is.
    pacer = _first_step_after_a_saved_burst(admitted, refused)
    assert KNOBS.margin * admitted / 0.25 < KNOBS.min_cut * 200 / KNOBS.lookback
    assert pacer.current(1.25) == pytest.approx(KNOBS.min_cut * 200 / KNOBS.lookback)


def test_until_a_step_has_measured_the_gateway_clean_steps_double() -> None:
    pacer = Pacer()
    pacer.sent(0.0)
    pacer.throttled(sent_at=0.0, now=0.0)  # a lone 429: 1/s, nothing measured yet
    for k in range(1, 5):
        pacer.sent(k / 64)
    assert pacer.rate == 1.0
    assert pacer.delay(0.25) > 0  # a call waits for its turn
    assert pacer.current(0.5) == 2.0  # doubled, where a measured rate would add KNOBS.probe
    assert pacer.delay(0.5) > 0
    assert pacer.current(0.75) == 4.0


def test_a_step_closes_at_exactly_step_seconds_and_probes_at_exactly_the_used_share() -> None:
    # 32/s over 0.25 s: USED (0.75) of the pace is exactly 6 sends, less one (a slow pace may
    # fit none in a step): 5 sends probe, 4 do not. A call waited in the step.
    for sends, rate in ((5, 32.0 + KNOBS.probe), (4, 32.0)):
        pacer = paced_pacer(32.0)
        assert pacer.delay(2.0 + 1 / 64) > 0
        for k in range(1, sends + 1):
            pacer.sent(2.0 + k / 32)
        assert pacer.current(2.25) == rate


def test_a_wait_that_lasts_into_a_step_counts_for_it_and_only_for_it() -> None:
    pacer = paced_pacer(4.0)
    assert pacer.delay(2.0) == pytest.approx(0.25)  # a call waits until 2.25, the step's end
    assert pacer.current(2.25) == 4.0 + KNOBS.probe  # it was held back in [2.0, 2.25): probe
    assert pacer.current(2.5) == 4.0 + KNOBS.probe  # not in [2.25, 2.5): its wait had ended


def test_pacing_heals_at_exactly_heal_seconds_after_the_last_429() -> None:
    pacer = paced_pacer(10.0)
    assert pacer.current(2.0 + KNOBS.heal - 0.25) == 10.0
    assert pacer.current(2.0 + KNOBS.heal) is None


def test_probed_rates_are_not_remembered_for_the_next_episode() -> None:
    # No rate seeds the next episode (issue 29: a memory of the last measured rate changed no
    # simulated profile and was removed): a lone 429 later starts at `first_rate`.
    pacer = paced_pacer(10.0)
    now = 2.0
    for _ in range(3):  # three clean steps in which calls waited: 10 -> 11 -> 13 -> 17
        for k in range(1, 9):
            pacer.delay(now + k / 32)
            pacer.sent(now + k / 32)
        now += 0.25
    assert pacer.current(now) == 17.0
    # Inert KNOBS.heal after the last wait ends (these sends ran ahead of the pace: it ends at ~3.86).
    assert pacer.current(pacer._waited_until + KNOBS.heal) is None
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


def test_an_inert_pool_remembers_only_the_last_steps_of_sends() -> None:
    # What the first estimate (the last second) and a step measured one lag back need.
    pacer = Pacer()
    for i in range(1000):
        pacer.sent(i / 100)
    assert pacer.rate is None
    assert len(pacer._sends) <= 100 * max(KNOBS.lookback, KNOBS.longest_step) + 2


def test_an_inert_pacer_never_holds_a_send_back() -> None:
    pacer = Pacer()
    assert pacer.delay(0.0) == 0.0
    pacer.sent(0.0)
    assert pacer.delay(0.0) == 0.0


def test_a_lone_429_starts_no_pacing() -> None:
    # A call alone on the pool refused says nothing of the rate (issue 29): it waits what the
    # gateway asked, or its backoff, as the peers' SDKs do, and no paced turn comes on top.
    pacer = Pacer()
    pacer.sent(0.0)
    pacer.throttled(sent_at=0.0, now=0.0, alone=True)
    assert pacer.rate is None
    pacer.sent(0.0)  # its retry, at once
    assert pacer.delay(0.0) == 0.0


def test_a_lone_429_still_counts_as_refused_when_a_crowded_wave_starts_pacing() -> None:
    # Five sends in the last second, the lone one at 0.0 refused and the one at 0.5: 3/s
    # admitted (4/s if the lone refusal were taken for an admitted send).
    pacer = Pacer()
    pacer.sent(0.0)
    pacer.throttled(sent_at=0.0, now=0.0, alone=True)
    for k in range(1, 5):
        pacer.sent(k / 8)
    pacer.throttled(sent_at=0.5, now=0.5)
    assert pacer.rate == 3.0


def test_while_pacing_a_lone_429_counts_as_any_other() -> None:
    # The pool is paced because the gateway limits it: a call alone meets that limit too.
    rates = []
    for alone in (False, True):
        pacer = paced_pacer(8.0)  # its step starts at 2.0
        for k in range(4):
            pacer.sent(2.0 + k / 32)
        pacer.throttled(sent_at=2.0, now=2.125, alone=alone)
        pacer.throttled(sent_at=2.0 + 1 / 32, now=2.125, alone=alone)
        rates.append(pacer.current(2.25))
    assert rates == [pytest.approx(KNOBS.margin * 2 / 0.25)] * 2


def test_a_429_arriving_after_pacing_healed_starts_a_new_episode() -> None:
    # A slow refusal: the request went out at 2.5 while paced at 10/s, its 429 comes back after
    # KNOBS.heal seconds without another 429 or a waiting call. Pacing had switched off meanwhile (nobody
    # asked): the 429 starts afresh from what the last second got through, not at the old pace.
    pacer = paced_pacer(10.0)
    pacer.sent(2.5)
    pacer.throttled(sent_at=2.5, now=2.0 + KNOBS.heal + 1.0)
    assert pacer.rate == 1.0


def test_a_429_of_a_request_sent_at_the_instant_a_step_began_counts_in_that_step() -> None:
    pacer = paced_pacer(8.0)  # its step starts at 2.0
    for k in range(4):
        pacer.sent(2.0 + k / 32)
    pacer.throttled(sent_at=2.0, now=2.125)
    pacer.throttled(sent_at=2.0 + 1 / 32, now=2.125)
    # Two of four admitted in 0.25 s: 0.9 * 2 / 0.25 (three would be 10.8/s).
    assert pacer.current(2.25) == pytest.approx(KNOBS.margin * 2 / 0.25)


def test_a_429_in_the_step_empties_a_full_client_bucket() -> None:
    # At 40/s the bucket refills to 2.5 sends after an idle spell; a 429 says the gateway's bucket
    # is empty: the next send waits a full turn, not the burst the client bucket still held.
    pacer = paced_pacer(40.0)
    pacer.sent(3.0)
    pacer.throttled(sent_at=3.0, now=3.0)
    assert pacer.delay(3.0) == pytest.approx(1 / 40.0)


def test_a_slow_step_whose_sends_were_all_refused_halves_the_rate_below_one_per_second() -> None:
    pacer = paced_pacer(1.0)
    for k in range(1, 5):
        pacer.sent(2.0 + k / 32)
        pacer.throttled(sent_at=2.0 + k / 32, now=2.0 + k / 32)
    assert pacer.current(2.25) == 0.5  # nothing admitted: half, not a guess of 1/s


def test_once_a_throttled_step_measured_the_gateway_clean_steps_add_probe_from_the_start() -> None:
    pacer = Pacer()
    for _ in range(10):
        pacer.sent(0.0)
    for _ in range(5):
        pacer.throttled(sent_at=0.0, now=0.0)  # the first wave: 5 of 10 admitted, 5/s
    assert pacer.rate == 5.0
    for k in range(1, 5):
        pacer.sent(k / 16)
    for k in (1, 2):
        pacer.throttled(sent_at=k / 16, now=k / 16)
    # A throttled step: 2 of 4 admitted over 0.25 s, times KNOBS.margin.
    assert pacer.current(0.25) == pytest.approx(KNOBS.margin * 2 / 0.25)
    assert pacer.delay(0.25 + 1 / 64) > 0  # a call waits for its turn
    pacer.sent(0.375)
    # A clean step in which the pace was used: + KNOBS.probe (the rate was measured: no doubling, and
    # the first raise after a throttled step is KNOBS.probe itself).
    assert pacer.current(0.5) == pytest.approx(KNOBS.margin * 2 / 0.25 + KNOBS.probe)


def _clean_raising_step(pacer: Pacer, start: float) -> None:
    """Twelve sends within the quarter second from `start` (the last at `start` + 11/64), a
    call waiting after them: a used pace (at 40/s, 0.75 x 40 x 0.25 = 7.5 sends), no 429."""
    for k in range(12):
        pacer.sent(start + k / 64)
    assert pacer.delay(start + 11 / 64) > 0


@pytest.mark.parametrize("sent_at", [2.0, 2.171875], ids=["its first send", "its last send"])
def test_a_late_429_to_a_send_of_the_step_that_raised_the_rate_takes_the_raise_back(
    sent_at: float,
) -> None:
    pacer = paced_pacer(40.0)
    _clean_raising_step(pacer, 2.0)
    assert pacer.current(2.25) == 40.0 + KNOBS.probe  # judged clean at its end
    pacer.throttled(sent_at=sent_at, now=2.28125)  # a 429 of that step, in the next one
    assert pacer.rate == 40.0
    pacer.throttled(sent_at=sent_at, now=2.296875)  # another: the raise is taken back once
    assert pacer.rate == 40.0
    # The next clean step raises by KNOBS.probe again, not probe_growth x as much: the clean
    # steps start over. The late 429 is not one of that step's.
    _clean_raising_step(pacer, 2.25)
    assert pacer.current(2.5) == 40.0 + KNOBS.probe


def test_a_late_429_to_a_send_from_before_the_last_raise_takes_nothing_back() -> None:
    pacer = paced_pacer(40.0)
    _clean_raising_step(pacer, 2.0)
    _clean_raising_step(pacer, 2.25)
    raised = 40.0 + KNOBS.probe + KNOBS.probe * KNOBS.probe_growth
    assert pacer.current(2.5) == raised
    pacer.throttled(sent_at=2.171875, now=2.53125)  # sent in the step before the last raise
    assert pacer.rate == raised


def test_a_late_429_after_a_throttled_step_measured_takes_nothing_back() -> None:
    pacer = paced_pacer(40.0)
    _clean_raising_step(pacer, 2.0)
    assert pacer.current(2.25) == 40.0 + KNOBS.probe
    for k in range(13):
        pacer.sent(2.25 + k / 64)
    pacer.throttled(sent_at=2.25, now=2.25)  # 12 of 13 admitted: 0.9 x 12 / 0.25 = 43.2/s
    measured = KNOBS.margin * 12 / 0.25
    assert pacer.current(2.5) == pytest.approx(measured)
    pacer.throttled(sent_at=2.171875, now=2.53125)  # the raising step's, after the measure
    assert pacer.rate == pytest.approx(measured)


def test_a_slow_refusal_is_forgotten_with_the_episode() -> None:
    # A 429 that took 3 s makes this episode's steps count one lag back; once pacing healed, the
    # next episode learns its refusals' time anew (nothing is remembered across episodes).
    pacer = Pacer()
    pacer.sent(0.0)
    pacer.throttled(sent_at=0.0, now=3.0)
    assert pacer._lag == 3.0 >= KNOBS.slow_refusal
    assert pacer.current(3.0 + KNOBS.heal) is None
    assert pacer._lag == 0.0


def _clean_step(pacer: Pacer, sends: int, every: float) -> None:
    """`sends` sends, `every` seconds apart, in the step of a `paced_pacer(20.0)` that starts at
    2.0, none refused: at 2.25 the step closes clean and the rate stays."""
    for k in range(1, sends + 1):
        pacer.sent(2.0 + k * every)
    assert pacer.current(2.25) == 20.0


def test_a_step_whose_sends_were_all_refused_measures_the_last_lookback() -> None:
    # A window per second admits its whole count, then refuses until the next second: the step
    # that meets the 429s admitted nothing, but the last `lookback` admitted 10 of 14 (20/s).
    pacer = paced_pacer(20.0)  # its episode and its step start at 2.0
    _clean_step(pacer, sends=10, every=1 / 64)  # all admitted, nobody waited (no probe)
    for k in range(1, 5):
        pacer.sent(2.25 + k / 32)
        pacer.throttled(sent_at=2.25 + k / 32, now=2.25 + k / 32)
    # 10 admitted over (2.0, 2.5]: 20/s, times the margin (the step alone: 0, so half the rate).
    assert KNOBS.lookback >= 0.5
    assert pacer.current(2.5) == pytest.approx(KNOBS.margin * 10 / 0.5)


def test_a_step_that_admitted_some_measures_itself_alone() -> None:
    # A token bucket, once empty, admits exactly its rate: the step measures it, and the sends
    # the bucket admitted earlier (10 in the clean step) do not count.
    pacer = paced_pacer(20.0)
    _clean_step(pacer, sends=10, every=1 / 64)
    for k in range(1, 5):
        pacer.sent(2.25 + k / 32)
        if k > 1:
            pacer.throttled(sent_at=2.25 + k / 32, now=2.25 + k / 32)
    assert pacer.current(2.5) == pytest.approx(max(KNOBS.margin * 1 / 0.25, 20.0 * KNOBS.min_cut))


def test_a_step_that_admitted_nothing_never_raises_the_rate() -> None:
    # 20 admitted in the clean step before (40/s over the last half second), then a step whose
    # sends were all refused: the look-back would say 0.9 x 40/s, but a 429 is no reason to
    # send faster.
    pacer = paced_pacer(4.0)
    for k in range(1, 21):
        pacer.sent(2.0 + k / 128)
    assert pacer.current(2.25) == 4.0
    for k in range(1, 5):
        pacer.sent(2.25 + k / 32)
        pacer.throttled(sent_at=2.25 + k / 32, now=2.25 + k / 32)
    assert pacer.current(2.5) == 4.0


def test_a_throttled_step_measures_no_send_from_before_the_episode() -> None:
    # The sends up to the first 429 spent the gateway's burst: they say nothing of its rate.
    pacer = Pacer()
    for k in range(40):
        pacer.sent(k / 128)  # a burst of 40 in 0.3 s, all admitted
    pacer.sent(0.5)
    pacer.throttled(sent_at=0.5, now=0.5)  # the first 429: the episode starts
    first = pacer.rate
    assert first == pytest.approx(40 / KNOBS.lookback)
    for k in range(1, 9):
        pacer.sent(0.5 + k / 36)
        pacer.throttled(sent_at=0.5 + k / 36, now=0.5 + k / 36)
    # The first step admitted none of its 8 sends, nor anything since the episode began: half
    # the first rate. Counting the burst (40 of 49 over the last second) would keep 0.9 x 40/s.
    assert pacer.current(0.75) == pytest.approx(KNOBS.min_cut * first)


def test_sends_at_the_instant_of_the_first_429_are_the_burst_not_the_rate() -> None:
    # 20 sends admitted at 0.5 with the first 429 (a send of that instant): the burst. The next
    # step's sends are all refused: nothing admitted since, so half the rate (counting the
    # burst would read 80/s and keep the rate).
    pacer = Pacer()
    for _ in range(21):
        pacer.sent(0.5)
    pacer.throttled(sent_at=0.5, now=0.5)
    assert pacer.rate == pytest.approx(20 / KNOBS.lookback)
    for k in range(1, 5):
        pacer.sent(0.5 + k / 32)
        pacer.throttled(sent_at=0.5 + k / 32, now=0.5 + k / 32)
    assert pacer.current(0.75) == pytest.approx(KNOBS.min_cut * 20 / KNOBS.lookback)


def test_slow_429s_make_an_all_refused_step_look_back_one_lag_too() -> None:
    # 429s take exactly `slow_refusal` (0.5 s): a step counts its sends one lag back, and so does
    # the look-back when the step admitted nothing. 20 sends admitted in (2.0, 2.25), then 4 whose
    # 429s come 0.5 s later; 2 more go out while the 429s arrive and are still unanswered.
    pacer = paced_pacer(20.0)  # its episode starts at 2.0
    _clean_step(pacer, sends=20, every=1 / 128)  # nobody waited: no probe
    for k in range(1, 5):
        pacer.sent(2.25 + k / 32)
    assert pacer.current(2.5) == 20.0  # their 429s are still out
    for k in range(1, 5):
        pacer.throttled(sent_at=2.25 + k / 32, now=2.75 + k / 32)  # a step starts at 2.78125
    assert pacer._lag == KNOBS.slow_refusal
    pacer.sent(2.90625)
    pacer.sent(2.9375)
    # The step [2.78125, 3.03125] counts [2.28125, 2.53125]: 4 sent, 4 refused. The look-back
    # [2.03125, 3.03125], one lag back: 24 sent, 4 refused, 20 admitted in 1 s. Counted without
    # the lag it would be 19 (the 2 unanswered sends in, 3 early ones out).
    assert pacer.current(3.03125) == pytest.approx(KNOBS.margin * 20 / 1.0)


def test_quick_429s_look_back_over_the_episode_as_it_happened() -> None:
    # 429s taking 1/16 s are no slow refusals: the look-back is not shifted back by them, and the
    # 5 sends of the burst at the episode's first instant stay out of it.
    pacer = paced_pacer(20.0)
    for _ in range(5):
        pacer.sent(2.0)
    _clean_step(pacer, sends=10, every=1 / 64)
    for k in range(1, 5):
        pacer.sent(2.25 + k / 64)
    for k in range(1, 5):
        pacer.throttled(sent_at=2.25 + k / 64, now=2.3125 + k / 64)
    # The step admitted none of its 4; the episode so far (2.0, 2.5]: 10 of 14 admitted, 20/s.
    assert pacer.current(2.5) == pytest.approx(KNOBS.margin * 10 / 0.5)


def test_the_look_back_from_the_episode_start_counts_a_refused_send_at_its_end() -> None:
    # A 429 that took 0.5 s makes the steps count one lag back. The step closing at 3.0 counts
    # [2.25, 2.5]: 4 sends, all refused (the one at 2.5 in 0.25 s), so it looks back over the
    # episode, (2.0, 3.0] one lag back: (1.5, 2.5], whose end, 2.5, is in it.
    pacer = paced_pacer(20.0)
    _clean_step(pacer, sends=20, every=1 / 128)
    for k in range(1, 4):
        pacer.sent(2.25 + k / 16)
    pacer.sent(2.5)
    pacer.throttled(sent_at=2.5, now=2.75)
    for k in range(1, 4):
        pacer.throttled(sent_at=2.25 + k / 16, now=2.75 + k / 16)
    assert pacer._lag == 0.5
    # 24 sent, 4 refused: 20 admitted in 1 s (without the send at 2.5: 19; without its 429: 21).
    assert pacer.current(3.0) == pytest.approx(KNOBS.margin * 20 / 1.0)


def test_the_look_back_from_the_first_429_leaves_out_that_429() -> None:
    # The first 429 refused a send of the burst at 0.5, the episode's first instant: neither that
    # send nor its 429 is in the look-back (0.5, 1.0] of the step that admitted nothing.
    pacer = Pacer()
    for _ in range(21):
        pacer.sent(0.5)
    pacer.throttled(sent_at=0.5, now=0.5)
    assert pacer.rate == 20.0
    for k in range(1, 11):
        pacer.sent(0.5 + k / 64)
    assert pacer.current(0.75) == 20.0  # the first step: clean
    for k in range(1, 5):
        pacer.sent(0.75 + k / 32)
        pacer.throttled(sent_at=0.75 + k / 32, now=0.75 + k / 32)
    # 10 of 14 admitted over 0.5 s (counting the first 429 in: 9, and 16.2/s).
    assert pacer.current(1.0) == pytest.approx(KNOBS.margin * 10 / 0.5)


def test_with_slow_429s_a_long_step_keeps_its_first_sends_one_lag_back() -> None:
    # 429s take 0.5 s: a step counts its sends one lag back, and a throttled step with fewer than
    # `step_sends` sends measures on, up to `longest_step`. Its earliest sends must still be
    # remembered when it closes.
    pacer = paced_pacer(2.0)
    for at in (2.0625, 2.125, 2.1875):
        pacer.sent(at)
    pacer.throttled(sent_at=2.0625, now=2.5625)  # a clean step closes; this one starts at 2.5625
    pacer.sent(3.5)
    pacer.throttled(sent_at=3.5, now=3.625)
    assert pacer.current(3.625) == 2.0  # [2.0625, 3.125]: 3 sends, too few: it measures on
    # [2.0625, 3.5]: 4 sends, 2 refused, over the 1.4375 s of the step.
    assert pacer.current(4.0) == pytest.approx(KNOBS.margin * 2 / 1.4375)


def test_a_throttled_step_never_paces_below_min_rate() -> None:
    # At 0.15/s half the rate is below the floor: pacing never stops sending.
    pacer = paced_pacer(0.15)
    for k in range(1, 5):
        pacer.sent(2.0 + k / 32)
        pacer.throttled(sent_at=2.0 + k / 32, now=2.0 + k / 32)
    assert pacer.current(2.25) == KNOBS.min_rate


def test_a_token_short_only_by_rounding_is_there_to_send() -> None:
    # At 1/s from 0.0, the bucket holds 1 - 1e-9 tokens at 0.999999999: a whole one but for
    # rounding, so the send may go now and nobody counts as having waited.
    pacer = paced_pacer(1.0, at=0.0)
    assert pacer.delay(1.0 - 1e-9) == 0.0


def test_stop_makes_a_paced_pool_inert_at_once() -> None:
    pacer = paced_pacer(10.0)
    pacer.stop()
    assert pacer.rate is None
    assert pacer.delay(2.0) == 0.0
    inert = Pacer()
    inert.stop()
    assert inert.rate is None


def test_the_first_rate_is_per_second_of_the_look_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # With a half-second look-back, 9 admitted in it is 18/s.
    monkeypatch.setattr(pacer_module, "KNOBS", dataclasses.replace(KNOBS, lookback=0.5))
    pacer = Pacer()
    for _ in range(10):
        pacer.sent(0.75)
    pacer.throttled(sent_at=0.75, now=1.0)
    assert pacer.rate == 18.0


def test_a_send_kept_exactly_long_enough_counts_when_the_lag_lengthens() -> None:
    # A send is kept `lag + longest_step` (2.5 s here); one exactly that old still counts when a
    # slower 429 lengthens the lag, and so the step's look-back, before the step closes.
    pacer = paced_pacer(1.0, at=1.0)
    for at in (1.5, 1.625, 1.75, 1.875):
        pacer.sent(at)
    for at in (1.5, 1.625, 1.75, 1.875):
        pacer.throttled(sent_at=at, now=2.0)  # the first in 0.5 s: a slow refusal
    pacer.sent(2.125)  # admitted
    pacer.sent(2.25)
    pacer.throttled(sent_at=2.25, now=2.5)  # [1.5, 2.0]: 4 sends, none admitted: half the rate
    assert pacer.rate == 0.5
    pacer.sent(2.625)
    pacer.sent(4.0)  # the send at 1.5 is now exactly 0.5 + 2 s old: kept, and its 429
    assert pacer.current(4.0) == 0.5  # [2.0, 3.5]: 3 sends, 1 refused: it measures on
    pacer.throttled(sent_at=2.625, now=4.125)  # 1.5 s: the step now counts [1.0, T - 1.5]
    # [1.0, 2.75]: 7 sends, 6 refused (without the send at 1.5: none admitted, and 0.25/s; without
    # its 429: 2 admitted) over the step's 1.75 s.
    assert pacer.current(4.25) == pytest.approx(KNOBS.margin * 1 / 1.75)


def test_a_429_that_counted_is_recent_for_exactly_the_seconds_asked_healed_or_not() -> None:
    pacer = Pacer()
    assert not pacer.throttled_within(0.0, 10.0)  # never refused
    pacer.throttled(0.0, 0.0, alone=True)  # a lone call's 429 while inert counts for nothing
    assert not pacer.throttled_within(0.0, 10.0)
    pacer.throttled(1.0, 1.0)
    assert pacer.throttled_within(1.0 + KNOBS.heal + 1.0, 10.0)
    assert pacer.current(1.0 + KNOBS.heal + 1.0) is None  # healed, still recent
    assert pacer.throttled_within(10.999, 10.0)
    assert not pacer.throttled_within(11.0, 10.0)


# -- a window that says when it reopens ------------------------------------------------------
# A per-minute window (Kong's rate-limiting plugin, many API gateways) admits its count, then
# answers every request 429 with `Retry-After` up to the minute's end. The pacer halved its rate
# step after step into it and kept sending (simulated 60 a minute: 13 refusals in each lockout,
# 1.57 requests per answer; `test_rate_profiles`).


def _refused_step(pacer: Pacer, retry_afters: list[float | None], start: float = 2.25) -> None:
    """A step of sends each refused at once, asking to wait `retry_afters[k]` (None: no wait)."""
    for k, retry_after in enumerate(retry_afters, start=1):
        at = start + k / 32
        pacer.sent(at)
        pacer.throttled(sent_at=at, now=at, retry_after=retry_after)


def test_a_step_admitting_nothing_whose_429s_all_wait_long_holds_the_pace_to_the_first() -> None:
    pacer = paced_pacer(20.0)
    _clean_step(pacer, sends=4, every=1 / 32)
    _refused_step(pacer, [30.0, 20.0, 25.0, 40.0])  # the second came at 2.3125: back at 22.3125
    assert pacer.current(2.5) == 20.0  # held, not cut: the rate is what it was
    assert pacer.delay(2.5) == pytest.approx(22.3125 - 2.5)
    assert pacer.delay(22.3125) == 0.0  # the window reopens: the pace goes on at its rate
    pacer.sent(22.3125)
    assert pacer.delay(22.3125) == pytest.approx(1 / 20.0)


def test_a_hold_raises_nothing_though_calls_wait_through_it() -> None:
    # Calls wait all along the hold, but it is the gateway's, not the pace's: no probe.
    pacer = paced_pacer(1.0)
    _refused_step(pacer, [10.0] * 4, start=2.0)
    for k in range(1, 41):  # a call asks every quarter second, up to 12.0
        assert pacer.delay(2.0 + k / 4) > 0.0
    assert pacer.current(12.0) == 1.0
    assert pacer.delay(12.03125) == 0.0  # the first 429's wait is over


@pytest.mark.parametrize(
    "retry_afters",
    [
        [30.0, 30.0, None, 30.0],  # one named no wait
        [30.0, 30.0, KNOBS.hold_wait, 30.0],  # one a wait a rounding of a short one may be
        [30.0, 30.0, KNOBS.retry_after_cap + 1, 30.0],  # one longer than a call waits
    ],
)
def test_a_step_with_any_429_not_asking_a_long_wait_is_cut_as_before(
    retry_afters: list[float | None],
) -> None:
    held, cut = paced_pacer(20.0), paced_pacer(20.0)
    for pacer, waits in ((held, retry_afters), (cut, [None] * 4)):
        _clean_step(pacer, sends=4, every=1 / 32)
        _refused_step(pacer, waits)
    assert held.current(2.5) == cut.current(2.5) < 20.0
    assert held.delay(2.5) == cut.delay(2.5) < 1.0


def test_a_step_that_admitted_a_send_is_measured_though_its_429s_wait_long() -> None:
    held, cut = paced_pacer(20.0), paced_pacer(20.0)
    for pacer, wait in ((held, 30.0), (cut, None)):
        _clean_step(pacer, sends=4, every=1 / 32)
        pacer.sent(2.25 + 1 / 64)  # admitted
        _refused_step(pacer, [wait] * 4)
    assert held.current(2.5) == cut.current(2.5) < 20.0


def test_a_wait_of_exactly_the_longest_a_call_waits_still_holds_the_pace() -> None:
    pacer = paced_pacer(20.0)
    _clean_step(pacer, sends=4, every=1 / 32)
    _refused_step(pacer, [KNOBS.retry_after_cap] * 4)
    assert pacer.current(2.5) == 20.0
    assert pacer.delay(2.5) > 1.0


def test_a_step_whose_429s_waits_are_over_when_it_closes_is_measured_as_before() -> None:
    # A slow pace (one send every 4 s): four sends refused at once owe it 20 s, so a call waits
    # and the step stays open until 5.0, when the first 429's wait (2.96875 s from 2.03125) is
    # over: nothing left to hold for.
    held, cut = paced_pacer(0.25), paced_pacer(0.25)
    for pacer, wait in ((held, 2.96875), (cut, None)):
        _refused_step(pacer, [wait, 30.0, 30.0, 30.0] if wait else [None] * 4, start=2.0)
        assert pacer.delay(2.125) > 3.0
    assert KNOBS.hold_wait < 2.96875
    assert held.current(5.0) == cut.current(5.0) < 0.25


def test_the_step_that_begins_as_a_hold_ends_may_raise_the_rate() -> None:
    pacer = paced_pacer(20.0)
    _clean_step(pacer, sends=4, every=1 / 32)
    _refused_step(pacer, [20.0] * 4)  # the first back at 22.28125
    assert pacer.delay(2.5) > 0.0  # a call waits through the hold
    assert pacer.current(22.28125) == 20.0  # the hold's step closes: no raise for it
    for k in range(5):  # the next step: a call waits for each turn, and the pace is used
        now = 22.28125 + k / 20
        pacer.delay(now)
        pacer.sent(now)
        pacer.delay(now)
    assert pacer.current(22.53125) == 20.0 + KNOBS.probe


def _held_once(pacer: Pacer) -> None:
    """A step of `paced_pacer(20.0)` the gateway admitted nothing of, every 429 asking 20 s or
    more (from 2.25): held until 22.3125. The step that began at 2.5 closes at 22.3125."""
    _clean_step(pacer, sends=4, every=1 / 32)
    _refused_step(pacer, [30.0, 20.0, 25.0, 40.0])
    assert pacer.current(2.5) == 20.0
    assert pacer.delay(2.5) > 19.0  # a call waits through the hold
    assert pacer.current(22.3125) == 20.0


def test_once_a_step_was_held_a_later_429_asking_a_long_wait_holds_the_pace_at_once() -> None:
    # The window reopened and admitted its count; the first 429 of the next lockout says when
    # it ends: the pace waits from that 429 on, not from the end of its step.
    pacer = paced_pacer(20.0)
    _held_once(pacer)
    for k in range(1, 4):  # admitted
        pacer.sent(22.3125 + k / 64)
    pacer.sent(22.375)
    pacer.throttled(sent_at=22.375, now=22.375, retry_after=59.0)
    assert pacer.delay(22.375) == pytest.approx(59.0)
    assert pacer.current(22.5625) == 20.0  # that step is not measured: it was held


def test_a_first_429_asking_a_long_wait_in_a_step_that_admitted_some_holds_nothing() -> None:
    # A gateway may ask the same long wait of every 429 (a fixed `Retry-After: 60`) while it
    # admits a steady rate: until a whole step was refused so, a 429 holds only its own call.
    pacer = paced_pacer(20.0)
    _clean_step(pacer, sends=4, every=1 / 32)
    pacer.sent(2.25 + 1 / 64)  # admitted
    pacer.sent(2.25 + 1 / 32)
    pacer.throttled(sent_at=2.25 + 1 / 32, now=2.25 + 1 / 32, retry_after=60.0)
    assert pacer.delay(2.25 + 1 / 32) < 1.0


def test_a_pacer_that_healed_no_longer_holds_at_once() -> None:
    pacer = paced_pacer(20.0)
    _held_once(pacer)
    now = 22.3125 + KNOBS.heal + 1.0
    assert pacer.current(now) is None  # healed: a new episode learns anew
    pacer.sent(now)
    pacer.throttled(sent_at=now, now=now)  # a first 429 starts the new episode
    for k in range(1, 3):
        pacer.sent(now + k / 64)
    pacer.throttled(sent_at=now + 2 / 64, now=now + 2 / 64, retry_after=60.0)
    assert pacer.delay(now + 2 / 64) < 10.0  # its first pace, not the 60 s asked
