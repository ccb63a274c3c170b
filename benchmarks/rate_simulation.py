"""A discrete-event simulation of the shipped rate policy against one rate-limited gateway.

Nothing sleeps: time is the simulation's own, events run in time order. Only the outside world
is simulated; the client side is the shipped code, driven as the transport drives it
(`_http/_async/exchange.py`): each attempt of a call takes its turn through the key's `Gate`
(`Gate.turns`, with the call's ticket and its deadline), each outcome is reported as `report`
reports it, and after a failed attempt `RetryPlan.after` says what to do. One `Gate` per simulated
client process, all behind one gateway (several processes sharing one key).

The world varies as real gateways and clients do:

- the gateway admits `rate` requests/s with a bucket of `burst` seconds' worth (the limit may move
  at `limit_after`), answers an admitted call after a uniform draw from `latency`, and refuses
  with 429 after a draw from `refusal` seconds, with `Retry-After` in the form `retry_after` names;
- or it limits otherwise (the client is never told which): `rate` per whole second
  (`fixed_window`) or per trailing second (`sliding_window`), at most `concurrency_limit`
  requests in flight, `tokens_per_minute` (prompts drawn from `prompt_tokens`); and it may be
  overloaded (`overload`: a share of the requests refused with a 503 or 529, with or without
  `Retry-After: 1`, until some time) whatever its limit; the kinds are `benchmarks.limits`'
  classes, the loopback gateway's own;
- a client process writes one request per `send_cost` seconds and, like an event loop, reads no
  response while it is writing (asyncio runs every ready task before it polls the sockets);
- calls arrive as `abatch` sends them: `concurrency` at a time per process, the next one when one
  ends.

`run` returns wall time / ideal (ideal: `benchmarks.limits.ideal_seconds`, a bound no client
beats), requests per answer, and the calls lost (with why).
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

from benchmarks import limits
from langchain_kimi import ChatKimi
from langchain_kimi._errors import KimiAPIError, KimiError, KimiRateLimitError
from langchain_kimi._http.exchange import JsonReply, report
from langchain_kimi._http.limits.gate import Gate, TurnTooLateError, Wait, Waiter
from langchain_kimi._http.limits.rate import Sent
from langchain_kimi._http.limits.retry import Failure, RetryPlan
from langchain_kimi._settings import DEFAULT_TIMEOUT

RATE_LIMIT_TIMEOUT: float = ChatKimi.model_fields["rate_limit_timeout"].default
POOL_TIMEOUT: float | None = DEFAULT_TIMEOUT.pool
MAX_RETRIES: int = ChatKimi.model_fields["max_retries"].default


@dataclass(frozen=True)
class Overload:
    """`share` of the requests arriving before `until` are refused with `status` (503, or 529
    `overloaded_error` on Messages), saying `Retry-After: 1` or nothing."""

    share: float = 0.3
    until: float = 10.0
    status: int = 503
    retry_after: bool = True


@dataclass(frozen=True)
class Profile:
    rate: float
    burst: float = 1.0
    latency: tuple[float, float] = (0.05, 0.25)
    retry_after: str = "integer"  # integer | fraction | absent | zero | negative | date | huge
    calls: int = 400
    concurrency: int = 256
    processes: int = 1
    refusal: tuple[float, float] = (0.001, 0.003)  # how long a 429 takes to come back
    send_cost: float = 0.0004
    limit_after: tuple[float, float] | None = None  # (time, new rate): the limit moves
    fixed_window: bool = False  # `rate` per whole second (a counter reset each second), no bucket
    window: float = 1.0  # a fixed window's length: `rate` x `window` requests in each
    sliding_window: bool = False  # `rate` in any trailing second (a log of admitted sends)
    concurrency_limit: int | None = None  # requests in flight at the gateway (429 beyond)
    tokens_per_minute: float | None = None  # a bucket of one minute's tokens, refilled steadily
    prompt_tokens: tuple[float, float] = (5_000, 15_000)  # each call's size (with a token limit)
    overload: Overload | None = None  # random 503/529 refusals, whatever the limit
    max_retries: int = MAX_RETRIES
    rate_limit_timeout: float = RATE_LIMIT_TIMEOUT
    pool_timeout: float | None = POOL_TIMEOUT  # bounds the waits for a turn
    adaptive: bool = True


@dataclass(frozen=True)
class Result:
    wall_over_ideal: float
    requests_per_answer: float
    errors: list[str] = field(repr=False)
    end: float = 0.0
    gates: list[Gate] = field(default_factory=list, repr=False)

    @property
    def failed(self) -> int:
        return len(self.errors)


def header_seconds(form: str, wait: float, now: float) -> float | None:
    """What the client reads from the 429's `Retry-After` (as `retry_after_seconds` parses it),
    for a gateway whose next token is `wait` seconds away at `now`."""
    if form == "integer":
        return float(max(1, math.ceil(wait)))
    if form == "fraction":
        return round(wait, 3)
    if form in ("zero", "negative"):
        return 0.0  # a negative delay reads as "now"
    if form == "date":  # one-second resolution: the whole second after the token is due
        return max(0.0, math.floor(now + wait) + 1 - now)
    if form == "huge":
        return 3600.0
    return None


class _Process:
    """One client process: its key's gate, and its event loop's writing."""

    def __init__(self, sim: _Simulation, calls: int) -> None:
        self.sim = sim
        self.calls = calls
        self.started = 0
        self.ended = 0
        self.busy_until = 0.0
        self.gate = Gate(lambda: sim.now, adaptive=sim.p.adaptive)

    def start_calls(self) -> None:
        while self.started < self.calls and self.started - self.ended < self.sim.p.concurrency:
            self.started += 1
            _Call(self).take_turn()

    def deliver(self, action: Callable[[], None]) -> None:
        """A response arrives: read once the loop is done writing."""
        self.sim.at(max(self.sim.now, self.busy_until), action)

    def write(self) -> float:
        """One request is written; returns when it reaches the gateway."""
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
            ["gateway"], sim.p.max_retries, sim.p.rate_limit_timeout, jitter=sim.random.uniform
        )
        self.ticket = process.gate.ticket()
        self.tokens = sim.random.uniform(*sim.p.prompt_tokens) if sim.p.tokens_per_minute else 0.0
        self.turns: Generator[Wait, None, Sent] | None = None
        self.waiter: Waiter | None = None
        self.version = 0  # a resume scheduled for an older wait is stale

    def take_turn(self) -> None:
        """`_aturn`: wait at the gate, at most the pool timeout."""
        self.waiter = _SimWaiter(self.ticket, self._woken)
        pool = self.sim.p.pool_timeout
        deadline = self.sim.now + (math.inf if pool is None else pool)
        self.turns = self.process.gate.turns(self.waiter, deadline)
        self._resume()

    def _woken(self) -> None:
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
        except TurnTooLateError as late:
            self._end(failed=f"no turn to send within the pool timeout (waited {late.waited:g}s)")
            return
        self.sim.at(self.sim.now + wait.seconds, lambda: self._resume_if(version))

    def _send(self, sent: Sent) -> None:
        sim = self.sim
        arrives = self.process.write()
        sim.requests += 1
        overloaded = sim.overloaded(arrives)
        if overloaded is not None:
            status, seconds = overloaded
            self._refuse_at(arrives, sent, status, seconds)
            return
        wait = sim.gateway_take(arrives, self.tokens)
        if wait == 0:
            done = arrives + sim.random.uniform(*sim.p.latency)
            sim.admitted(done)
            sim.at(done, lambda: self.process.deliver(lambda: self._answered(sent)))
        else:
            self._refuse_at(arrives, sent, 429, header_seconds(sim.p.retry_after, wait, arrives))

    def _refuse_at(self, arrives: float, sent: Sent, status: int, seconds: float | None) -> None:
        done = arrives + self.sim.random.uniform(*self.sim.p.refusal)
        refused = lambda: self._refused(sent, status, seconds)  # noqa: E731
        self.sim.at(done, lambda: self.process.deliver(refused))

    def _answered(self, sent: Sent) -> None:
        report(self.process.gate, sent, _ANSWER)
        self.sim.answers += 1
        self._end()

    def _refused(self, sent: Sent, status: int, seconds: float | None) -> None:
        error: KimiError = (
            KimiRateLimitError("429: slow down", status_code=429)
            if status == 429
            else KimiAPIError(f"{status}: overloaded", status_code=status)
        )
        failure = Failure(error=error, retryable=True, fallback=True, retry_after=seconds)
        report(self.process.gate, sent, failure)
        delay = self.plan.after(failure)
        if isinstance(delay, KimiError):
            self._end(failed=str(delay))
            return
        self.sim.at(self.sim.now + delay, self.take_turn)

    def _end(self, failed: str | None = None) -> None:
        sim = self.sim
        if failed is not None:
            sim.errors.append(failed)
        sim.end = max(sim.end, sim.now)
        self.process.ended += 1
        sim.at(sim.now, self.process.start_calls)


class _SimWaiter(Waiter):
    """A queued attempt whose wake-up is an event of the simulation."""

    __slots__ = ("on_wake",)

    def __init__(self, ticket: int, on_wake: Callable[[], None]) -> None:
        super().__init__(ticket)
        self.on_wake = on_wake

    def wake(self) -> None:
        self.on_wake()


_ANSWER = JsonReply({}, "gateway", None, 200)


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
        kind = _kind(profile)  # the token bucket stays here: its rate moves at `limit_after`
        self.limit = (
            None
            if kind == "bucket"
            else limits.limit_for(
                kind,
                rate=profile.rate,
                concurrency=profile.concurrency_limit or 0,
                tokens_per_minute=profile.tokens_per_minute or 0.0,
                window=profile.window,
            )
        )
        self.requests = self.answers = 0
        self.errors: list[str] = []
        self.end = 0.0
        share = profile.calls // profile.processes
        self.processes = [_Process(self, share) for _ in range(profile.processes)]

    def at(self, when: float, action: Callable[[], None]) -> None:
        heapq.heappush(self.events, (max(when, self.now), next(self.order), action))

    def overloaded(self, now: float) -> tuple[int, float | None] | None:
        """The status and Retry-After of an overload refusal at `now`, or None."""
        overload = self.p.overload
        if overload is None or now >= overload.until or self.random.random() >= overload.share:
            return None
        return overload.status, (1.0 if overload.retry_after else None)

    def admitted(self, answered_at: float) -> None:
        if self.limit is not None:
            self.limit.admitted(self.now, answered_at)

    def gateway_take(self, now: float, tokens: float = 0.0) -> float:
        """0 when the request arriving at `now` is admitted, else seconds to the next token."""
        if self.p.limit_after and now >= self.p.limit_after[0]:
            self.rate = self.p.limit_after[1]
        if self.limit is not None:
            return self.limit.take(now, tokens)
        capacity = max(1.0, self.rate * self.p.burst)
        self.tokens = min(capacity, self.tokens + max(0.0, now - self.stamp) * self.rate)
        self.stamp = max(self.stamp, now)
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate

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
    """What a client told the limit would take at best (`benchmarks.limits.ideal_seconds`)."""
    return limits.ideal_seconds(
        _kind(profile),
        calls=profile.calls,
        answer=sum(profile.latency) / 2,
        rate=profile.rate,
        burst=profile.burst,
        in_flight=min(profile.concurrency_limit or 1, profile.concurrency * profile.processes),
        prompt_tokens=sum(profile.prompt_tokens) / 2,
        tokens_per_minute=profile.tokens_per_minute or 0.0,
        moves=profile.limit_after,
        window=profile.window,
    )


def _kind(profile: Profile) -> str:
    """The `benchmarks.limits` kind of the profile's limit (the first that it sets)."""
    if profile.concurrency_limit is not None:
        return "concurrency"
    if profile.tokens_per_minute is not None:
        return "tokens"
    if profile.sliding_window:
        return "sliding"
    return "fixed" if profile.fixed_window else "bucket"


def run(profile: Profile, seed: int = 0) -> Result:
    """One run of `profile` on `seed`'s draws."""
    sim = _Simulation(profile, seed)
    ideal = ideal_seconds(profile)
    sim.run(horizon=2 * (profile.rate_limit_timeout + (profile.pool_timeout or 0)) + 50 * ideal)
    return Result(
        wall_over_ideal=sim.end / ideal,
        requests_per_answer=sim.requests / max(1, sim.answers),
        errors=sim.errors,
        end=sim.end,
        gates=[process.gate for process in sim.processes],
    )
