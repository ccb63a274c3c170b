"""Which of issue 29's misses a perfect rate estimate would remove (`tests.support.told_pacer`).

The shipped pool runs with its pacer told each process's share of the limit from its first 429
on; everything else is shipped. A profile that meets the targets so has a miss that is the
pacer's estimate; one that misses even so has a miss elsewhere: in pacing itself (a steady rate
on a window), in the in-flight cap, or before the first 429 is back. Simulated time only; the
figures are the worst (or best) of the catalogue's seeds, and docs/benchmarks.md's section
"What a perfect estimate would buy" renders the whole table (`python -m tests.support.told_pacer`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_kimi._http.limits.knobs import KNOBS
from tests.support.pool_simulation import Result, run
from tests.support.rate_catalog import ALL, SEEDS
from tests.support.told_pacer import ToldPacer, share, table, told_run

TARGET = 1.15


def runs(name: str, fraction: float = 1.0, *, cap: bool = True) -> list[Result]:
    profile = ALL[name]
    rate = share(profile)
    assert rate is not None
    return [told_run(profile, seed, fraction * rate, cap=cap) for seed in SEEDS]


def walls(results: list[Result]) -> list[float]:
    return [r.wall_over_ideal for r in results]


def test_a_told_pacer_starts_at_the_first_crowded_429_paces_at_its_rate_and_heals() -> None:
    pacer = ToldPacer(told=40.0)
    assert pacer.current(1.0) is None  # inert until a 429
    pacer.sent(1.0)
    pacer.throttled(sent_at=1.0, now=1.0)
    assert pacer.current(1.0) == 40.0
    for i in range(1, 17):  # a step of 429s the shipped pacer would cut the rate for
        now = 1.0 + i / 64
        pacer.sent(now)
        pacer.throttled(sent_at=now, now=now)
    assert pacer.current(1.5) == 40.0
    assert pacer.current(1.25 + KNOBS.heal) is None  # no 429, nobody waiting: it heals


def test_a_told_pacer_is_the_shipped_one_where_no_429_comes() -> None:
    # 500/s with 1-2 s answers never refuses: its miss (1.28x) is the slow start's, not the pacer's.
    profile = ALL["500/s, 1-2 s answers, 800 concurrent"]
    shipped = [run(profile, seed).end for seed in SEEDS]
    assert [told_run(profile, seed, 500.0).end for seed in SEEDS] == shipped


@pytest.mark.parametrize(
    "name", ["8/s, 0.2-1 s answers", "5/s, 0.2-1 s answers", "50/s, 0.1-0.5 s, 8 processes"]
)
def test_told_its_share_a_slow_pool_meets_both_targets(name: str) -> None:
    # Their misses (1.24-1.42 requests per answer) are the estimate's: probes past the rate.
    results = runs(name)
    assert max(walls(results)) <= TARGET
    assert max(r.requests_per_answer for r in results) <= TARGET


@pytest.mark.parametrize("name", ["50/s sliding-window log", "50/s fixed window per second"])
def test_a_window_comes_near_the_wall_target_only_paced_at_its_limit_exactly(name: str) -> None:
    # The window spends its first second's count at once and gives nothing back until the
    # second has passed, so the rest must go at the limit itself, and even then the target is
    # only just reached (1.14-1.16x): the pacer's margin (KNOBS.margin, 0.9) alone costs a tenth.
    assert max(walls(runs(name))) <= TARGET + 0.01
    assert min(walls(runs(name, KNOBS.margin))) > 1.2


@pytest.mark.parametrize(
    "name", ["50/s sliding-window log, 0.8-2.5 s answers", "50/s fixed window, 0.8-2.5 s answers"]
)
def test_a_steady_pace_misses_a_window_with_slow_answers_even_told_its_limit(name: str) -> None:
    # The last calls admitted at the steady pace still take up to 2.5 s, where the best client
    # sends each second's count at its start (rate_bounds: 1.094x): no pace meets 1.15x here.
    # And the in-flight cap learnt on the window's refusals (every send refused while the
    # count is spent, at the same count, answers out for 0.8 s or more) costs more on top.
    without_cap = walls(runs(name, cap=False))
    assert min(without_cap) > TARGET
    assert max(walls(runs(name))) > max(without_cap) + 0.1


def test_429s_taking_2_s_cost_requests_before_any_pacer_can_act() -> None:
    # The requests written before the first 429 is back: told the rate from then on, still
    # more than 1.4 requests per answer (1.47; the slow start's quick-answers bound keeps the
    # first wave to about one refusal per answer).
    assert min(r.requests_per_answer for r in runs("50/s, 429s taking 2 s")) > 1.4


def test_a_share_is_only_told_for_a_steady_rate() -> None:
    assert share(ALL["50/s, 0.1-0.5 s, 16 processes"]) == 50 / 16
    assert share(ALL["concurrency limit 20, 0.1-0.5 s answers"]) is None
    assert share(ALL["1.2M tokens per minute, 5-15k-token prompts"]) is None
    assert share(ALL["50/s falling to 10/s at 2 s"]) is None
    assert share(ALL["50/s, 30 % 503 with Retry-After: 1 for 10 s"]) is None


def test_the_table_in_the_docs_is_the_one_the_simulation_gives() -> None:
    # docs/benchmarks.md shows `python -m tests.support.told_pacer`'s output as it is today:
    # a change to the controller that moves a figure must render the table again.
    page = (Path(__file__).parents[4] / "docs" / "benchmarks.md").read_text()
    assert table() in page
