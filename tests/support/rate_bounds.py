"""What the best possible client could do on each simulated gateway (issue 29): bounds on the
targets (wall <= 1.15 x ideal, <= 1.15 requests per answer), not a controller.

The gateway is `tests.support.pool_simulation`'s, read as a rule on admission times. A client
chooses only when its requests reach the gateway; the gateway draws each admitted request's
answer time afresh, uniform on `latency`, independent of everything before. Three facts follow.

1. *The best client under a limit on admissions is the greedy one that knows the limit.* Give the
   k-th admitted request the k-th latency draw l_k; the draws are i.i.d. whatever the client does,
   since each is made afresh at an admission. For every kind here the k-th admission of ANY client
   is at or after a time that only grows with the earlier admissions and their answers: a token
   bucket admits at most C + r t requests by t, so s_k >= e_k = (k - C) / r (a moving rate:
   `earliest_admissions`); the sliding window needs s_k >= s_(k-r) + 1 and the fixed window s_k >=
   floor(s_(k-r)) + 1; a limit of m in flight (the gateway's, or `abatch`'s concurrency) needs s_k
   >= the (k-m)-th earliest answer among the first k-1. The client that admits each request at the
   earliest such time (knowing the limit, so it is never refused) has, by induction on k, every
   s_k and so every answer time s_k + l_k at or before any other client's, draw by draw. Its wall,
   max_k (s_k + l_k), is therefore a lower bound on every client's wall in distribution, with one
   request per answer; `best_walls` samples it, and `best_wall_probability` computes it exactly
   where the admission times do not depend on the draws (P = prod_k F(w - e_k), F the latency's
   distribution function). It leaves out the time a request takes to be written, which only
   helps. On a tokens-per-minute limit (M a minute, rho = M / 60 per second) the last admission
   is at or after (P - M) / rho for the calls' prompt total P whatever the order, and the last
   answer a fresh draw later; the greedy client in the calls' order reaches that. Where the rate
   rises, the e_k are a bound for each k and no single client's times (one that pauses before the
   rise reaches the last ones, which set the wall).

2. *An overload costs requests that no knowledge avoids.* A `share` q of the requests arriving
   before `until` are refused at random. Any client that gets A answers from requests sent before
   `until` sends, in expectation, A / (1 - q) of them (Wald's identity: each is refused with
   chance q independently of the client's choice to send it), so E[refusals] >= q / (1 - q) x
   E[A]. After `until` the bucket holds at most C tokens and refills at r, so the j-th answer
   from a request sent then is admitted at >= until + (j - C) / r, and E[wall] >= E[last
   admission] + the mean answer (the last admitted request's answer is a fresh draw). Together
   they give the least expected requests per answer at a given expected wall, and the converse
   (`overload_frontier`). The greedy client that sends exactly that many answers' worth before
   `until`, nothing in the last second before it, and then the rest as in 1, reaches the
   requests figure exactly and the wall figure up to the latency's tail: its figures are given
   beside the bounds (upper bounds on the best possible, not lower ones).

3. *What a client that is not told the limit must risk is the requests it sends before any reply
   can come back.* Nothing returns before min(latency[0], refusal[0]) after a send; of k requests
   written in that blind time tau, at most C + r * tau are admitted (`blind_refusals`). That is a
   bound on a client's design (how much it sends before it reads), not on every client: a client
   told the limit avoids it entirely, and where refusals come back in milliseconds it costs about
   nothing. The bounds in 1 and 2 hold for any client, told or not.

Every figure is a ratio to `pool_simulation.ideal_seconds` (benchmarks.limits' ideal).
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tests.support.pool_simulation import Profile, _kind, _Simulation, ideal_seconds

TARGET = 1.15


def earliest_admissions(profile: Profile) -> list[float] | None:
    """e_k, the earliest time any client can have its k-th admission (k = 1..calls), for the
    kinds where it does not depend on the answers (token bucket, moving bucket, windows), or
    None (concurrency limit, tokens per minute)."""
    kind = _kind(profile)
    calls, rate = profile.calls, profile.rate
    if kind in ("sliding", "fixed"):
        # `rate` per second from the start: the first `rate` at once, the next one second later.
        return [float((k - 1) // rate) for k in range(1, calls + 1)]
    if kind != "bucket":
        return None
    capacity = max(1.0, rate * profile.burst)
    times = []
    for k in range(1, calls + 1):
        due = max(0.0, (k - capacity) / rate)
        if profile.limit_after is not None and due > profile.limit_after[0]:
            moved_at, new_rate = profile.limit_after
            # By the move at most C + r * T are admitted. The bucket is refilled lazily, at the
            # rate in force at the next request: a client idle for C' / r' before a rise finds
            # the new bucket C' full at the move, having given up only r * C' / r' of the old
            # rate's tokens. So at most C + r T + gain by the move, then r' a second.
            moved_capacity = max(1.0, new_rate * profile.burst)
            gain = max(0.0, moved_capacity * (1 - rate / new_rate))
            beyond = k - capacity - rate * moved_at - gain
            due = moved_at + max(0.0, beyond / new_rate)
        times.append(due)
    return times


def _uniform_cdf(low: float, high: float) -> Callable[[float], float]:
    return lambda x: min(1.0, max(0.0, (x - low) / (high - low)))


def best_wall_probability(
    admissions: Sequence[float], latency: tuple[float, float], wall: float
) -> float:
    """P(max_k (e_k + l_k) <= wall): exact, for admission times (ascending) that do not depend on
    the draws. Those admitted a whole latency range before `wall` are answered by then."""
    cdf = _uniform_cdf(*latency)
    log_p = 0.0
    for due in admissions[bisect.bisect_right(admissions, wall - latency[1]) :]:
        share = cdf(wall - due)
        if share <= 0.0:
            return 0.0
        log_p += math.log(share)
    return math.exp(log_p)


def best_wall_mean(
    admissions: Sequence[float], latency: tuple[float, float], steps: int = 2000
) -> float:
    """E[max_k (e_k + l_k)], integrating the exact distribution (midpoint rule)."""
    low = max(admissions) + latency[0]
    high = max(admissions) + latency[1]
    width = (high - low) / steps
    tail = sum(
        1.0 - best_wall_probability(admissions, latency, low + (i + 0.5) * width)
        for i in range(steps)
    )
    return low + tail * width


def best_walls(profile: Profile, samples: int, seed: int = 0) -> list[float]:
    """Walls (seconds) of the greedy client that knows the limit, one per sample of the draws:
    each request admitted at the earliest time the limit and `abatch`'s concurrency allow
    (fact 1), never refused. All processes are pooled into one (a relaxation: a lower bound)."""
    draw = random.Random(seed)
    walls = []
    for _ in range(samples):
        walls.append(max(answered for _, answered, _ in greedy_schedule(profile, draw)))
    return walls


def greedy_schedule(profile: Profile, draw: random.Random) -> list[tuple[float, float, float]]:
    """One run of the greedy client of fact 1: (admitted at, answered at, prompt tokens) per
    call, in the order admitted."""
    kind = _kind(profile)
    in_flight = profile.concurrency * profile.processes
    if kind == "concurrency":
        in_flight = min(in_flight, profile.concurrency_limit or in_flight)
    fixed = earliest_admissions(profile)
    prompt_total = 0.0
    schedule: list[tuple[float, float, float]] = []
    answers: list[float] = []  # answer times of the requests in flight (a heap)
    for k in range(profile.calls):
        due = 0.0 if fixed is None else fixed[k]
        prompt = 0.0
        if kind == "tokens" and profile.tokens_per_minute:
            per_minute = profile.tokens_per_minute
            prompt = draw.uniform(*profile.prompt_tokens)
            prompt_total += prompt
            due = max(0.0, (prompt_total - per_minute) / (per_minute / 60))
        if len(answers) >= in_flight:
            due = max(due, heapq.heappop(answers))  # the earliest answer frees a place
        if kind in ("sliding", "fixed") and k >= profile.rate:
            earlier = schedule[k - int(profile.rate)][0]  # s_k >= s_(k-r) + 1, or its second's end
            due = max(due, earlier + 1.0 if kind == "sliding" else math.floor(earlier) + 1.0)
        answered = due + draw.uniform(*profile.latency)
        heapq.heappush(answers, answered)
        schedule.append((due, answered, prompt))
    return schedule


@dataclass(frozen=True)
class Frontier:
    """An overload profile's trade between requests per answer and wall (ratios to the ideal),
    in expectation. `*_bound` are lower bounds for any client; `*_reached` what the greedy
    client of fact 2 reaches (upper bounds on the best)."""

    rpa_at_target_wall_bound: float
    rpa_at_target_wall_reached: float
    wall_at_target_rpa_bound: float
    wall_at_target_rpa_reached: float
    answers_after: int  # what the greedy client leaves until the overload ends, at the target wall


def overload_frontier(profile: Profile) -> Frontier:
    """Fact 2 on a token bucket overloaded until `overload.until` (the bucket full there)."""
    overload = profile.overload
    calls, rate = profile.calls, profile.rate
    if overload is None or _kind(profile) != "bucket" or profile.limit_after is not None:
        raise ValueError("an overload frontier is for an overloaded token bucket that stays put")
    if calls < rate * overload.until:
        # Else all could be answered before `until`, and the wall bound below would not hold.
        raise ValueError(
            "an overload frontier needs more calls than the rate admits before it ends"
        )
    ideal = ideal_seconds(profile)
    capacity = max(1.0, rate * profile.burst)
    mean_answer = sum(profile.latency) / 2
    per_answer = overload.share / (1 - overload.share)  # refusals per answer before `until`

    def rpa(after: float) -> float:  # answers from requests sent after `until`
        return 1 + per_answer * (calls - after) / calls

    def post_admissions(after: int) -> list[float]:
        return [overload.until + max(0.0, (j - capacity) / rate) for j in range(1, after + 1)]

    # At E[wall] <= 1.15 x ideal, E[answers after] <= C + r (wall - until - mean answer).
    wall = TARGET * ideal
    most_after = min(calls, capacity + rate * max(0.0, wall - overload.until - mean_answer))
    reached_after = _most(
        lambda a: best_wall_mean(post_admissions(a), profile.latency) <= wall, int(most_after)
    )
    # At E[requests per answer] <= 1.15, E[answers before] <= 0.15 x calls / per_answer.
    least_after = calls - (TARGET - 1) * calls / per_answer
    if least_after > 0:
        last = overload.until + max(0.0, (least_after - capacity) / rate)
        reached = best_wall_mean(post_admissions(math.ceil(least_after)), profile.latency)
        wall_bound = (last + mean_answer) / ideal
    else:  # the requests target allows every answer before `until`: fact 1's wall
        admissions = earliest_admissions(profile)
        assert admissions is not None
        reached = best_wall_mean(admissions, profile.latency)
        wall_bound = reached / ideal
    return Frontier(
        rpa_at_target_wall_bound=rpa(most_after),
        rpa_at_target_wall_reached=rpa(reached_after),
        wall_at_target_rpa_bound=wall_bound,
        wall_at_target_rpa_reached=reached / ideal,
        answers_after=reached_after,
    )


def overload_chance_of_both(profile: Profile) -> float:
    """An upper bound on the chance that ANY client meets both targets in one run of an overload
    profile. A run whose wall is within 1.15 x ideal has its last answer no sooner than the
    shortest answer after its last admission, so at most C + r (wall - until - latency[0]) of its
    answers come from requests sent after the overload; the other s it got from requests sent
    before, and before its s-th such answer it met the refusals of an i.i.d. sequence of coins
    (each refused with chance q), a negative binomial count F whatever it chose. Meeting the
    requests target needs F <= 0.15 x calls: P(F <= that), summed exactly."""
    overload = profile.overload
    if overload is None:
        raise ValueError("a chance of both targets under an overload needs an overloaded profile")
    capacity = max(1.0, profile.rate * profile.burst)
    wall = TARGET * ideal_seconds(profile)
    after = math.floor(capacity + profile.rate * (wall - overload.until - profile.latency[0]))
    before = profile.calls - max(0, after)  # answers from requests sent before the end
    spare = math.floor((TARGET - 1) * profile.calls + 1e-9)  # refusals the target allows
    q = overload.share
    return sum(
        math.exp(
            math.lgamma(before + f)
            - math.lgamma(before)
            - math.lgamma(f + 1)
            + before * math.log(1 - q)
            + f * math.log(q)
        )
        for f in range(spare + 1)
    )


def overload_oracle(profile: Profile, answers_after: int, seed: int) -> tuple[float, float]:
    """Fact 2's greedy client run on the simulation's own gateway (its overload draw, bucket and
    answer times): (wall / ideal, requests per answer), every call answered in at most three
    tries. Until the overload ends it spends each token as it comes on a call, tried again at
    once when the overload refuses it (a call refused twice keeps its third try for after),
    until `calls - answers_after` answers; it leaves the bucket alone for its last `burst`
    seconds, so that it is full when the overload ends, then sends the rest at the bucket's pace.
    An upper bound on the best possible."""
    overload = profile.overload
    if overload is None:
        raise ValueError("an overload oracle needs an overloaded profile")
    sim = _Simulation(profile, seed)
    capacity = max(1.0, profile.rate * profile.burst)
    requests, wall, answered, now = 0, 0.0, 0, 0.0

    def admit(at: float) -> None:
        nonlocal wall
        if sim.gateway_take(at * (1 + 1e-9) + 1e-9) != 0:  # a hair late: float refills fall short
            raise AssertionError("the oracle asked before its token")
        wall = max(wall, at + sim.random.uniform(*profile.latency))

    def next_token(after: float) -> float:  # the bucket's own arithmetic, as a client can keep it
        held = min(capacity, sim.tokens + max(0.0, after - sim.stamp) * profile.rate)
        return after + max(0.0, 1 - held) / profile.rate

    while answered < profile.calls - answers_after:
        now = next_token(now)
        if now > overload.until - profile.burst:
            break  # the rest after the overload
        for _try in range(2):
            requests += 1
            if sim.overloaded(now) is None:
                admit(now)
                answered += 1
                break
            now += sim.random.uniform(*profile.refusal)  # the refusal's way back
    for j in range(1, profile.calls - answered + 1):
        requests += 1
        now = overload.until + max(0.0, (j - capacity) / profile.rate)
        if sim.overloaded(now) is not None:
            raise AssertionError("the overload outlasted its end")
        admit(now)
    return wall / ideal_seconds(profile), requests / profile.calls


def _most(holds: Callable[[int], bool], high: int) -> int:
    """The largest a in [0, high] with holds(a), for a `holds` true up to some a and false after."""
    low = 0
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if holds(middle) else (low, middle - 1)
    return low


def blind_refusals(profile: Profile, written: int, over: float) -> float:
    """The least refusals of `written` requests reaching a token bucket within `over` seconds of
    the start (fact 3: a client that writes them before it reads any reply)."""
    capacity = max(1.0, profile.rate * profile.burst)
    return max(0.0, written - capacity - profile.rate * over)


def blind_seconds(profile: Profile) -> float:
    """How long after its first send a client hears nothing at all (fact 3)."""
    return min(profile.latency[0], profile.refusal[0])


@dataclass(frozen=True)
class Bounds:
    """One profile: the best client's wall / ideal and its chance per run of meeting the wall
    target, with one request per answer where there is no overload (exact where the admission
    times are fixed, else sampled from `samples` runs of the greedy client), and the overload's
    trade (`frontier`). The exact figures leave out `abatch`'s concurrency: a lower bound, equal
    to the best client's where that never binds: sampled with it, the greedy client comes within
    0.002 of them on every fixed-times profile of the catalogue but "20/s rising to 1,000/s at 3
    s", where 256 calls in flight hold back the 1,000 tokens of the rise (0.94, not 0.89)."""

    best_wall: float
    meets_wall: float
    exact: bool
    frontier: Frontier | None = None

    @property
    def feasible(self) -> bool:
        """Both targets in reach of the best client, in expectation."""
        if self.frontier is not None:
            return self.frontier.rpa_at_target_wall_bound <= TARGET
        return self.best_wall <= TARGET


