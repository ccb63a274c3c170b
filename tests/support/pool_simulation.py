"""A discrete-event simulation of pools paced by `Pacer` against one token-bucket gateway.

Nothing sleeps: time is the simulation's own, events run in time order. Each pool (one per
simulated client process) keeps calls in a FIFO by first arrival, sends the head when its pacer
gives the turn (and at most one send per `send_cost` seconds: a client spends CPU per request),
and re-queues a call answered 429 at its place after the call's own `Retry-After`. The gateway
admits `rate` requests/s with a bucket of `burst` seconds' worth, answers 429 after `rtt` and an
admitted call after a uniform draw from `latency`. A call fails when it meets more than `retries`
429s while its pool had no answer within `SERVING_WINDOW` (the pool's rule for a free re-queue);
such a 429 without `Retry-After` backs off as the transport does (`retry.backoff_delay`).

`run` returns wall time / ideal (ideal = calls beyond the burst / rate + one mean answer, as the
issue measures), requests per answer, and failed calls.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_kimi._http.pool.admission import SERVING_WINDOW
from langchain_kimi._http.pool.pacer import Pacer
from langchain_kimi._http.retry import backoff_delay


@dataclass(frozen=True)
class Profile:
    rate: float
    burst: float = 1.0
    latency: tuple[float, float] = (0.05, 0.25)
    retry_after: str = "integer"  # integer | fraction | absent | zero | negative | date
    calls: int = 400
    concurrency: int = 256
    processes: int = 1
    retries: int = 2
    rtt: float = 0.001
    send_cost: float = 0.0004
    limit_after: tuple[float, float] | None = None  # (time, new rate): the limit moves


@dataclass(frozen=True)
class Result:
    wall_over_ideal: float
    requests_per_answer: float
    failed: int
    pacers: list[Pacer] = field(repr=False)
    end: float = 0.0


def header_seconds(form: str, wait: float, now: float, rtt: float) -> float | None:
    """What the call reads from the 429's Retry-After, for a gateway whose next token is `wait`
    seconds away."""
    if form == "integer":
        return float(max(1, math.ceil(wait)))
    if form == "fraction":
        return wait
    if form == "zero":
        return 0.0
    if form == "negative":
        return 0.0  # the client reads a negative delay as "now" (`retry_after_seconds`)
    if form == "date":  # one-second resolution, read on arrival
        return max(0.0, math.floor(now + wait) + 1 - (now + rtt))
    return None


class _Simulation:
    def __init__(self, profile: Profile, seed: int) -> None:
        self.p = profile
        self.random = random.Random(seed)
        self.events: list[tuple[float, int, Callable[..., None], tuple[Any, ...]]] = []
        self.order = itertools.count()
        self.rate = profile.rate
        self.tokens = profile.rate * profile.burst
        self.stamp = 0.0
        self.requests = self.answers = self.failed = 0
        self.end = 0.0
        share = profile.calls // profile.processes
        self.pools = [_Pool(share) for _ in range(profile.processes)]

    def at(self, when: float, action: Callable[..., None], *args: Any) -> None:
        heapq.heappush(self.events, (when, next(self.order), action, args))

    def gateway_take(self, now: float) -> float:
        if self.p.limit_after and now >= self.p.limit_after[0]:
            self.rate = self.p.limit_after[1]
        capacity = max(1.0, self.rate * self.p.burst)
        self.tokens = min(capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate

    def run(self) -> None:
        for pool in self.pools:
            self.start_calls(pool, 0.0)
        while self.events:
            when, _, action, args = heapq.heappop(self.events)
            action(*args, when)

    def start_calls(self, pool: _Pool, now: float) -> None:
        while pool.running < self.p.concurrency and pool.started < pool.calls:
            pool.started += 1
            pool.running += 1
            bisect.insort(pool.queue, _Call(next(self.order)), key=lambda c: c.ticket)
        self.dispatch(pool, now)

    def dispatch(self, pool: _Pool, now: float) -> None:
        while pool.queue:
            wait = max(pool.pacer.delay(now), pool.busy_until - now)
            if wait > 0:
                if pool.wake_at is None or pool.wake_at > now + wait or pool.wake_at < now:
                    pool.wake_at = now + wait
                    self.at(now + wait, self.woken, pool)
                return
            call = pool.queue.pop(0)
            pool.busy_until = now + self.p.send_cost
            pool.pacer.sent(now)
            call.sent_at = now
            self.requests += 1
            next_token = self.gateway_take(now)
            if next_token == 0:
                self.at(now + self.random.uniform(*self.p.latency), self.answered, pool)
            else:
                seconds = header_seconds(self.p.retry_after, next_token, now, self.p.rtt)
                self.at(now + self.p.rtt, self.throttled, pool, call, seconds)

    def woken(self, pool: _Pool, now: float) -> None:
        pool.wake_at = None
        self.dispatch(pool, now)

    def answered(self, pool: _Pool, now: float) -> None:
        pool.answered_at = now
        pool.running -= 1
        self.answers += 1
        self.end = max(self.end, now)
        self.start_calls(pool, now)

    def throttled(self, pool: _Pool, call: _Call, seconds: float | None, now: float) -> None:
        pool.pacer.throttled(call.sent_at, now)
        wait = seconds or 0.0
        if now - pool.answered_at >= SERVING_WINDOW:  # a retry spent, backing off as shipped
            call.spent += 1
            if call.spent > self.p.retries:
                self.failed += 1
                pool.running -= 1
                self.end = max(self.end, now)
                self.start_calls(pool, now)
                return
            if seconds is None:
                wait = backoff_delay(call.spent - 1, jitter=self.random.uniform)
        self.at(now + wait, self.requeue, pool, call)
        self.dispatch(pool, now)

    def requeue(self, pool: _Pool, call: _Call, now: float) -> None:
        bisect.insort(pool.queue, call, key=lambda c: c.ticket)
        self.dispatch(pool, now)


@dataclass
class _Call:
    ticket: int
    sent_at: float = 0.0
    spent: int = 0


@dataclass
class _Pool:
    calls: int
    pacer: Pacer = field(default_factory=Pacer)
    queue: list[_Call] = field(default_factory=list)
    started: int = 0
    running: int = 0
    busy_until: float = 0.0
    wake_at: float | None = None
    answered_at: float = float("-inf")


def run(profile: Profile, seed: int = 0) -> Result:
    sim = _Simulation(profile, seed)
    sim.run()
    beyond_burst = max(0.0, profile.calls - profile.rate * profile.burst)
    ideal = beyond_burst / profile.rate + sum(profile.latency) / 2
    return Result(
        wall_over_ideal=sim.end / ideal,
        requests_per_answer=sim.requests / max(1, sim.answers),
        failed=sim.failed,
        pacers=[pool.pacer for pool in sim.pools],
        end=sim.end,
    )
