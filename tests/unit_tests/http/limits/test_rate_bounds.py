"""What no client can do on the simulated gateways (`tests/support/rate_bounds.py`, issue 29).

The bounds are checked against the simulation's own gateway (the earliest admissions are admitted,
anything earlier is refused), against a sampled client where they are exact, and pinned: on the
30 % overload profiles no client meets both targets, and with 30-90 s answers no client meets the
wall target. Simulated time only: no clock, no sleep.
"""

from __future__ import annotations

import random

import pytest

from benchmarks import limits
from tests.support import rate_bounds
from tests.support.pool_simulation import Overload, Profile, _Simulation, ideal_seconds
from tests.support.rate_catalog import ALL

OVERLOADS = [name for name, profile in ALL.items() if profile.overload is not None]
FIXED_TIMES = [
    name
    for name, profile in ALL.items()
    if rate_bounds.earliest_admissions(profile) is not None and profile.limit_after is None
]
MOVES = [name for name, profile in ALL.items() if profile.limit_after is not None]


def _late(due: float) -> float:
    """A hair after `due`: a refill's float sum can fall short of a whole token by a rounding."""
    return due * (1 + 1e-9) + 1e-9


def _gateway(profile: Profile) -> _Simulation:
    return _Simulation(profile, seed=0)


