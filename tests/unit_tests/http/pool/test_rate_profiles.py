"""The pacer through every gateway shape of issue 20's table, on simulated time (no sleeping).

`tests.support.pool_simulation` runs the real `Pacer` of each simulated client process against one
token-bucket gateway, four seeds per profile (answer times are drawn at random). The bounds are
what the controller reaches here, worst seed, against the issue's targets (wall <= 1.15 x ideal,
<= 1.15 requests per answer, no failed call); where a profile misses a target the bound says
by how much, and docs/benchmarks.md reports it. The loopback benchmark (`benchmarks/rates.py`)
measures the same shapes with real time and real clients.
"""

from __future__ import annotations

import pytest

from tests.support.pool_simulation import Profile, run

SEEDS = range(4)

PROFILES = {
    # name: (profile, worst wall / ideal, worst requests per answer)
    "50/s, 1 s burst, 50-250 ms, Retry-After: 1": (Profile(50), 1.15, 1.15),
    "50/s, 1 s burst, 0.8-2.5 s answers": (Profile(50, latency=(0.8, 2.5)), 1.25, 1.15),
    "50/s, 0.2 s burst, 50-400 ms": (Profile(50, burst=0.2, latency=(0.05, 0.4)), 1.25, 1.15),
    "50/s, 4 s burst, 100-500 ms": (Profile(50, burst=4, latency=(0.1, 0.5)), 1.15, 1.15),
    "50/s, fractional Retry-After": (Profile(50, retry_after="fraction"), 1.05, 1.1),
    "50/s, no Retry-After": (Profile(50, retry_after="absent"), 1.05, 1.1),
    "40/s, Retry-After as an HTTP date": (Profile(40, retry_after="date"), 1.05, 1.12),
    "20/s, Retry-After: 0": (Profile(20, retry_after="zero", calls=200), 1.05, 1.15),
    "20/s, negative Retry-After": (Profile(20, retry_after="negative", calls=200), 1.05, 1.15),
    "8/s, 0.2-1 s answers": (Profile(8, latency=(0.2, 1.0), calls=80), 1.15, 1.2),
    "100/s, 4-6 s answers, 600 concurrent": (
        Profile(100, latency=(4, 6), calls=2000, concurrency=600),
        1.1,
        1.1,
    ),
    "50/s, 0.8-2.5 s, 4 processes": (
        Profile(50, latency=(0.8, 2.5), processes=4, concurrency=64),
        1.7,  # misses the 1.15 target: the processes' shares converge slowly (see the docs)
        1.15,
    ),
    "50/s, 0.1-0.5 s, 8 processes": (
        Profile(50, latency=(0.1, 0.5), processes=8, concurrency=32, calls=800),
        1.45,  # misses the target too
        1.2,
    ),
}


@pytest.mark.parametrize("name", list(PROFILES))
def test_every_gateway_shape_converges_without_a_failed_call(name: str) -> None:
    profile, wall_bound, requests_bound = PROFILES[name]
    results = [run(profile, seed) for seed in SEEDS]
    assert [r.failed for r in results] == [0] * len(results)
    assert max(r.wall_over_ideal for r in results) <= wall_bound
    assert max(r.requests_per_answer for r in results) <= requests_bound


def test_a_limit_that_rises_is_used_within_a_few_seconds() -> None:
    # 20/s for 3 s, then 1,000/s: the pacer probes up (or goes inert) instead of staying at 20.
    profile = Profile(20, calls=600, limit_after=(3.0, 1000.0))
    for seed in SEEDS:
        result = run(profile, seed)
        assert result.failed == 0
        # At 20/s the 600 calls would take ~29 s; once the limit rises, the rest go within ~3 s.
        assert result.end < 7.0


def test_after_the_run_each_pacer_heals_to_inert() -> None:
    result = run(Profile(50), seed=0)
    pacer = result.pacers[0]
    assert pacer.current(result.end + 3.0) is None
