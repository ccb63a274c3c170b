"""The shipped pool through every gateway shape of issue 20's table and more, on simulated time.

`tests.support.pool_simulation` drives the real `Admission` (queue, slow start, pacer, free
re-queue rule) and `RetryPlan` of each simulated client process against one token-bucket gateway,
four seeds per profile (answer times are drawn at random), with an event loop's batching (no
response is read while granted requests are being written). The bounds are the issue's targets
(wall <= 1.15 x ideal, <= 1.15 requests per answer, no failed call); where a profile misses one,
the bound says by how much and docs/benchmarks.md reports it. The loopback benchmark
(`benchmarks/rates.py`) measures the same shapes with real time and real clients.
"""

from __future__ import annotations

import pytest

from tests.support.pool_simulation import Overload, Profile, run

SEEDS = range(4)
TARGET = 1.15

PROFILES = {
    # name: (profile, worst wall / ideal, worst requests per answer)
    "50/s, 1 s burst, 50-250 ms, Retry-After: 1": (Profile(50), TARGET, TARGET),
    "50/s, 1 s burst, 0.8-2.5 s answers": (Profile(50, latency=(0.8, 2.5)), TARGET, TARGET),
    "50/s, 0.2 s burst, 50-400 ms": (Profile(50, burst=0.2, latency=(0.05, 0.4)), TARGET, TARGET),
    "50/s, 4 s burst, 100-500 ms": (Profile(50, burst=4, latency=(0.1, 0.5)), 1.2, 1.2),
    "50/s, fractional Retry-After": (Profile(50, retry_after="fraction"), TARGET, TARGET),
    "50/s, no Retry-After": (Profile(50, retry_after="absent"), TARGET, TARGET),
    "40/s, Retry-After as an HTTP date": (Profile(40, retry_after="date"), TARGET, TARGET),
    "20/s, Retry-After: 0": (Profile(20, retry_after="zero", calls=200), TARGET, TARGET),
    "20/s, negative Retry-After": (Profile(20, retry_after="negative", calls=200), TARGET, TARGET),
    "8/s, 0.2-1 s answers": (Profile(8, latency=(0.2, 1.0), calls=80), TARGET, 1.25),
    "5/s, 0.2-1 s answers": (Profile(5, latency=(0.2, 1.0), calls=60), TARGET, 1.45),
    "100/s, 4-6 s answers, 600 concurrent": (
        Profile(100, latency=(4, 6), calls=2000, concurrency=600),
        TARGET,
        TARGET,
    ),
    "30/s, 3 s burst, 1-3 s answers, fractional Retry-After": (
        Profile(30, burst=3, latency=(1, 3), retry_after="fraction"),
        TARGET,
        TARGET,
    ),
    "120/s, 0.1 s burst, 20-80 ms, no Retry-After": (
        Profile(120, burst=0.1, latency=(0.02, 0.08), retry_after="absent"),
        TARGET,
        TARGET,
    ),
    "50/s, 429s taking 50-200 ms": (Profile(50, refusal=(0.05, 0.2)), 1.2, 1.2),
    "20/s, 30-90 s answers, 2,000 concurrent": (
        Profile(20, latency=(30, 90), calls=2000, concurrency=2000),
        1.25,
        TARGET,
    ),
    "50/s, 0.1-0.5 s, 2 processes": (
        Profile(50, latency=(0.1, 0.5), processes=2, concurrency=128),
        TARGET,
        TARGET,
    ),
    "50/s, 0.8-2.5 s, 4 processes": (
        Profile(50, latency=(0.8, 2.5), processes=4, concurrency=64),
        1.35,
        TARGET,
    ),
    "50/s, 0.1-0.5 s, 8 processes": (
        Profile(50, latency=(0.1, 0.5), processes=8, concurrency=32, calls=800),
        1.2,
        1.3,
    ),
}


