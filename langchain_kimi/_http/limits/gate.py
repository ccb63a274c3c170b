"""The queue in front of one (gateway, key)'s send rate, shared by every thread and event loop.

Each attempt waits here for its turn. Turns go by the call's ticket, taken once per call, so a
call sent again after a refusal keeps its place ahead of later calls. Only the head sleeps on the
rate's spacing; the others wait to be woken, so a call that gives up (budget spent, cancelled,
interrupted) frees its place at once. A turn that would come after the call's deadline fails at
once. The waiting is one generator (`Gate.turns`); the sync and async drivers only carry out the
waits it asks for, and closing it (any exception in a driver) leaves the queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import threading
import time
from collections.abc import Awaitable, Callable, Generator
from typing import NamedTuple, cast

from langchain_kimi._http.limits.rate import RatePolicy, Sent


class TurnTooLateError(Exception):
    """The call's turn would come after its deadline (`waited`: seconds it spent queued)."""

    def __init__(self, waited: float) -> None:
        super().__init__(f"no turn within the deadline after {waited:.3g}s")
        self.waited = waited


class Wait(NamedTuple):
    """Before looking again: sleep `seconds` (the head), or wait at most that to be woken."""

    seconds: float
    head: bool


class Waiter:
    """One queued attempt, woken from whichever thread changes the queue."""

    __slots__ = ("event", "future", "loop", "queued", "ticket")

    def __init__(self, ticket: int, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.ticket = ticket
        self.loop = loop
        self.queued = False
        self.event = threading.Event() if loop is None else None
        self.future: asyncio.Future[None] | None = None

    def __lt__(self, other: Waiter) -> bool:
        return self.ticket < other.ticket

    def arm(self) -> None:
        """Before a poll: a wake from now on ends the next wait."""
        if self.event is not None:
            self.event.clear()
        else:
            assert self.loop is not None
            self.future = self.loop.create_future()

    def wake(self) -> None:  # from any thread
        if self.event is not None:
            self.event.set()
            return
        assert self.loop is not None
        with contextlib.suppress(RuntimeError):  # its loop is closed: nobody left to wake
            self.loop.call_soon_threadsafe(self._resolve)

    def _resolve(self) -> None:
        if self.future is not None and not self.future.done():
            self.future.set_result(None)


class Gate:
    """The queue and send rate of one (gateway, key). Thread-safe; used by every event loop."""

    def __init__(self, clock: Callable[[], float], *, adaptive: bool = True) -> None:
        self.clock = clock
        self.policy = RatePolicy(clock(), adaptive=adaptive)
        self._lock = threading.Lock()
        self._queue: list[Waiter] = []  # a heap by ticket
        self._tickets = itertools.count()

    def __repr__(self) -> str:
        return f"Gate(queued={len(self._queue)}, {self.policy!r})"

    @property
    def queued(self) -> int:
        return len(self._queue)

    def ticket(self) -> int:
        """A call's place in line, kept for all its attempts."""
        return next(self._tickets)

    def turns(self, waiter: Waiter, deadline: float) -> Generator[Wait, None, Sent]:
        """Yields how `waiter` waits until it may go; returns the request as sent. Raises
        `TurnTooLateError` when the turn would come after `deadline`."""
        started = self.clock()
        try:
            while True:
                sent_or_wait = self._poll(waiter)
                if isinstance(sent_or_wait, Sent):
                    return sent_or_wait
                now = self.clock()
                head_wait, is_head = sent_or_wait
                if now >= deadline or (is_head and now + head_wait > deadline):
                    raise TurnTooLateError(now - started)
                yield Wait(head_wait, head=True) if is_head else Wait(deadline - now, head=False)
        finally:
            self._leave(waiter)

    def answered(self) -> None:
        with self._lock:
            self.policy.answered(self.clock())

    def refused(self, request: Sent) -> None:
        with self._lock:
            self.policy.refused(request, self.clock())

    def _poll(self, waiter: Waiter) -> Sent | tuple[float, bool]:
        """Under the lock: the request sent now if `waiter` is the head and the rate allows it,
        else its wait and whether it is the head (only the head's wait is timed)."""
        woken = None
        with self._lock:
            waiter.arm()
            if not waiter.queued:
                heapq.heappush(self._queue, waiter)
                waiter.queued = True
            if self._queue[0] is not waiter:
                return (0.0, False)
            now = self.clock()
            wait = self.policy.delay(now)
            if wait > 0:
                return (wait, True)
            heapq.heappop(self._queue)
            waiter.queued = False
            sent = self.policy.sent(now)
            if self._queue:
                woken = self._queue[0]  # the new head times its own turn
        if woken is not None:
            woken.wake()
        return sent

    def _leave(self, waiter: Waiter) -> None:
        """A waiter gives up (or was served): out of the queue; a new head is woken."""
        woken = None
        with self._lock:
            if waiter.queued:
                was_head = self._queue[0] is waiter
                self._queue.remove(waiter)
                heapq.heapify(self._queue)
                waiter.queued = False
                if was_head and self._queue:
                    woken = self._queue[0]
        if woken is not None:
            woken.wake()


def wait_turn(
    gate: Gate, ticket: int, deadline: float, sleep: Callable[[float], None] = time.sleep
) -> Sent:
    """Block the thread until the call's turn (or raise `TurnTooLateError`). The head sleeps on
    the rate's spacing (`sleep`); the others wait to be woken."""
    waiter = Waiter(ticket)
    turns = gate.turns(waiter, deadline)
    try:
        wait = next(turns)
        while True:
            if wait.head:
                sleep(wait.seconds)
            else:
                assert waiter.event is not None
                waiter.event.wait(wait.seconds)
            wait = turns.send(None)
    except StopIteration as granted:
        return cast(Sent, granted.value)
    finally:
        turns.close()


async def await_turn(
    gate: Gate,
    ticket: int,
    deadline: float,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Sent:
    """Wait in the event loop until the call's turn (or raise `TurnTooLateError`)."""
    waiter = Waiter(ticket, asyncio.get_running_loop())
    turns = gate.turns(waiter, deadline)
    try:
        wait = next(turns)
        while True:
            if wait.head:
                await sleep(wait.seconds)
            else:
                assert waiter.future is not None
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait.seconds):
                        await waiter.future
            wait = turns.send(None)
    except StopIteration as granted:
        return cast(Sent, granted.value)
    finally:
        turns.close()