@pytest.mark.parametrize("name", FIXED_TIMES)
def test_the_earliest_admissions_are_admitted_and_none_sooner(name: str) -> None:
    profile = ALL[name]
    times = rate_bounds.earliest_admissions(profile)
    assert times is not None
    sends = [_late(due) for due in times]
    gateway = _gateway(profile)
    assert all(gateway.gateway_take(send) == 0 for send in sends)
    # After the first k - 1 at their earliest, the k-th a little sooner than e_k is refused.
    steps = [k for k in range(1, len(times)) if times[k] > times[k - 1] + 1e-3]
    for k in (steps[len(steps) // 2], steps[-1]):
        gateway = _gateway(profile)
        assert all(gateway.gateway_take(send) == 0 for send in sends[:k])
        assert gateway.gateway_take(times[k] - 1e-4) > 0


@pytest.mark.parametrize("name", MOVES)
def test_a_client_asking_every_millisecond_is_never_ahead_of_a_moving_bucket(name: str) -> None:
    # It takes every token as it comes; its k-th admission is never before e_k, and within a
    # token of the new rate after it (lazily refilled: the time since the last request before a
    # fall is refilled at the new rate; a rise it reaches by pausing, not by asking).
    profile = ALL[name]
    times = rate_bounds.earliest_admissions(profile)
    assert times is not None
    assert profile.limit_after is not None
    gateway, now = _gateway(profile), 0.0
    admissions: list[float] = []
    while len(admissions) < len(times):
        if gateway.gateway_take(now) == 0:
            admissions.append(now)
        else:
            now = round(now + 0.001, 6)
    assert all(got >= due - 1e-9 for got, due in zip(admissions, times, strict=True))
    if profile.limit_after[1] < profile.rate:
        late = 1 / profile.limit_after[1] + 0.002
        assert all(got <= due + late for got, due in zip(admissions, times, strict=True))


def test_a_client_idle_before_a_rise_finds_the_new_bucket_full() -> None:
    # The simulated bucket is refilled lazily at the rate in force: 20/s rising to 1,000/s at
    # 3 s, idle from 2 s, admits the next 1,000 at 3 s (not the 20 the old rate would have).
    profile = ALL["20/s rising to 1,000/s at 3 s"]
    gateway = _gateway(profile)
    sent = [0.0] * 20 + [i / 20 for i in range(1, 41)]  # the bucket, then 20/s up to 2 s
    assert all(gateway.gateway_take(_late(now)) == 0 for now in sent)
    assert sum(gateway.gateway_take(3.001) == 0 for _ in range(1_100)) == 1_000
    # So no client is held to the ideal there: all 600 can be admitted by 3 s (ideal 3.67 s).
    times = rate_bounds.earliest_admissions(profile)
    assert times is not None
    assert max(times) == 3.0
    assert rate_bounds.bounds(profile).best_wall < 0.9


@pytest.mark.parametrize(
    "name", ["50/s, 1 s burst, 0.8-2.5 s answers", "20/s, 30-90 s answers, 2,000 concurrent"]
)
def test_the_exact_best_wall_is_what_the_greedy_client_samples(name: str) -> None:
    profile = ALL[name]
    times = rate_bounds.earliest_admissions(profile)
    assert times is not None
    walls = rate_bounds.best_walls(profile, samples=300, seed=1)
    mean = sum(walls) / len(walls)
    assert mean == pytest.approx(rate_bounds.best_wall_mean(times, profile.latency), rel=0.005)
    ideal = ideal_seconds(profile)
    share = sum(wall <= rate_bounds.TARGET * ideal for wall in walls) / len(walls)
    exact = rate_bounds.best_wall_probability(times, profile.latency, rate_bounds.TARGET * ideal)
    assert share == pytest.approx(exact, abs=0.05)


def test_with_30_to_90_s_answers_no_client_meets_the_wall_target() -> None:
    # 2,000 calls at 20/s: the last admitted at 99 s at the earliest, and of the ~1,200 admitted
    # in the last minute some answer in ~90 s; the ideal counts one mean answer (60 s).
    bounds = rate_bounds.bounds(ALL["20/s, 30-90 s answers, 2,000 concurrent"])
    assert bounds.exact
    assert 1.17 < bounds.best_wall < 1.18
    assert bounds.meets_wall < 0.002  # per run, whatever the client
    assert not bounds.feasible


@pytest.mark.parametrize("name", OVERLOADS)
def test_on_the_30_percent_overloads_no_client_meets_both_targets(name: str) -> None:
    # 600 calls, 50/s, 30 % refused until 10 s (ideal 11.15 s): at most ~184 answers can come
    # after 10 s within 1.15 x ideal, each answer before costs 3/7 of a refusal.
    frontier = rate_bounds.overload_frontier(ALL[name])
    assert 1.29 < frontier.rpa_at_target_wall_bound < 1.30
    assert 1.51 < frontier.wall_at_target_rpa_bound < 1.53
    # The greedy client of fact 2 comes within 0.01 of both: the frontier is pinned.
    reached = (frontier.rpa_at_target_wall_reached, frontier.wall_at_target_rpa_reached)
    bound = (frontier.rpa_at_target_wall_bound, frontier.wall_at_target_rpa_bound)
    assert bound[0] <= reached[0] < bound[0] + 0.01
    assert bound[1] <= reached[1] < bound[1] + 0.01
    assert not rate_bounds.bounds(ALL[name]).feasible


@pytest.mark.parametrize("name", OVERLOADS)
def test_in_one_run_no_client_meets_both_targets_but_by_a_billion_to_one_chance(name: str) -> None:
    # Within 1.15 x ideal at most 188 answers come after 10 s, so >= 412 before, and the
    # refusals met before the 412th (a negative binomial, 178 on average) must be <= 90.
    assert rate_bounds.overload_chance_of_both(ALL[name]) < 1e-9
    smaller = Profile(50, calls=600, overload=Overload(share=0.05))
    assert rate_bounds.overload_chance_of_both(smaller) > 0.99


def test_the_oracle_in_the_simulation_reaches_the_frontier_it_was_computed_for() -> None:
    # Fact 2's client run on the simulation's own overload draw and bucket: every call answered
    # in at most three tries, never refused by the bucket, and its figures those computed.
    profile = ALL["50/s, 30 % 503 with Retry-After: 1 for 10 s"]
    frontier = rate_bounds.overload_frontier(profile)
    runs = [
        rate_bounds.overload_oracle(profile, frontier.answers_after, seed) for seed in range(20)
    ]
    walls, rpas = zip(*runs, strict=True)
    assert sum(rpas) / len(rpas) == pytest.approx(frontier.rpa_at_target_wall_reached, abs=0.01)
    assert sum(walls) / len(walls) <= rate_bounds.TARGET + 0.002
    assert min(rpas) > rate_bounds.TARGET  # not one run of the best client meets both


def test_an_overload_costs_three_sevenths_of_a_refusal_per_answer_before_it_ends() -> None:
    # Wald's identity on the simulation's own draw: sending until 100 answers, 30 % refused.
    sim = _Simulation(Profile(50, overload=Overload()), seed=0)
    refusals = []
    for _ in range(200):
        answered = refused = 0
        while answered < 100:
            if sim.overloaded(1.0) is None:
                answered += 1
            else:
                refused += 1
        refusals.append(refused)
    assert sum(refusals) / len(refusals) == pytest.approx(100 * 3 / 7, rel=0.03)


def test_a_smaller_overload_leaves_both_targets_in_reach() -> None:
    # The frontier moves with the share: at 5 % the targets are jointly in reach again.
    frontier = rate_bounds.overload_frontier(Profile(50, calls=600, overload=Overload(share=0.05)))
    assert frontier.rpa_at_target_wall_bound < rate_bounds.TARGET
    with pytest.raises(ValueError, match="more calls"):
        rate_bounds.overload_frontier(Profile(50, calls=400, overload=Overload()))


def test_every_other_profile_is_in_reach_of_a_client_told_the_limit() -> None:
    # One request per answer, and a mean wall within the target: what the controller misses
    # there is not the gateway's doing.
    out_of_reach = {
        name
        for name, profile in ALL.items()
        if not rate_bounds.bounds(profile, samples=60).feasible
    }
    assert out_of_reach == {"20/s, 30-90 s answers, 2,000 concurrent", *OVERLOADS}


@pytest.mark.parametrize(
    "name",
    [
        "concurrency limit 20, 0.1-0.5 s answers",
        "1.2M tokens per minute, 5-15k-token prompts",
        "50/s sliding-window log, 0.8-2.5 s answers",
        "50/s fixed window per second",
    ],
)
def test_the_greedy_client_is_never_refused_by_the_gateways_own_limit(name: str) -> None:
    profile = ALL[name]
    schedule = rate_bounds.greedy_schedule(profile, random.Random(0))
    gateway = _gateway(profile)  # the simulation's limit: benchmarks.limits' class of the kind
    for admitted, answered, prompt in schedule:
        assert gateway.gateway_take(_late(admitted), prompt) == 0
        gateway.now = admitted
        gateway.admitted(answered)


def test_a_concurrency_limit_bounds_by_the_answers_in_flight() -> None:
    # The greedy client never beats the throughput bound (the ideal) and is near it.
    profile = ALL["concurrency limit 20, 0.1-0.5 s answers"]
    walls = [wall / ideal_seconds(profile) for wall in rate_bounds.best_walls(profile, 100)]
    assert min(walls) > 0.95
    assert 1.0 < sum(walls) / len(walls) < 1.06
    # ... and respects the limit: run its schedule through the gateway's own class.
    limit = limits.ConcurrencyLimit(20)
    draw = random.Random(0)
    answers = sorted(draw.uniform(0.1, 0.5) for _ in range(20))
    for answered in answers:
        assert limit.take(0.0) == 0
        limit.admitted(0.0, answered)
    assert limit.take(answers[0] - 1e-6) > 0
    assert limit.take(answers[0]) == 0


def test_a_client_that_writes_its_batch_before_reading_pays_for_it_blind() -> None:
    # 429s taking 2 s and answers >= 50 ms: a client that writes the 256 calls abatch starts
    # (0.4 ms each) before it reads any reply finds at most 50 + 50 x 0.1024 tokens for them.
    profile = ALL["50/s, 429s taking 2 s"]
    assert rate_bounds.blind_seconds(profile) == 0.05
    written_over = 256 * profile.send_cost
    refused = rate_bounds.blind_refusals(profile, 256, written_over)
    assert refused == pytest.approx(256 - 50 - 50 * written_over)
    assert 1 + refused / profile.calls > 1.5  # requests per answer, whatever follows
    # A client told the limit sends none of them blind: one request per answer.
    assert rate_bounds.bounds(profile).feasible


def test_the_ideal_of_a_window_counts_whole_seconds() -> None:
    # 420 calls at 50 a second: the 401st to 420th wait for the window that opens at 8 s, so no
    # client is done before 8 s plus an answer (the ideal said 7.4 s before).
    for kind in ("fixed", "sliding"):
        ideal = limits.ideal_seconds(kind, calls=420, answer=0.15, rate=50, burst=1.0)
        assert ideal == pytest.approx(8.15)
        window = limits.limit_for(kind, rate=50)
        admitted = [window.take(second) == 0 for second in range(9) for _ in range(50)]
        assert sum(admitted[:400]) == 400  # 50 in each of the seconds 0..7
        assert admitted[400]  # the 401st at 8 s, not sooner
        assert limits.ideal_seconds(kind, calls=400, answer=0.15, rate=50, burst=1.0) == 7.15