def bounds(profile: Profile, samples: int = 200, seed: int = 0) -> Bounds:
    ideal = ideal_seconds(profile)
    frontier = overload_frontier(profile) if profile.overload is not None else None
    admissions = earliest_admissions(profile)
    if admissions is not None:  # exact; `abatch`'s concurrency left out (a lower bound)
        return Bounds(
            best_wall=best_wall_mean(admissions, profile.latency) / ideal,
            meets_wall=best_wall_probability(admissions, profile.latency, TARGET * ideal),
            exact=True,
            frontier=frontier,
        )
    walls = [wall / ideal for wall in best_walls(profile, samples, seed)]
    return Bounds(
        best_wall=sum(walls) / len(walls),
        meets_wall=sum(wall <= TARGET for wall in walls) / len(walls),
        exact=False,
        frontier=frontier,
    )


def table(misses: dict[str, tuple[float, float]], samples: int = 2000) -> str:
    """docs/benchmarks.md's "What no client can do" rows, for the profiles that miss a target
    (`misses`: name -> the controller's worst wall / ideal and requests per answer)."""
    from tests.support.rate_catalog import ALL

    rows = [
        "| profile | both targets in reach? | least requests/answer at wall <= 1.15 | "
        "least wall / ideal at <= 1.15 requests/answer | controller now (wall, req/answer) |",
        "|---|---|---|---|---|",
    ]
    for name, (wall, rpa) in misses.items():
        found = bounds(ALL[name], samples=samples)
        how = "exact" if found.exact else f"{samples} samples"
        if found.frontier is not None:
            front = found.frontier
            reach = f"no (P <= {overload_chance_of_both(ALL[name]):.0e} a run)"
            least_rpa = f">= {front.rpa_at_target_wall_bound:.3f} (reached {front.rpa_at_target_wall_reached:.3f})"
            least_wall = f">= {front.wall_at_target_rpa_bound:.3f} (reached {front.wall_at_target_rpa_reached:.3f})"
        elif found.feasible:
            reach = f"yes (P {found.meets_wall:.3f} a run, {how})"
            least_rpa, least_wall = "1.00", f"{found.best_wall:.3f}"
        else:
            reach = f"no (P {found.meets_wall:.4f} a run, {how})"
            least_rpa, least_wall = "none: no rate of requests reaches it", f"{found.best_wall:.3f}"
        rows.append(f"| {name} | {reach} | {least_rpa} | {least_wall} | {wall:.2f}, {rpa:.2f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    from tests.unit_tests.http.limits.test_rate_profiles import MISSES

    print(table(MISSES))
