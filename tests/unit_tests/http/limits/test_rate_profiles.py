"""The shipped rate policy through every gateway shape of the catalogue, on simulated time.

`benchmarks.rate_simulation` drives the real `Gate`, `RatePolicy` and `RetryPlan` of each
simulated client process against one gateway (a token bucket, a concurrency limit, tokens per
minute, a sliding or fixed window, a limit that moves, random 503 / 529 overloads, slow refusals:
the policy is never told which), with an event loop's batching. Answer times are drawn at random;
the targets are judged here on seeds 0-3, the worst seed of each profile (docs/benchmarks.md shows
16 seeds beside the previous controller, from `benchmarks/rate_comparison.py`).
"""

from __future__ import annotations

import dataclasses
import statistics

import pytest

from benchmarks.rate_catalog import ALL, SEEDS
from benchmarks.rate_simulation import Profile, run

LOST = 0
MEDIAN_WALL = 1.25  # x ideal
WORST_WALL = 2.0
MEDIAN_REQUESTS = 1.10  # requests per answer


def test_every_gateway_shape_loses_no_call_and_the_catalogue_meets_the_targets() -> None:
    walls, requests, lost = {}, {}, {}
    for name, profile in ALL.items():
        results = [run(profile, seed) for seed in SEEDS]
        walls[name] = max(r.wall_over_ideal for r in results)
        requests[name] = max(r.requests_per_answer for r in results)
        lost[name] = [error for r in results for error in r.errors]
    assert {name: errors for name, errors in lost.items() if errors} == {}
    assert {name: wall for name, wall in walls.items() if wall > WORST_WALL} == {}
    assert statistics.median(walls.values()) <= MEDIAN_WALL
    assert statistics.median(requests.values()) <= MEDIAN_REQUESTS


def test_a_key_told_to_come_back_in_an_hour_fails_each_call_at_once() -> None:
    # Retry-After: 3600 is beyond any call's budget: each call is raised at its first 429,
    # instead of waiting or being sent again.
    profile = Profile(20, burst=0.1, retry_after="huge", calls=100, concurrency=100)
    result = run(profile)
    assert result.failed > 0
    # Every call was sent once: the answered ones and the refused ones.
    assert result.requests_per_answer == pytest.approx(100 / (100 - result.failed))
    assert result.end < 30  # nobody waited the hour, nor the budget
    assert all("rate_limit_timeout=300s" in error for error in result.errors)


def test_a_limit_that_rises_is_used_within_seconds() -> None:
    # 20/s for 3 s, then 1,000/s: the rate doubles again once a span passes without a 429.
    profile = ALL["20/s rising to 1,000/s at 3 s"]
    for seed in SEEDS:
        # At 20/s the 600 calls would take ~29 s.
        assert run(profile, seed).end < 8.0


def test_a_pool_timeout_shorter_than_the_queue_fails_the_calls_it_cannot_serve() -> None:
    # 2,000 calls at 20/s: the last ones wait ~100 s for their turn, which the pool timeout
    # (httpx's wait for a connection) bounds.
    profile = ALL["20/s, 30-90 s answers, 2,000 concurrent"]
    assert run(profile).failed == 0
    short = run(dataclasses.replace(profile, pool_timeout=30.0))
    assert short.failed > 0
    assert all("no turn to send within the pool timeout" in error for error in short.errors)


def test_a_short_rate_limit_timeout_raises_the_refusals_it_cannot_wait_out() -> None:
    # A small key shared by 3 processes: a call may be refused for a while. Its refusals' waits
    # are what `rate_limit_timeout` bounds; each call spends no retry meanwhile.
    profile = ALL["6/s, 0.1 s burst, 20-100 ms, 3 processes"]
    assert run(profile).failed == 0
    short = run(dataclasses.replace(profile, rate_limit_timeout=2.0, max_retries=0))
    assert short.failed > 0
    assert all("rate_limit_timeout=2s" in error for error in short.errors)


def test_overloads_do_not_slow_the_key() -> None:
    # 30 % of 503s for 10 s: the refused calls wait, the rate is not cut.
    profile = ALL["50/s, 30 % 503 with Retry-After: 1 for 10 s"]
    result = run(profile)
    assert result.failed == 0
    assert result.wall_over_ideal < 1.3
    unpaced = run(dataclasses.replace(profile, adaptive=False))
    assert abs(unpaced.end - result.end) < 0.2 * result.end


def test_without_adaptive_pacing_no_call_is_lost_but_many_more_are_sent() -> None:
    profile = ALL["50/s, 1 s burst, 50-250 ms, Retry-After: 1"]
    paced, unpaced = run(profile), run(dataclasses.replace(profile, adaptive=False))
    assert paced.failed == unpaced.failed == 0
    assert unpaced.requests_per_answer > 1.5 * paced.requests_per_answer
