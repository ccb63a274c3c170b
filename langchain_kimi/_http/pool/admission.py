"""Admission to one shared connection pool: a fair FIFO queue, one cool-down, adaptive pacing.

Every attempt of every call on a pool takes a `Permit` here before it is sent and gives it back
when its response is done (a stream: when it is closed). Three rules, shared by threads and by any
number of event loops through one lock:

- **Fair FIFO queue.** At most `capacity` requests are in flight (the pool's connection count), so
  httpcore's own queue stays empty: it rescans every queued request against every connection on
  each pool event, which made 500 concurrent calls five times slower than 100. Beyond that, calls
  wait here, first come first served.
- **Shared cool-down.** A 429 (or a 503 with `Retry-After`) holds back every call of the pool
  until the gateway's `Retry-After` has passed, so waiting calls do not each discover the limit.
- **Adaptive pacing** (`_pacing`, on unless `adaptive_concurrency=False`): from the first 429 on,
  the cool-down is spread instead of waited out together: sends go out one by one at the rate the
  gateway admitted (the `_aimd` window counts how many of the throttled burst got through), so
  calls neither all wait the whole `Retry-After` nor all fire when it ends.

A call never waits here longer than its own pool timeout (`httpx.Timeout.pool`: the time it
accepts to wait for a connection); it fails with `KimiTimeoutError` instead. Its own retry delay
(chosen by `_retry` as before) counts toward the cool-down, so it never waits twice.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Literal, Protocol

from langchain_kimi._errors import KimiError, KimiTimeoutError
from langchain_kimi._http.pool.adaptive_window import AdaptiveWindow
from langchain_kimi._http.pool.pacer import Pacer

DEFAULT_COOL_DOWN = 0.5
"""Seconds every call waits after a 429 that carries no `Retry-After`."""


class _Failed(Protocol):
    """What admission needs to know of a failed attempt (a `_retry.Failure`)."""

    @property
    def error(self) -> KimiError: ...

    @property
    def retryable(self) -> bool: ...

    @property
    def retry_after(self) -> float | None: ...


def cool_down_after(status: int | None, retry_after: float | None) -> float | None:
    """The pool-wide pause an HTTP status asks for: a 429, or a 503 that names its own wait."""
    if status == 429:
        return DEFAULT_COOL_DOWN if retry_after is None else retry_after
    if status == 503 and retry_after is not None:
        return retry_after
    return None


class _Waiter:
    """One queued call, woken from whichever thread frees a slot for it."""

    __slots__ = ("event", "future", "granted", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self.granted = False
        self.loop = loop
        self.event = threading.Event() if loop is None else None
        self.future: asyncio.Future[None] | None = None if loop is None else loop.create_future()

    def wake(self) -> bool:
        """False when the waiter's loop is gone (its slot must be handed on)."""
        if self.event is not None:
            self.event.set()
            return True
        assert self.loop is not None
        try:
            self.loop.call_soon_threadsafe(self._resolve)
        except RuntimeError:  # the loop was closed while its task waited
            return False
        return True

    def _resolve(self) -> None:
        if self.future is not None and not self.future.done():
            self.future.set_result(None)