NEW_KINDS = {
    # Issue 29's other gateway kinds: the controller is not told which one it faces. Bounds are
    # the targets where met, else the worst of the 4 seeds measured (docs/benchmarks.md) plus
    # about 0.05: these kinds lose no answer but are paced below their limit (a concurrency
    # limit or a window is not the steady rate the pacer measures), and 30 % random 503 / 529
    # refusals cost requests whatever the client does (requests per answer ~1.5).
    "concurrency limit 20, 0.1-0.5 s answers": (
        Profile(10_000, latency=(0.1, 0.5), concurrency_limit=20, retry_after="absent"),
        1.5,
        TARGET,
    ),
    "concurrency limit 20, 0.8-2.5 s answers, Retry-After: 1": (
        Profile(10_000, latency=(0.8, 2.5), concurrency_limit=20, calls=200),
        1.4,
        1.5,
    ),
    "1.2M tokens per minute, 5-15k-token prompts": (
        Profile(10_000, tokens_per_minute=1_200_000, calls=200, retry_after="fraction"),
        TARGET,
        1.6,
    ),
    "50/s sliding-window log": (Profile(50, sliding_window=True), 1.6, 1.3),
    "50/s sliding-window log, 0.8-2.5 s answers": (
        Profile(50, latency=(0.8, 2.5), sliding_window=True),
        1.55,
        1.3,
    ),
    "50/s falling to 10/s at 2 s": (
        Profile(50, calls=300, limit_after=(2.0, 10.0)),
        TARGET,
        1.25,
    ),
    "10/s rising to 50/s at 3 s": (
        Profile(10, calls=400, limit_after=(3.0, 50.0)),
        TARGET,
        1.25,
    ),
    "50/s, 30 % 503 with Retry-After: 1 for 10 s": (
        Profile(50, calls=600, overload=Overload()),
        TARGET,
        1.6,
    ),
    "50/s, 30 % 529 overloaded_error with Retry-After: 1 for 10 s": (
        Profile(50, calls=600, overload=Overload(status=529)),
        TARGET,
        1.6,
    ),
    "50/s, 30 % 503 without Retry-After for 10 s": (
        Profile(50, calls=600, overload=Overload(retry_after=False)),
        TARGET,
        1.65,
    ),
    "50/s, 30 % 529 without Retry-After for 10 s": (
        Profile(50, calls=600, overload=Overload(status=529, retry_after=False)),
        TARGET,
        1.65,
    ),
    # A refusal that takes 2 s (docs/errors.md used to assume refusals are fast): the slow start's
    # horizon is twice the slowest refusal, so the first 429s come late; no answer is lost.
    "50/s, 429s taking 2 s": (Profile(50, refusal=(2.0, 2.0)), 2.35, 2.15),
}


@pytest.mark.parametrize("name", [*PROFILES, *NEW_KINDS])
def test_every_gateway_shape_converges_without_a_failed_call(name: str) -> None:
    profile, wall_bound, requests_bound = (PROFILES | NEW_KINDS)[name]
    results = [run(profile, seed) for seed in SEEDS]
    assert [r.errors for r in results] == [[]] * len(results)
    assert max(r.wall_over_ideal for r in results) <= wall_bound
    assert max(r.requests_per_answer for r in results) <= requests_bound


def test_sixteen_processes_sharing_a_key_lose_no_answer() -> None:
    # Beyond the 2-8: a process that got nothing of the first burst, paced one request at
    # a time with calls waiting behind it, lost an answer before a paced call counted as crowded.
    profile = Profile(50, latency=(0.1, 0.5), processes=16, concurrency=16, calls=800)
    for seed in range(6):
        result = run(profile, seed)
        assert result.errors == []
        assert result.wall_over_ideal <= 1.2  # requests per answer reach 1.41: not bounded here


def test_a_fixed_window_gateway_loses_no_answer_but_is_paced_below_its_rate() -> None:
    # Not a token bucket: `rate` requests per whole second, then 429s until the next second. The
    # pacer's quarter-second steps see a full step and three empty ones, so it runs below the
    # rate: no call fails, but wall and requests per answer miss the targets (measured 1.26-1.46
    # and 1.34-1.50 over these shapes; docs/benchmarks.md).
    shapes = [
        Profile(50, fixed_window=True),
        Profile(50, latency=(0.8, 2.5), fixed_window=True),
        Profile(20, retry_after="zero", calls=200, fixed_window=True),
        Profile(50, latency=(0.8, 2.5), processes=4, concurrency=64, fixed_window=True),
    ]
    for profile in shapes:
        results = [run(profile, seed) for seed in SEEDS]
        assert [r.errors for r in results] == [[]] * len(results)
        assert max(r.wall_over_ideal for r in results) <= 1.5
        assert max(r.requests_per_answer for r in results) <= 1.55


def test_a_limit_that_rises_is_used_within_a_few_seconds() -> None:
    # 20/s for 3 s, then 1,000/s: the pacer probes up (or goes inert) instead of staying at 20.
    profile = Profile(20, calls=600, limit_after=(3.0, 1000.0))
    for seed in SEEDS:
        result = run(profile, seed)
        assert result.errors == []
        # At 20/s the 600 calls would take ~29 s; once the limit rises, the rest go within ~3 s.
        assert result.end < 7.0


def test_a_limit_that_falls_costs_no_answer() -> None:
    # 100/s for 2 s, then 10/s: the pacer follows it down; every call is answered.
    profile = Profile(100, calls=400, limit_after=(2.0, 10.0))
    for seed in SEEDS:
        result = run(profile, seed)
        assert result.errors == []
        assert result.requests_per_answer <= 1.3


def test_a_huge_retry_after_fails_the_call_at_once_saying_so() -> None:
    # A 429 asking for an hour, against the shipped 900 s pool timeout: not waited, not hung.
    result = run(Profile(5, calls=40, concurrency=40, retry_after="huge"), seed=0)
    assert result.errors
    assert all("longer than this call's pool timeout" in error for error in result.errors)
    assert result.end < 5.0


def test_after_the_run_each_pacer_heals_to_inert() -> None:
    result = run(Profile(50), seed=0)
    pacer = result.pacers[0]
    assert pacer.current(result.end + 3.0) is None
