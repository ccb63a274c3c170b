"""A discrete-event simulation of the shipped pools against one token-bucket gateway.

Nothing sleeps: time is the simulation's own, events run in time order. What is simulated is only
the outside world; the client side is the shipped code itself, driven as the transport drives it
(`_http/_async/exchange.py`): each call takes its turns through `Admission` (`AdmittedCall._turns`,
the queue, the in-flight capacity, the pacer, the pool timeout), reports each attempt's outcome
on its `Permit`, and after a 429 asks `RetryPlan.after` (with the pool's free re-queue rule) what
to do next. One `Admission` per simulated client process, all
behind one gateway (several processes sharing one key).

The world varies as real gateways and clients do:

- the gateway admits `rate` requests/s with a bucket of `burst` seconds' worth (the limit may move
  at `limit_after`), answers an admitted call after a uniform draw from `latency`, and refuses
  with 429 after a draw from `refusal` seconds, with `Retry-After` in the form `retry_after` names;
- a client process writes one request per `send_cost` seconds and, like an event loop, reads no
  response while it is writing a batch of granted requests (asyncio runs every ready task before
  it polls the sockets): 256 calls granted at once are all sent before the first 429 is read;
- calls arrive as `abatch` sends them: `concurrency` at a time per process, the next one when one
  ends.

`run` returns wall time / ideal (ideal = calls beyond the burst / rate + one mean answer, as issue
20 measures), requests per answer, and failed calls.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

from langchain_kimi._errors import KimiError, KimiRateLimitError
from langchain_kimi._http.limits.admission import Admission, Permit, _Wait, _Waiter
from langchain_kimi._http.limits.controller import Paced
from langchain_kimi._http.limits.outcome import ANSWERED, outcome_of
from langchain_kimi._http.limits.pacer import Pacer
from langchain_kimi._http.limits.retry import Failure, RetryPlan
from langchain_kimi._http.pool.shared import CAPACITY, MAX_IN_FLIGHT


@dataclass(frozen=True)
class Profile:
    rate: float
    burst: float = 1.0
    latency: tuple[float, float] = (0.05, 0.25)
    retry_after: str = "integer"  # integer | fraction | absent | zero | negative | date | huge
    calls: int = 400
    concurrency: int = 256
    processes: int = 1
    retries: int = 2  # ChatKimi's default max_retries
    refusal: tuple[float, float] = (0.001, 0.003)  # how long a 429 takes to come back
    send_cost: float = 0.0004
    limit_after: tuple[float, float] | None = None  # (time, new rate): the limit moves
    fixed_window: bool = False  # `rate` per whole second (a counter reset each second), no bucket
    pool_timeout: float | None = 900.0  # the shipped httpx.Timeout.pool
    capacity: int = CAPACITY


@dataclass(frozen=True)
class Result:
    wall_over_ideal: float
    requests_per_answer: float
    failed: int
    pacers: list[Pacer] = field(repr=False)
    admissions: list[Admission] = field(repr=False)
    end: float = 0.0
    errors: list[str] = field(default_factory=list, repr=False)


def header_seconds(form: str, wait: float, now: float) -> float | None:
    """What the client reads from the 429's `Retry-After` (as `retry.retry_after_seconds` parses
    it), for a gateway whose next token is `wait` seconds away at `now`."""
    if form == "integer":
        return float(max(1, math.ceil(wait)))
    if form == "fraction":
        return round(wait, 3)
    if form in ("zero", "negative"):
        return 0.0  # a negative delay reads as "now" (`retry_after_seconds`)
    if form == "date":  # one-second resolution: the whole second after the token is due
        return max(0.0, math.floor(now + wait) + 1 - now)
    if form == "huge":
        return 3600.0
    return None


class _SimWaiter(_Waiter):
    """A queued call whose wake-up is an event of the simulation."""

    __slots__ = ("on_wake",)

    def __init__(self, ticket: int, on_wake: Callable[[], None]) -> None:
        super().__init__(ticket, None)
        self.on_wake = on_wake

    def wake(self) -> None:
        self.on_wake()


class _Process:
    """One client process: its pool's admission, and its event loop's writing."""

    def __init__(self, sim: _Simulation, calls: int) -> None:
        self.sim = sim
        self.calls = calls
        self.started = 0
        self.ended = 0
        self.busy_until = 0.0
        self.admission = Admission(
            sim.p.capacity, adaptive=True, clock=lambda: sim.now, max_capacity=MAX_IN_FLIGHT
        )

    def start_calls(self) -> None:
        while self.started < self.calls and self.started - self.ended < self.sim.p.concurrency:
            self.started += 1
            _Call(self).enter()

    def deliver(self, action: Callable[[], None]) -> None:
        """A response arrives: read once the loop is done writing the current batch."""
        self.sim.at(max(self.sim.now, self.busy_until), action)

    def write(self) -> float:
        """One granted request is written; returns when it reaches the gateway."""
        start = max(self.sim.now, self.busy_until)
        self.busy_until = start + self.sim.p.send_cost
        return self.busy_until


class _Call:
    """One `ainvoke`, as `exchange._arun` runs it."""

    def __init__(self, process: _Process) -> None:
        sim = process.sim
        self.process = process
        self.sim = sim
        self.plan = RetryPlan(
            ["gateway"], sim.p.retries, budget=sim.p.pool_timeout, jitter=sim.random.uniform
        )
        self.admitted = process.admission.call(sim.p.pool_timeout)
        self.turns: Generator[_Wait, None, Permit] | None = None
        self.version = 0  # a resume scheduled for an older wait is stale
        self.sleeping = False  # a timed wait (paced turn, cool-down) is a plain sleep: no wake

    def enter(self) -> None:
        waiter = _SimWaiter(self.admitted._ticket, self._woken)
        self.turns = self.admitted._turns(waiter)
        self._resume()

    def _woken(self) -> None:
        if self.sleeping:
            return
        self.version += 1
        version = self.version
        self.sim.at(self.sim.now, lambda: self._resume_if(version))

    def _resume_if(self, version: int) -> None:
        if version == self.version:
            self._resume()

    def _resume(self) -> None:
        assert self.turns is not None
        self.version += 1
        version = self.version
        try:
            wait = next(self.turns)
        except StopIteration as granted:
            self._send(granted.value)
            return
        except KimiError as error:  # the pool timeout: the call fails, nothing sent
            self._end(failed=f"{type(error).__name__}: {error}")
            return
        self.sleeping = wait.timed
        if wait.seconds is not None:
            self.sim.at(self.sim.now + wait.seconds, lambda: self._resume_if(version))

    def _send(self, permit: Permit) -> None:
        sim = self.sim
        arrives = self.process.write()
        sim.requests += 1
        wait = sim.gateway_take(arrives)
        if wait == 0:
            done = arrives + sim.random.uniform(*sim.p.latency)
            sim.at(done, lambda: self.process.deliver(lambda: self._answered(permit)))
        else:
            seconds = header_seconds(sim.p.retry_after, wait, arrives)
            done = arrives + sim.random.uniform(*sim.p.refusal)
            sim.at(done, lambda: self.process.deliver(lambda: self._throttled(permit, seconds)))

    def _answered(self, permit: Permit) -> None:
        permit.done(ANSWERED)
        self.sim.answers += 1
        self._end()

    def _throttled(self, permit: Permit, seconds: float | None) -> None:
        error = KimiRateLimitError("429: slow down", status_code=429)
        failure = Failure(error=error, retryable=True, fallback=False, retry_after=seconds)
        permit.done(outcome_of(failure))
        delay = self.plan.after(failure, requeue=self.admitted.requeues(failure))
        if delay is failure.error:
            self._end(failed=f"gave up after {self.plan.attempt} retries")
            return
        if isinstance(delay, KimiError):
            self._end(failed=str(delay))
            return
        self.sim.at(self.sim.now + delay, self.enter)

    def _end(self, failed: str | None = None) -> None:
        sim = self.sim
        if failed is not None:
            sim.errors.append(failed)
        sim.end = max(sim.end, sim.now)
        self.process.ended += 1
        self.process.start_calls()


class _Simulation:
    def __init__(self, profile: Profile, seed: int) -> None:
        self.p = profile
        self.random = random.Random(seed)
        self.now = 0.0
        self.events: list[tuple[float, int, Callable[[], None]]] = []
        self.order = itertools.count()
        self.rate = profile.rate
        self.tokens = max(1.0, profile.rate * profile.burst)
        self.stamp = 0.0
        self.window_second, self.window_count = -1, 0
        self.requests = self.answers = 0
        self.errors: list[str] = []
        self.end = 0.0
        share = profile.calls // profile.processes
        self.processes = [_Process(self, share) for _ in range(profile.processes)]

    def at(self, when: float, action: Callable[[], None]) -> None:
        heapq.heappush(self.events, (max(when, self.now), next(self.order), action))

    def gateway_take(self, now: float) -> float:
        """0 when the request arriving at `now` is admitted, else seconds to the next token."""
        if self.p.limit_after and now >= self.p.limit_after[0]:
            self.rate = self.p.limit_after[1]
        if self.p.fixed_window:
            return self._window_take(now)
        capacity = max(1.0, self.rate * self.p.burst)
        self.tokens = min(capacity, self.tokens + max(0.0, now - self.stamp) * self.rate)
        self.stamp = max(self.stamp, now)
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate

    def _window_take(self, now: float) -> float:
        second = math.floor(now)
        if second != self.window_second:
            self.window_second, self.window_count = second, 0
        if self.window_count < self.rate:
            self.window_count += 1
            return 0.0
        return second + 1 - now

    def run(self, horizon: float) -> None:
        for process in self.processes:
            process.start_calls()
        while self.events and any(p.ended < p.calls for p in self.processes):
            when, _, action = heapq.heappop(self.events)
            if when > horizon:
                self.errors.append(f"still running at {horizon:g}s (simulated)")
                return
            self.now = when
            action()


def ideal_seconds(profile: Profile) -> float:
    beyond_burst = max(0.0, profile.calls - profile.rate * profile.burst)
    return beyond_burst / profile.rate + sum(profile.latency) / 2


def _pacer(admission: Admission) -> Pacer:
    assert isinstance(admission.controller, Paced)
    return admission.controller.pacer


def run(profile: Profile, seed: int = 0) -> Result:
    sim = _Simulation(profile, seed)
    ideal = ideal_seconds(profile)
    sim.run(horizon=50 * ideal + 60)
    admissions = [process.admission for process in sim.processes]
    return Result(
        wall_over_ideal=sim.end / ideal,
        requests_per_answer=sim.requests / max(1, sim.answers),
        failed=len(sim.errors),
        pacers=[_pacer(admission) for admission in admissions],
        admissions=admissions,
        end=sim.end,
        errors=sim.errors,
    )