class Admission:
    """The queue, cool-down and window of one pool. Thread-safe; used by every loop."""

    def __init__(self, capacity: int, *, adaptive: bool, clock: Callable[[], float]) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._window = AdaptiveWindow(ceiling=capacity, enabled=adaptive)
        self._in_flight = 0
        self._queue: deque[_Waiter] = deque()
        self._resume_at = float("-inf")
        self._epoch = 0  # bumped by every decrease: one decrease per burst of 429s
        self._pacer = Pacer()
        self._cool_down = DEFAULT_COOL_DOWN  # the last burst's

    def __repr__(self) -> str:
        return (
            f"Admission(in_flight={self._in_flight}, queued={len(self._queue)}, "
            f"window={self._window.limit})"
        )

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def window(self) -> float | None:
        """The adaptive limit on requests in flight; None while inert."""
        return self._window.limit

    def call(self, budget: float | None) -> AdmittedCall:
        """Admission for one call (all its attempts); `budget` = its pool timeout in seconds."""
        return AdmittedCall(self, budget)

    # -- under the lock -----------------------------------------------------------------------

    def _try_enter(self, waiter: _Waiter | None) -> Permit | None:
        with self._lock:
            if not self._queue and self._admits(self._in_flight):
                self._in_flight += 1
                return Permit(self, self._epoch)
            if waiter is not None:
                self._queue.append(waiter)
        return None

    def _grant(self) -> list[_Waiter]:
        granted = []
        while self._queue and self._admits(self._in_flight):
            waiter = self._queue.popleft()
            waiter.granted = True
            self._in_flight += 1
            granted.append(waiter)
        return granted

    def _wake(self, waiters: list[_Waiter]) -> None:
        for waiter in waiters:
            if not waiter.wake():
                self._finish(None, release=True)

    def _leave(self, waiter: _Waiter, *, keep_granted: bool) -> bool:
        """A queued call gives up waiting (timeout, cancellation). Returns whether it was granted
        a slot meanwhile; that slot is kept if `keep_granted`, else handed on."""
        with self._lock:
            if not waiter.granted:
                self._queue.remove(waiter)
                return False
            if keep_granted:
                return True
            self._in_flight -= 1
            woken = self._grant()
        self._wake(woken)
        return True

    def _finish(self, permit: Permit | None, *, release: bool, outcome: Outcome = None) -> None:
        with self._lock:
            if isinstance(outcome, float) and (permit is None or permit.epoch == self._epoch):
                self._resume_at = max(self._resume_at, self.clock() + outcome)
                self._window.throttled(self._in_flight)
                self._epoch += 1
                self._cool_down = outcome
                self._pace_admitted()
            elif isinstance(outcome, float):
                # A 429 of a request sent before the last decrease: the same overload. It does
                # not extend the cool-down; it tells how few requests the gateway admitted.
                self._window.throttled_again()
                self._pace_admitted()
            elif outcome == "ok":
                self._window.succeeded(self._in_flight + len(self._queue))
                self._pacer.replied(self.clock())
            if not release:
                return
            self._in_flight -= 1
            woken = self._grant()
        self._wake(woken)

    def _admits(self, in_flight: int) -> bool:
        if self._pacer.rate is not None:  # pacing holds calls back by time, not by count
            return in_flight < self._window.ceiling
        return self._window.allows(in_flight)

    def _pace_admitted(self) -> None:
        admitted = self._window.limit  # None: not adaptive
        if admitted is not None:
            self._pacer.throttled(admitted, self._cool_down, self.clock())

    def _pace(self, waited_until: float, deadline: float | None) -> float | None:
        """Reserve this call's paced send time: seconds to wait, None if past `deadline`."""
        with self._lock:
            now = max(self.clock(), waited_until)  # its own retry delay counts, as for a pause
            wait = self._pacer.delay(now)
            if deadline is not None and self.clock() + wait > deadline:
                return None
            self._pacer.take(now)
            return wait

    def _cool_down_left(self, waited_until: float) -> float:
        if self._pacer.rate is not None:  # the cool-down is spread by pacing instead
            return 0.0
        return self._resume_at - max(self.clock(), waited_until)


Outcome = float | Literal["ok"] | None
"""What an attempt reports: a cool-down in seconds (throttled), "ok" (a reply), None (neither)."""


class Permit:
    """One request's place in the pool. `done` reports the outcome once; `release` frees it."""

    __slots__ = ("_admission", "_settled", "epoch", "released")

    def __init__(self, admission: Admission, epoch: int) -> None:
        self._admission = admission
        self.epoch = epoch
        self._settled = False
        self.released = False

    def done(self, outcome: Outcome, *, keep: bool = False) -> None:
        """Report the outcome; free the slot too unless `keep` (an open stream still uses it)."""
        report = None if self._settled else outcome  # only the first report counts
        self._settled = True
        release = not keep and not self.released
        if release:
            self.released = True
        if report is not None or release:
            self._admission._finish(self, release=release, outcome=report)

    def release(self) -> None:
        self.done(None)


