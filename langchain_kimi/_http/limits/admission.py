"""Admission to one (gateway, key): one fair queue in front of the connections, the in-flight
capacity, and the controller that paces it.

Every attempt of every call takes a `Permit` here before it is sent and gives it back when its
response is done (a stream: when it is closed). Shared by threads and by any number of event
loops through one lock:

- **One fair queue.** At most `capacity` requests are in flight, so httpcore's own queue stays
  empty: it rescans every queued request against every connection on each pool event, which made
  500 concurrent calls five times slower than 100. Beyond that, calls wait here in the order they
  first arrived: a call sent again after a 429 keeps its place. **Capacity follows slow
  answers**: while calls wait for a slot and the requests in flight (or the slots released
  lately: a moving average that the first release starts) have been out `slow_answer` seconds
  or more on average, it grows by `capacity_step`,
  up to `max_capacity` (`pool.spread` opens small connection pools as they fill): a gateway
  admitting 20 calls/s of 60 s answers needs 1,200 in flight.
- **The controller** (`controller.py`) says when the head of the queue may go and how many may
  be in flight (at most the capacity), learns from every outcome, and says whether a 429 only
  cost a call its turn (`AdmittedCall.requeues`). Only the
  head sleeps on a time (at most one turn, one spacing or one cool-down long); the others wait to
  be woken, so a cancelled call frees its place at once and nobody sleeps on a stale rate.

A call never waits here longer than its own pool timeout (`httpx.Timeout.pool`: the time it
accepts to wait for a connection); it fails with `KimiTimeoutError` instead.

The waiting itself is one generator (`AdmittedCall._turns`): the sync and async entries only
carry out the waits it asks for, so they cannot drift. An exception of any kind during a wait
(a timeout, a cancellation, a `KeyboardInterrupt`) closes the generator, which leaves the queue
and hands on a slot granted meanwhile.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import threading
from collections.abc import Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass

from langchain_kimi._errors import KimiError, KimiTimeoutError, class_for_status
from langchain_kimi._http.limits.controller import Controller, Paced, Unpaced
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import Outcome, outcome_of
from langchain_kimi._http.limits.retry import Failure

_EPSILON = 1e-9  # seconds: a wait due but for rounding is due


class _Waiter:
    """One queued call, woken from whichever thread changes the queue."""

    __slots__ = ("event", "future", "granted", "loop", "permit", "queued", "ticket")

    def __init__(self, ticket: int, loop: asyncio.AbstractEventLoop | None) -> None:
        self.ticket = ticket
        self.loop = loop
        self.granted = False
        self.queued = False
        self.permit: Permit | None = None
        self.event = threading.Event() if loop is None else None
        self.future: asyncio.Future[None] | None = None

    def arm(self) -> None:
        """Before polling: a wake from now on ends the next wait."""
        if self.event is not None:
            self.event.clear()
        else:
            assert self.loop is not None
            self.future = self.loop.create_future()

    def wake(self) -> None:
        if self.event is not None:
            self.event.set()
            return
        assert self.loop is not None
        with contextlib.suppress(RuntimeError):  # its loop was closed: nobody to wake
            self.loop.call_soon_threadsafe(self._resolve)

    def _resolve(self) -> None:
        if self.future is not None and not self.future.done():
            self.future.set_result(None)


@dataclass(frozen=True)
class _Wait:
    """What the turn generator asks its driver to do: sleep `seconds` (a paced turn or a
    cool-down), or wait at most `seconds` to be woken (None: no limit)."""

    seconds: float | None
    timed: bool


class Admission:
    """The queue, capacity and controller of one (gateway, key). Thread-safe; used by every loop."""

    def __init__(
        self,
        capacity: int,
        *,
        adaptive: bool,
        clock: Callable[[], float],
        max_capacity: int | None = None,
        can_fall_back: bool = False,
    ) -> None:
        self.clock = clock
        self.capacity = capacity
        self.capacity_step = capacity
        self.max_capacity = capacity if max_capacity is None else max_capacity
        self.controller: Controller = (
            Paced(self.max_capacity, can_fall_back=can_fall_back)
            if adaptive
            else Unpaced(self.max_capacity)
        )
        self._hold: float | None = None  # moving average of how long a slot is held
        self._sent_sum = 0.0  # the send times of the requests in flight, summed
        self._lock = threading.Lock()
        self._in_flight = 0
        self._resting = 0  # calls asleep between two attempts (`AdmittedCall.resting`)
        self._queue: list[_Waiter] = []  # ordered by ticket: first arrival first
        self._tickets = itertools.count()

    def __repr__(self) -> str:
        return (
            f"Admission(in_flight={self._in_flight}, queued={len(self._queue)}, rate={self.rate})"
        )

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def queued(self) -> int:
        return len(self._queue)

    @property
    def rate(self) -> float | None:
        """The paced rate in requests/s; None while inert (full speed)."""
        with self._lock:
            return self.controller.rate(self.clock())

    def call(self, budget: float | None) -> AdmittedCall:
        """Admission for one call (all its attempts); `budget` = its pool timeout in seconds."""
        # A call that arrives while others are out is one of a batch, even if it is sent once
        # they are done: processes on a key of tokens per minute lost a batch's last calls,
        # sent alone after waiting behind the others, to the rate the other processes held.
        with self._lock:
            arrives_among_others = self._others(0)
        return AdmittedCall(self, budget, next(self._tickets), crowded=arrives_among_others)

    def serving(self) -> bool:
        """Whether the gateway admitted a call of this pool within `serving_span` (answered it,
        or held it longer than a refusal takes: `slow_start`)."""
        with self._lock:
            return self.controller.serving(self.clock())

    def lost_turn(self, permit: Permit) -> bool:
        """Whether a 429 for this request only cost it its turn (the controller's verdict)."""
        with self._lock:
            return self.controller.lost_turn(permit, self.clock())

    def starved_for(self) -> float | None:
        """Seconds since the gateway last served the pool's requests, while it serves none
        (`starved.py`); None while it serves them."""
        starved = self._starvation()
        return None if starved is None else starved[0]

    def _starvation(self) -> tuple[float, list[int]] | None:
        """How long the pool has been starved and the statuses it was refused with, the latest
        last (None: it is served)."""
        with self._lock:
            now = self.clock()
            since = self.controller.starved_since(now)
            return None if since is None else (now - since, self.controller.starved_by())

    # -- under the lock -----------------------------------------------------------------------

    def _poll(self, waiter: _Waiter) -> Permit | _Wait:
        """Grant what is due; the waiter's permit, or how it waits for its turn."""
        with self._lock:
            waiter.arm()
            if not waiter.granted and not waiter.queued:
                bisect.insort(self._queue, waiter, key=lambda queued: queued.ticket)
                waiter.queued = True
            woken, head_wait = self._dispatch()
            if waiter.granted:
                assert waiter.permit is not None
                step: Permit | _Wait = waiter.permit
            elif self._queue[0] is waiter and head_wait is not None:
                step = head_wait
            else:
                step = _Wait(None, timed=False)
        self._wake(woken, but=waiter)
        return step

    def _dispatch(self) -> tuple[list[_Waiter], _Wait | None]:
        """Grant the head of the queue while it may go. Returns the waiters granted (and the
        new head, whose wait changed), and the head's wait (None: it waits for a slot): a timed
        sleep for a paced turn, the slow start's spacing or a cool-down; a wake, or at most the
        seconds until the full pool's answers count as slow (it may grow then)."""
        woken: list[_Waiter] = []
        now = self.clock()
        while self._queue:
            if self._in_flight >= self.capacity:
                slow_in = self._slow_in(now)
                if slow_in <= 0:
                    self.capacity = min(self.max_capacity, self.capacity + self.capacity_step)
                elif self.capacity < self.max_capacity:  # the head looks again when it may grow
                    woken.append(self._queue[0])
                    return woken, _Wait(slow_in, timed=False)
            if self._in_flight >= self._limit(now):
                break
            now = self.clock()
            wait = self.controller.delay(now)
            if wait > 0:
                woken.append(self._queue[0])
                return woken, _Wait(wait, timed=True)
            head = self._queue.pop(0)
            head.queued = False
            head.granted = True
            head.permit = Permit(
                self,
                now,
                crowded=self._others(0) or self.controller.sharing(now),
                in_flight=self._in_flight + 1,
            )
            self._in_flight += 1
            self._sent_sum += now
            self.controller.sent(head.permit, now)
            woken.append(head)
        return woken, None

    def _others(self, mine: int) -> bool:
        """Whether other calls of the pool are out: in flight beyond `mine` (the asking
        request's own slot, if it holds one), waiting in the queue, or asleep between two
        attempts."""
        return self._in_flight > mine or bool(self._queue) or self._resting > 0

    def _rest(self, change: int) -> None:
        with self._lock:
            self._resting += change

    def _limit(self, now: float) -> int:
        """The requests allowed in flight now: the capacity, or the controller's cap if lower."""
        cap = self.controller.limit(now, self._in_flight)
        return self.capacity if cap is None else min(self.capacity, cap)

    def _slow_in(self, now: float) -> float:
        """Seconds until answers count as slow (0: they do): the slots released so far were held
        `slow_answer` on average, or the requests in flight have been out that long on average
        (the first answers of a slow model are not back yet)."""
        if self._hold is not None and self._hold >= KNOBS.slow_answer:
            return 0.0
        mean_age = now - self._sent_sum / self._in_flight if self._in_flight else 0.0
        wait = KNOBS.slow_answer - mean_age
        # Due but for rounding is due: a wait of 1e-12 s is no wait, it would only spin (and,
        # on a simulated clock, never end: 2 s refusals hung the simulation).
        return wait if wait > _EPSILON else 0.0

    def _wake(self, waiters: list[_Waiter], *, but: _Waiter | None = None) -> None:
        for waiter in waiters:
            if waiter is not but:
                waiter.wake()

    def _leave(self, waiter: _Waiter) -> None:
        """A waiting call gives up (timeout, cancellation, interrupt): out of the queue, and a
        slot granted to it meanwhile goes to the next call."""
        with self._lock:
            if waiter.queued:
                self._queue.remove(waiter)
                waiter.queued = False
            if waiter.granted:
                waiter.granted = False
                assert waiter.permit is not None
                self._free(waiter.permit)
                self.controller.record(waiter.permit, None, self.clock())  # never sent
            woken, _ = self._dispatch()
        self._wake(woken)

    def _finish(self, permit: Permit, outcome: Outcome | None, *, release: bool) -> None:
        with self._lock:
            now = self.clock()
            if outcome is not None:
                # Others out as it comes back (in flight, waiting, or asleep between attempts):
                # it went with them after all.
                permit.crowded = permit.crowded or self._others(1)
                self.controller.record(permit, outcome, now)
            if release:
                self._free(permit)
                self.controller.record(permit, None, now)
                held = now - permit.sent_at
                # The first release starts the average: from 0 it took 10 slow answers (1-2 s
                # each) to count as slow, a full pool of 500/s waited half a second for them.
                self._hold = (
                    held
                    if self._hold is None
                    else self._hold + KNOBS.hold_weight * (held - self._hold)
                )
            woken, _ = self._dispatch()
        self._wake(woken)

    def _free(self, permit: Permit) -> None:
        """A granted slot is given back (the response is done, or the call gave up)."""
        self._in_flight -= 1
        # Summed send times drift with rounding: an empty pool starts the sum afresh.
        self._sent_sum = self._sent_sum - permit.sent_at if self._in_flight else 0.0


class Permit:
    """One request's place in the pool. `done` reports the outcome once; `release` frees it."""

    __slots__ = ("_admission", "_settled", "crowded", "in_flight", "released", "sent_at")

    def __init__(
        self, admission: Admission, sent_at: float, *, crowded: bool = False, in_flight: int = 1
    ) -> None:
        self._admission = admission
        self.sent_at = sent_at
        # other calls of the pool were in flight, waiting or asleep between attempts at its send
        # or its refusal, or at an earlier attempt of its call, or it was sent while the pool
        # shares a rate
        self.crowded = crowded
        self.in_flight = in_flight  # the pool's requests in flight at its send, itself included
        self._settled = False
        self.released = False

    def done(self, outcome: Outcome | None, *, keep: bool = False) -> None:
        """Report the outcome; free the slot too unless `keep` (an open stream still uses it)."""
        report = None if self._settled else outcome  # only the first report counts
        self._settled = True
        release = not keep and not self.released
        if release:
            self.released = True
        if report is not None or release:
            self._admission._finish(self, report, release=release)

    def release(self) -> None:
        self.done(None)


class AdmittedCall:
    """One call's way into the pool, attempt after attempt (sync or async)."""

    def __init__(
        self, admission: Admission, budget: float | None, ticket: int, *, crowded: bool
    ) -> None:
        self._admission = admission
        self._budget = budget
        self._ticket = ticket
        self._permit: Permit | None = None  # of its last attempt
        self._crowded = crowded  # it arrived, or an attempt of it went, with others of the pool
        self._first_lost_turn: float | None = None

    def requeues(self, failure: Failure) -> bool:
        """Whether this failed attempt goes back to its place in the queue without spending a
        retry: a 429 (or overload) that only cost the call its turn (`Controller.lost_turn`),
        for a call that went with others of the pool (others were in flight, waiting, or asleep
        between attempts (`resting`) when it arrived, or at the send or the refusal of this
        attempt or an earlier one: it shares the gateway's rate with them, or it was sent while
        the pool shares a rate: `Controller.sharing`), for at most its pool timeout after its
        first lost turn (`patience` without one): how long it accepts to wait for a turn,
        whether ours or the gateway's. A call alone (it arrived at an idle pool and went alone)
        spends its retries (`max_retries=2`: three attempts)."""
        if outcome_of(failure).kind not in ("throttled", "overloaded") or self._permit is None:
            return False
        self._crowded = self._crowded or self._permit.crowded
        if not self._crowded or not self._admission.lost_turn(self._permit):
            return False
        now = self._admission.clock()
        if self._first_lost_turn is None:
            self._first_lost_turn = now
        patience = KNOBS.patience if self._budget is None else self._budget
        return now - self._first_lost_turn < patience

    @contextlib.contextmanager
    def resting(self) -> Iterator[None]:
        """While this call sleeps between two attempts (its backoff, the gateway's
        `Retry-After`): it is still one of the pool's calls, so a sibling sent or refused
        meanwhile went with others, though nothing else was in flight or queued (a batch of 4
        calls, each asleep on its own `Retry-After: 1` as the next one was refused, lost calls
        after three attempts to a gateway overloaded for a while). Over when the sleep ends,
        however it ends."""
        self._admission._rest(+1)
        try:
            yield
        finally:
            self._admission._rest(-1)

    def enter(self, sleep: Callable[[float], None]) -> Permit:
        """Wait for this call's turn (FIFO, paced, cool-down) within its pool timeout."""
        waiter = _Waiter(self._ticket, None)
        turns = self._turns(waiter)
        try:
            wait = next(turns)
            while True:
                if wait.timed:
                    assert wait.seconds is not None
                    sleep(wait.seconds)
                else:
                    assert waiter.event is not None
                    waiter.event.wait(wait.seconds)
                wait = next(turns)
        except StopIteration as granted:
            permit: Permit = granted.value
            return permit
        finally:
            turns.close()  # interrupted (any BaseException): leaves the queue, frees its slot

    async def aenter(self, sleep: Callable[[float], Awaitable[None]]) -> Permit:
        """Async twin of `enter`: the same turns, awaited."""
        waiter = _Waiter(self._ticket, asyncio.get_running_loop())
        turns = self._turns(waiter)
        try:
            wait = next(turns)
            while True:
                if wait.timed:
                    assert wait.seconds is not None
                    await sleep(wait.seconds)
                else:
                    assert waiter.future is not None
                    # On a timeout the generator decides: granted meanwhile, or timed out.
                    # (`asyncio.timeout`, not `wait_for`: on 3.11 `wait_for` swallows a
                    # cancellation that meets a completed future.)
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(wait.seconds):
                            await waiter.future
                wait = next(turns)
        except StopIteration as granted:
            permit: Permit = granted.value
            return permit
        finally:
            turns.close()  # cancelled or interrupted: leaves the queue, frees its slot

    def _turns(self, waiter: _Waiter) -> Generator[_Wait, None, Permit]:
        """The waits of one attempt, up to its permit; shared by `enter` and `aenter`."""
        admission = self._admission
        clock = admission.clock
        deadline = None if self._budget is None else clock() + self._budget
        granted = False
        try:
            while True:
                step = admission._poll(waiter)
                if isinstance(step, Permit):
                    granted = True
                    step.crowded = step.crowded or self._crowded  # it still shares their rate
                    self._permit = step
                    return step
                left = None if deadline is None else deadline - clock()
                if step.timed:
                    assert step.seconds is not None
                    if left is not None and step.seconds > left:
                        raise self._timed_out(
                            f"its turn in the gateway's rate limit (pacing or cool-down, "
                            f"{step.seconds:.2f}s away)"
                        )
                    yield step
                    continue
                if left is not None and left <= 0:
                    raise self._timed_out("waiting for a free connection")
                yield _Wait(_earliest(step.seconds, left), timed=False)
        finally:
            if not granted:
                admission._leave(waiter)

    def _timed_out(self, what: str) -> KimiError:
        """The error of a call whose pool timeout runs out before its turn: a timeout, or, while
        the gateway serves none of the pool's requests, the rate limit that keeps it waiting."""
        budget = f"pool timeout of {self._budget:g}s (httpx.Timeout.pool)"
        starved = self._admission._starvation()
        if starved is not None:
            seconds, statuses = starved  # a starved pool was refused at least once
            latest = statuses[-1]
            error = class_for_status(latest)  # the latest refusal's: a 429's, or an overload's
            named = " and ".join(str(status) for status in sorted(statuses))
            return error(
                f"the gateway has answered every request of this pool with {named} for "
                f"{seconds:.0f}s, admitting none; this call's turn would outlast its {budget}",
                status_code=latest,
            )
        return KimiTimeoutError(f"{what} would outlast this call's {budget}; nothing was sent")


def _earliest(first: float | None, second: float | None) -> float | None:
    """The shorter of two optional limits (None: no limit)."""
    if first is None:
        return second
    return first if second is None else min(first, second)
