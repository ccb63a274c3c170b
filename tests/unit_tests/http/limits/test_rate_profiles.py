"""The shipped pool through every gateway shape of issues 20 and 29, on simulated time.

`tests.support.pool_simulation` drives the real `Admission` (queue, slow start, pacer, free
re-queue rule) and `RetryPlan` of each simulated client process against one gateway (a token
bucket, or a concurrency limit, tokens per minute, a sliding or fixed window, a limit that moves,
random 503 / 529 overloads, slow refusals: the controller is never told which), with an event
loop's batching (no response is read while granted requests are being written). Answer times are
drawn at random: the targets are judged on 16 seeds per profile (`TARGET_SEEDS`), most other
tests run 4 (`SEEDS`). The profiles are `tests.support.rate_catalog`'s.

Every profile must lose no call and meet the issue's targets (wall <= 1.15 x ideal, <= 1.15
requests per answer, worst of the 16 seeds). A profile that misses one is listed in `MISSES`
with its honest current worst figure (rounded up to the hundredth), and docs/benchmarks.md
states the miss; a bound there is today's figure, not a margin of its own. The loopback benchmark
(`benchmarks/rates.py`) measures the same shapes with real time and real clients.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from langchain_kimi._http.limits.knobs import KNOBS
from tests.support import random_gateways, rate_bounds, shared_limit_grid, small_shares_grid
from tests.support.pool_simulation import Overload, Profile, run
from tests.support.rate_catalog import ALL, SEEDS, TARGET_SEEDS

TARGET = 1.15

MISSES = {
    # name: (worst wall / ideal, worst requests per answer) of the 16 seeds, where one misses
    "50/s, 1 s burst, 0.8-2.5 s answers": (1.17, 1.15),
    "50/s, 0.2 s burst, 50-400 ms": (1.18, 1.15),
    "50/s, 4 s burst, 100-500 ms": (1.23, 1.15),
    "8/s, 0.2-1 s answers": (1.15, 1.24),
    "5/s, 0.2-1 s answers": (1.15, 1.45),
    "120/s, 0.1 s burst, 20-80 ms, no Retry-After": (1.15, 1.18),
    "50/s, 429s taking 50-200 ms": (1.17, 1.15),
    "20/s, 30-90 s answers, 2,000 concurrent": (1.19, 1.15),
    "500/s, 1-2 s answers, 800 concurrent": (1.28, 1.15),
    "50/s, 0.1-0.5 s, 2 processes": (1.21, 1.15),
    "50/s, 0.8-2.5 s, 4 processes": (1.32, 1.15),
    "50/s, 0.1-0.5 s, 8 processes": (1.15, 1.27),
    "50/s, 0.1-0.5 s, 16 processes": (1.15, 1.45),
    "6/s, 0.1 s burst, 20-100 ms, 3 processes": (1.69, 2.07),
    "concurrency limit 20, 0.1-0.5 s answers, 4 processes": (1.73, 1.21),
    "concurrency limit 20, 0.8-2.5 s answers, 2 processes": (1.28, 1.36),
    "1.2M tokens per minute, 5-15k-token prompts": (1.15, 1.6),
    "50/s sliding-window log": (1.52, 1.26),
    "50/s sliding-window log, 0.8-2.5 s answers": (1.52, 1.25),
    "50/s fixed window per second": (1.45, 1.38),
    "50/s fixed window, 0.8-2.5 s answers": (1.44, 1.39),
    "20/s fixed window, Retry-After: 0": (1.39, 1.48),
    "50/s fixed window, 4 processes": (1.38, 1.32),
    "50/s falling to 10/s at 2 s": (1.15, 1.19),
    "100/s falling to 10/s at 2 s": (1.2, 1.18),
    "10/s rising to 50/s at 3 s": (1.15, 1.2),
    "20/s rising to 1,000/s at 3 s": (1.66, 1.15),
    "50/s, 30 % 503 with Retry-After: 1 for 10 s": (1.15, 1.75),
    "50/s, 30 % 529 overloaded_error with Retry-After: 1 for 10 s": (1.15, 1.75),
    "50/s, 30 % 503 without Retry-After for 10 s": (1.15, 1.7),
    "50/s, 30 % 529 without Retry-After for 10 s": (1.15, 1.7),
    "50/s, 429s taking 2 s": (1.15, 1.5),
    "50/s, 429s taking 0.2-0.4 s": (1.17, 1.82),
    "80/s, 0.1 s burst, 429s taking 30-80 ms, 3 processes": (1.97, 1.25),
}


@pytest.mark.parametrize("name", list(ALL))
def test_every_gateway_shape_loses_no_call_and_meets_the_targets(name: str) -> None:
    wall_bound, requests_bound = MISSES.get(name, (TARGET, TARGET))
    results = [run(ALL[name], seed) for seed in TARGET_SEEDS]
    assert [r.errors for r in results] == [[]] * len(results)
    assert max(r.wall_over_ideal for r in results) <= wall_bound
    assert max(r.requests_per_answer for r in results) <= requests_bound


def test_a_listed_miss_is_a_miss() -> None:
    # A profile that meets both targets leaves MISSES: its bounds go back to the targets.
    assert set(MISSES) <= set(ALL)
    assert all(max(bounds) > TARGET for bounds in MISSES.values())


def test_sixteen_processes_sharing_a_key_lose_no_answer_on_more_seeds() -> None:
    # A process that got nothing of the first burst, paced one request at a time with calls
    # waiting behind it, lost an answer before a paced call counted as crowded.
    profile = ALL["50/s, 0.1-0.5 s, 16 processes"]
    for seed in range(4, 6):
        assert run(profile, seed).errors == []


def test_a_limit_that_rises_is_used_within_a_few_seconds() -> None:
    # 20/s for 3 s, then 1,000/s: the pacer probes up (or goes inert) instead of staying at 20.
    profile = ALL["20/s rising to 1,000/s at 3 s"]
    for seed in SEEDS:
        # At 20/s the 600 calls would take ~29 s; once the limit rises, the rest go within ~3 s.
        assert run(profile, seed).end < 7.0


def test_a_limit_that_falls_before_its_burst_is_spent_is_run_to_the_end() -> None:
    # A 4 s burst of 100/s holds all 400 calls (an ideal of one answer), but the limit falls to
    # 3/s at 1 s, before the slow start has sent them: the rest go at 3/s. The horizon, 50 x the
    # ideal, cut the run at 79.5 s and counted 2 calls as still running (random draw 18,680).
    profile = Profile(
        100, burst=4, latency=(0.2, 0.3), retry_after="negative", limit_after=(1.0, 3)
    )
    result = run(profile, seed=0)
    assert result.errors == []
    assert result.end > 79.5


def test_a_few_late_answers_leave_the_slow_start_bounded_behind_slow_429s() -> None:
    # "50/s, 429s taking 2 s" with answers of 50-320 ms instead of 50-250 ms: about one in forty
    # comes back later than the quick-answers bound (1.25 x the 0.25 s horizon), as on the
    # loopback gateway, where a busy event loop pushed one answer to 0.321 s. The first such
    # answer ended the quick answers for good and the window grew by age until the 429s came
    # back: 1.20-1.45x ideal and 1.60-1.70 requests per answer (seeds 0-3), where the same
    # gateway with no late answer is 1.08-1.13x and 1.48-1.50.
    profile = Profile(50, latency=(0.05, 0.32), refusal=(2.0, 2.0))
    results = [run(profile, seed) for seed in SEEDS]
    assert [r.errors for r in results] == [[]] * len(results)
    assert max(r.wall_over_ideal for r in results) <= MISSES["50/s, 429s taking 2 s"][0]
    assert max(r.requests_per_answer for r in results) <= MISSES["50/s, 429s taking 2 s"][1]


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


# Processes sharing a key behind a small concurrency limit keep each other out: the one whose
# requests hold the slots takes each back with its next request as an answer frees it. A process
# kept out for longer than `serving_span` spent its calls' retries on those 429s (found by
# varying the catalogue, 61096a3: 39 of 1,600 calls lost with 16 processes behind 20, 70 with 4
# behind 10). A `serving_span` of 30 s only moved the threshold (32 processes behind 20: 179 of
# 2,400 lost). A starved pool now probes one request at a time and its calls wait for their pool
# timeout (`starved.py`). A process's last call, sent when its other calls are done, went alone
# and spent its retries on the others' 429s (32 processes behind 20: 2 of 9,600 over 12 seeds;
# the grid below, `shared_limit_grid`, 17 of 248,320) until a call sent while its pool shares a
# rate counted as going with others (`Controller.sharing`; `SMALL_SHARES_OF_A_KEY`).
STARVED_BEHIND_A_SHARED_CONCURRENCY_LIMIT = {
    "16 processes behind a concurrency limit of 20, 1-5 s answers": Profile(
        10_000, latency=(1.0, 5.0), concurrency_limit=20, processes=16, concurrency=16
    ),
    "16 processes behind a concurrency limit of 20, Retry-After as an HTTP date": Profile(
        10_000,
        latency=(1.0, 5.0),
        concurrency_limit=20,
        processes=16,
        concurrency=16,
        retry_after="date",
    ),
    "4 processes behind a concurrency limit of 10, 1-5 s answers": Profile(
        10_000, latency=(1.0, 5.0), concurrency_limit=10, processes=4, concurrency=64
    ),
    "8 processes behind a concurrency limit of 3, 5-15 s answers": Profile(
        10_000, latency=(5.0, 15.0), concurrency_limit=3, processes=8, concurrency=8, calls=120
    ),
    "8 processes behind a concurrency limit of 20, 5-15 s answers": Profile(
        10_000, latency=(5.0, 15.0), concurrency_limit=20, processes=8, concurrency=32
    ),
    "2 processes behind a concurrency limit of 5, Retry-After: 0": Profile(
        10_000,
        latency=(1.0, 5.0),
        concurrency_limit=5,
        processes=2,
        concurrency=64,
        retry_after="zero",
    ),
}


# Processes whose share of one key is a few requests per second: each process's last calls go
# alone (its others done) into the rate the other processes hold. They spent their retries on the
# others' 429s until a call sent while its pool shares a rate, paced or lately healed, counted as
# going with others (`Controller.sharing`). On main 90acbbe each of these lost calls on the
# test's seeds (5 processes on 3/s: 4 of 480; 8 on 3/s: 10 of 640; a grid of 432 such gateways:
# 199 calls on 81, docs/benchmarks.md, "A batch's last call"). Their requests per answer (2-4.5)
# are far from the target: not asserted here.
SMALL_SHARES_OF_A_KEY = {
    "3 processes on a 6/s key, 0.1 s burst, 20-100 ms answers": Profile(
        6, burst=0.1, latency=(0.02, 0.1), processes=3, calls=300, concurrency=128
    ),
    "5 processes on a 3/s key, 20-100 ms answers": Profile(
        3, latency=(0.02, 0.1), processes=5, calls=120, concurrency=64
    ),
    "5 processes on a 10/s key, 0.1 s burst, no Retry-After": Profile(
        10, burst=0.1, latency=(0.02, 0.1), processes=5, calls=120, retry_after="absent"
    ),
    "8 processes on a 3/s key, 0.1 s burst, no Retry-After": Profile(
        3, burst=0.1, latency=(0.02, 0.1), processes=8, calls=160, retry_after="absent"
    ),
    "8 processes on a 6/s key, 0.1 s burst, 429s taking 0.1-0.3 s": Profile(
        6, burst=0.1, latency=(0.02, 0.1), processes=8, calls=160, refusal=(0.1, 0.3)
    ),
    "8 processes behind a concurrency limit of 3, 0.5-1.5 s answers": Profile(
        10_000, latency=(0.5, 1.5), concurrency_limit=3, processes=8, calls=160
    ),
}


# Overloads met by a few calls at a time: each refused call sleeps its `Retry-After` (or its
# backoff) out of the queue, so the next one refused saw nothing in flight or queued and spent
# its retries as a call alone. A call asleep between attempts now keeps its siblings company
# (`AdmittedCall.resting`). Each lost calls on main 78f1707 over the test's seeds (2-119 of
# them; found with `tests.support.random_gateways`, docs/benchmarks.md).
OVERLOADED_WHILE_SIBLINGS_REST = {
    "4 processes, 4 calls at a time each, 30 % 503 with Retry-After: 1 for 10 s": Profile(
        50,
        burst=2,
        latency=(0.05, 0.15),
        calls=200,
        concurrency=4,
        processes=4,
        refusal=(0.05, 0.2),
        overload=Overload(),
    ),
    "4 calls at a time on 10/s, 50 % 503 with Retry-After: 1 for 10 s": Profile(
        10,
        burst=4,
        latency=(0.05, 0.15),
        calls=400,
        concurrency=4,
        refusal=(0.05, 0.2),
        overload=Overload(share=0.5),
    ),
    "3 processes, 16 calls at a time each, 70 % 529 with Retry-After: 1 for 30 s": Profile(
        50,
        burst=4,
        latency=(0.05, 0.15),
        calls=400,
        concurrency=16,
        processes=3,
        overload=Overload(share=0.7, until=30.0, status=529),
    ),
    "4 processes, 4 calls at a time each, 50 % 529 without Retry-After for 10 s": Profile(
        50,
        latency=(0.01, 0.015),
        calls=400,
        concurrency=4,
        processes=4,
        overload=Overload(share=0.5, status=529, retry_after=False),
    ),
}


# Processes sharing a key of tokens per minute, each with a batch of quick calls: the key's
# minute of tokens goes in the first second, and a process's last calls, sent alone once its
# others were answered, met the rate the other processes held. Each spent its retries on those
# 429s as a call alone (on main 57762ed: 1-5 calls lost per seed on each of these). A call that
# arrived while others of its pool were out is one of a batch (`Admission.call`).
A_BATCHS_LAST_CALLS_ON_TOKENS_PER_MINUTE = {
    "8 processes on 600k tokens a minute, 12 calls each, 10-15 ms answers": Profile(
        10_000,
        latency=(0.01, 0.015),
        calls=100,
        concurrency=64,
        processes=8,
        refusal=(0.03, 0.08),
        retry_after="absent",
        tokens_per_minute=600_000,
    ),
    "16 processes on 600k tokens a minute, 429s taking 1-2 s, Retry-After: 0": Profile(
        10_000,
        latency=(0.01, 0.015),
        calls=200,
        concurrency=16,
        processes=16,
        refusal=(1.0, 2.0),
        retry_after="zero",
        tokens_per_minute=600_000,
    ),
    "8 processes on 200k tokens a minute, Retry-After as an HTTP date": Profile(
        10_000,
        burst=2,
        latency=(0.01, 0.05),
        calls=100,
        concurrency=64,
        processes=8,
        refusal=(1.0, 2.0),
        retry_after="date",
        tokens_per_minute=200_000,
    ),
    "16 processes on 200k tokens a minute, Retry-After as a fraction": Profile(
        10_000,
        latency=(0.01, 0.015),
        calls=200,
        concurrency=64,
        processes=16,
        refusal=(1.0, 2.0),
        retry_after="fraction",
        tokens_per_minute=200_000,
    ),
}


# A batch's last calls in a long overload that says when to come back (70 % 529 with
# `Retry-After: 1` for 30 s): the rest of their pool done, nothing of it admitted for
# `serving_span`, each spent its retries on three more 529s after 10-20 lost turns (on main
# e09e4ac: 1-3 calls lost over seeds 0-3 on each; `tests.support.random_gateways` draws 10,234,
# 11,884 and 13,392). Such an overload now starves the pool as a 429 does (`starved.py`).
LONG_529_OVERLOAD = Overload(share=0.7, until=30.0, status=529)
SIXTEEN_PROCESSES_IN_IT = {
    "retry_after": "negative",
    "calls": 128,
    "concurrency": 64,
    "processes": 16,
    "refusal": (0.2, 0.6),
    "overload": LONG_529_OVERLOAD,
}
STRAGGLERS_OF_A_LONG_OVERLOAD = {
    "4 processes on 20/s, 64 calls at a time, 70 % 529 with Retry-After: 1 for 30 s": Profile(
        20,
        latency=(0.2, 0.3),
        retry_after="date",
        calls=100,
        concurrency=64,
        processes=4,
        overload=LONG_529_OVERLOAD,
    ),
    "16 processes on 3/s, 0.8-4 s answers, 70 % 529 with Retry-After: 1 for 30 s": Profile(
        3, burst=0.5, latency=(0.8, 4.0), **SIXTEEN_PROCESSES_IN_IT
    ),
    "16 processes on 100/s, 4 s burst, 70 % 529 with Retry-After: 1 for 30 s": Profile(
        100, burst=4, latency=(0.2, 1.0), **SIXTEEN_PROCESSES_IN_IT
    ),
}


LOSE_NO_CALL = (
    STARVED_BEHIND_A_SHARED_CONCURRENCY_LIMIT
    | SMALL_SHARES_OF_A_KEY
    | OVERLOADED_WHILE_SIBLINGS_REST
    | A_BATCHS_LAST_CALLS_ON_TOKENS_PER_MINUTE
    | STRAGGLERS_OF_A_LONG_OVERLOAD
)
"""The gateways off the catalogue that lost calls once, each in one of the tables above."""


@pytest.mark.parametrize("name", list(LOSE_NO_CALL))
def test_gateways_that_once_lost_calls_lose_none(name: str) -> None:
    profile = LOSE_NO_CALL[name]
    assert [run(profile, seed).errors for seed in SEEDS] == [[]] * len(SEEDS)


@pytest.mark.parametrize("retry_after", ["absent", "zero", "integer"])
def test_a_batch_on_a_key_refused_for_good_fails_within_its_pool_timeout(retry_after: str) -> None:
    # Nothing tells a process kept out by others from a key refused for good: its crowded calls
    # wait for either, for their pool timeout at most, and the starved pool probes one request at
    # a time, so waiting costs few requests. Every call fails with the rate limit, saying why.
    profile = Profile(1e-6, retry_after=retry_after, calls=40, concurrency=40, pool_timeout=60.0)
    result = run(profile, seed=0)
    assert result.failed == profile.calls - 1  # the bucket's one token aside
    assert result.end < profile.pool_timeout + 15.0  # its last retries, after the timeout
    assert result.requests_per_answer <= 2 * profile.calls
    assert all(
        "gave up after 2 retries" in error  # a call alone, or past its patience: its 429
        or "longer than this call's pool timeout" in error  # Retry-After: 1,000,000 s
        or error.startswith("KimiRateLimitError: the gateway has answered every request")
        for error in result.errors
    )


def test_a_batch_in_an_outage_that_says_when_to_come_back_waits_its_pool_timeout_probing() -> None:
    # 529 `Retry-After: 1` on every request, for good, no fallback base: the batch's calls lose
    # turns (the overload says when to come back), the pool probes one request at a time once
    # it has been neither served nor starting for `starting_span`, and the calls fail once
    # their pool timeout runs out, saying what the gateway answered (the probe out at that
    # moment spends its retries). Before: every call spent its retries after `starting_span`.
    outage = Overload(share=1.0, until=float("inf"), status=529)
    # A limit of 1/s (never reached) sets an ideal, so a horizon, long enough for the timeout.
    profile = Profile(1, calls=40, concurrency=40, overload=outage, pool_timeout=60.0)
    result = run(profile, seed=0)
    assert result.failed == profile.calls
    starved = [e for e in result.errors if e.startswith("KimiAPIError: the gateway has answered")]
    assert len(starved) >= profile.calls - 2
    assert all("every request of this pool with 529 for " in error for error in starved)
    assert set(result.errors) - set(starved) <= {"gave up after 2 retries"}
    assert profile.pool_timeout < result.end < profile.pool_timeout + KNOBS.starting_span + 5.0
    # About one request per call per second until `starting_span`, then one probe at a time.
    assert result.requests_per_answer <= 12 * profile.calls  # no answer: requests / 1


def test_a_batch_in_an_outage_that_names_no_wait_fails_after_its_retries() -> None:
    # A 503 without Retry-After does not say when to come back: the calls spend their retries
    # once the pool has been neither served nor starting for `starting_span`, as before.
    outage = Overload(share=1.0, until=float("inf"), retry_after=False)
    profile = Profile(1, calls=40, concurrency=40, overload=outage, pool_timeout=60.0)
    result = run(profile, seed=0)
    assert result.failed == profile.calls
    assert all(error == "gave up after 2 retries" for error in result.errors)
    assert result.end < KNOBS.starting_span + 3 * KNOBS.backoff_cap


@pytest.mark.parametrize(("retry_after", "requests_bound"), [("integer", 1.12), ("date", 1.24)])
def test_a_window_of_a_minute_that_says_when_it_reopens_is_not_sent_into_until_then(
    retry_after: str, requests_bound: float
) -> None:
    # 60 requests a minute counted per whole minute (Kong's rate-limiting plugin, many API
    # gateways), every 429 saying when the minute ends. The pacer used to halve its rate step
    # after step into the refusals and keep probing (on 5987d6a: 13-32 refusals in each minute's
    # lockout, 1.51-1.59 requests per answer over seeds 0-3); its pace now holds until then,
    # from the first 429 of each lockout once a first one was held (1.11 and 1.20-1.23 now).
    profile = Profile(
        1, fixed_window=True, window=60.0, calls=150, latency=(0.8, 2.5), retry_after=retry_after
    )
    for seed in SEEDS:
        refused_at: list[float] = []
        result = run(profile, seed, setup=_record_refusals(refused_at))
        assert result.errors == []
        assert result.wall_over_ideal < 1.03
        # The minute's count goes within its first seconds; the rest of it is the lockout.
        assert [at for at in refused_at if at % 60 > 5.0] == []
        assert result.requests_per_answer <= requests_bound  # the first wave, the first lockout


def test_a_gateway_asking_the_same_long_wait_of_every_429_holds_only_the_calls_it_refused() -> None:
    # A 50/s bucket whose every 429 says `Retry-After: 60`, whatever the wait: each refused call
    # waits its 60 s, the others go on at the pace. Holding the whole pool at every such 429
    # (tried: the pace held at once from the first long wait) took 302 s instead of 66 s.
    result = run(Profile(50, retry_after="constant"), seed=0)
    assert result.errors == []
    assert result.end < 70.0


def test_a_window_that_names_no_wait_is_paced_as_before() -> None:
    # Without `Retry-After` nothing says when it reopens: the pace halves into it, as before.
    profile = Profile(
        1, fixed_window=True, window=60.0, calls=150, latency=(0.8, 2.5), retry_after="absent"
    )
    assert 1.8 < run(profile, seed=0).requests_per_answer < 2.1


def _record_refusals(refused_at: list[float]) -> Callable[[Any], None]:
    """A `run` setup that appends the time of every refusal the gateway sends to `refused_at`."""

    def setup(sim: Any) -> None:
        take = sim.gateway_take

        def recorded(now: float, tokens: float = 0.0) -> float:
            wait: float = take(now, tokens)
            if wait:
                refused_at.append(now)
            return wait

        sim.gateway_take = recorded

    return setup


def test_a_batch_told_to_come_back_in_an_hour_fails_within_seconds_not_one_call_at_a_time() -> None:
    # `Retry-After` far beyond the pool timeout on every 429 (a daily cap): each call fails on its
    # first 429; once the pool is starved, the calls waiting fail at once instead of being sent
    # one per probe (each probe up to `starved_probe_cap` apart: 400 calls took 1,388 s).
    profile = Profile(1e-6, retry_after="huge", calls=400, concurrency=256)
    result = run(profile, seed=0)
    assert result.failed == profile.calls - 1
    assert result.end < 30.0
    assert result.requests_per_answer < 150


def test_the_shared_limit_grid_is_the_one_the_docs_describe() -> None:
    # docs/benchmarks.md gives the grid's figures: 240 gateways, totals by limit.
    grid = shared_limit_grid.profiles()
    assert len(grid) == 240
    assert {p.concurrency_limit for p in grid.values()} == {3, 5, 10, 20}
    assert min(p.calls // p.processes for p in grid.values()) >= 4
    figures = {"limit 3, 2 processes, x": (1, 10), "limit 3, 4 processes, y": (2, 20)}
    assert shared_limit_grid.by_limit(figures | {"limit 20, 1 processes, z": (0, 5)}) == {
        3: (3, 30),
        20: (0, 5),
    }


def test_the_small_shares_grid_is_the_one_the_docs_describe() -> None:
    # docs/benchmarks.md, "A batch's last call": 432 gateways, 2-8 processes, 120 calls at least.
    grid = small_shares_grid.profiles()
    assert len(grid) == 432
    assert {p.processes for p in grid.values()} == {2, 3, 5, 8}
    assert {p.rate for p in grid.values() if p.concurrency_limit is None} == {3, 6, 10, 30}
    assert {p.concurrency_limit for p in grid.values()} == {None, 3, 8, 20}
    assert min(p.calls for p in grid.values()) == 120


def test_the_random_gateways_are_the_ones_the_docs_describe() -> None:
    # docs/benchmarks.md, "Overloads met by a few calls at a time": the draws' kinds and ranges.
    draws = [random_gateways.draw(number) for number in range(400)]
    assert {kind for kind, _ in draws} == set(random_gateways.KINDS)
    assert {p.processes for _, p in draws} == {1, 2, 3, 4, 8, 16}
    assert {p.concurrency for _, p in draws} == {4, 16, 64, 256}
    overloads = [p.overload for _, p in draws if p.overload is not None]
    assert {o.share for o in overloads} == {0.1, 0.3, 0.5, 0.7}
    assert {o.until for o in overloads} == {2.0, 10.0, 30.0}
    assert random_gateways.draw(7) == random_gateways.draw(7)  # a draw is its number's


def test_the_bounds_table_in_the_docs_has_these_misses() -> None:
    # docs/benchmarks.md, "What no client can do": `python -m tests.support.rate_bounds` as it is
    # today; its last column is MISSES, so a change there must render the table again.
    page = (Path(__file__).parents[4] / "docs" / "benchmarks.md").read_text()
    assert rate_bounds.table(MISSES) in page