class AdmittedCall:
    """One call's way into the pool, attempt after attempt (sync or async)."""

    def __init__(self, admission: Admission, budget: float | None) -> None:
        self._admission = admission
        self._budget = budget
        self._waited_until = float("-inf")

    def waiting(self, seconds: float) -> None:
        """The call is about to sleep its own retry delay: it counts toward the cool-down."""
        self._waited_until = self._admission.clock() + seconds

    def _deadline(self) -> float | None:
        return None if self._budget is None else self._admission.clock() + self._budget

    def _timed_out(self, what: str) -> KimiTimeoutError:
        return KimiTimeoutError(
            f"{what} would outlast this call's pool timeout of {self._budget:g}s "
            "(httpx.Timeout.pool); nothing was sent"
        )

    def _pause(self, deadline: float | None) -> float:
        """Seconds of shared cool-down still to wait; raises if that outlasts the deadline."""
        pause = self._admission._cool_down_left(self._waited_until)
        if pause <= 0:
            return 0.0
        if deadline is not None and self._admission.clock() + pause > deadline:
            raise self._timed_out(f"the gateway's rate-limit cool-down ({pause:.2f}s left)")
        self.waiting(pause)
        return pause

    def _paced(self, deadline: float | None) -> float:
        """Seconds to wait for this call's paced send time (after a 429), within the deadline."""
        wait = self._admission._pace(self._waited_until, deadline)
        if wait is None:
            raise self._timed_out("its turn in the rate-limit cool-down (paced)")
        return wait

    def _remaining(self, deadline: float | None) -> float | None:
        return None if deadline is None else max(0.0, deadline - self._admission.clock())

    def enter(self, sleep: Callable[[float], None]) -> Permit:
        """Wait for a slot (FIFO), then for the shared cool-down; both within the pool timeout."""
        admission = self._admission
        deadline = self._deadline()
        permit = admission._try_enter(None)
        if permit is None:
            waiter = _Waiter(None)
            permit = admission._try_enter(waiter)
            if permit is None:
                assert waiter.event is not None
                try:
                    granted = waiter.event.wait(self._remaining(deadline))
                except BaseException:  # e.g. Ctrl-C: leave the queue, hand on a slot granted since
                    admission._leave(waiter, keep_granted=False)
                    raise
                if not granted and not admission._leave(waiter, keep_granted=True):
                    raise self._timed_out("waiting for a free connection")
                permit = Permit(admission, admission._epoch)
        try:
            while pause := self._pause(deadline):
                sleep(pause)
            if pace := self._paced(deadline):
                sleep(pace)
        except BaseException:
            permit.release()
            raise
        return permit

    async def aenter(self, sleep: Callable[[float], Awaitable[None]]) -> Permit:
        """Async twin of `enter`."""
        admission = self._admission
        deadline = self._deadline()
        permit = admission._try_enter(None)
        if permit is None:
            waiter = _Waiter(asyncio.get_running_loop())
            permit = admission._try_enter(waiter)
            if permit is None:
                assert waiter.future is not None
                try:
                    await asyncio.wait_for(waiter.future, self._remaining(deadline))
                except BaseException as exc:
                    admission._leave(waiter, keep_granted=False)
                    if isinstance(exc, TimeoutError):
                        raise self._timed_out("waiting for a free connection") from None
                    raise
                permit = Permit(admission, admission._epoch)
        try:
            while pause := self._pause(deadline):
                await sleep(pause)
            if pace := self._paced(deadline):
                await sleep(pace)
        except BaseException:
            permit.release()
            raise
        return permit


def outcome_of(failure: _Failed | None) -> Outcome:
    """A finished attempt as admission sees it, from its `_retry.Failure` (None: a reply)."""
    if failure is None:
        return "ok"
    if not failure.retryable:  # e.g. an exhausted quota's 429 (`_http_replies`): no pause
        return None
    return cool_down_after(failure.error.status_code, failure.retry_after)
