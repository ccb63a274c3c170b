"""`gate.Gate`, the queue of turns in front of one key's send rate: first come first served by
ticket, only the head timed, no wait past the deadline, a waiter that gives up leaves at once, and
the same gate serves threads and several event loops."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Generator

import pytest

from langchain_kimi._http.limits.gate import (
    Gate,
    TurnTooLateError,
    Wait,
    Waiter,
    await_turn,
    wait_turn,
)
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.rate import Sent


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _turns(gate: Gate, ticket: int, deadline: float = 1e9) -> Generator[Wait, None, Sent]:
    return gate.turns(Waiter(ticket), deadline)


def _granted(turns: Generator[Wait, None, Sent]) -> Sent | float:
    """The request sent, or the seconds to wait (negative: not the head, woken or at most)."""
    try:
        wait = next(turns)
    except StopIteration as done:
        sent: Sent = done.value
        return sent
    return wait.seconds if wait.head else -wait.seconds


def test_the_first_call_goes_at_once_and_the_next_waits_the_spacing() -> None:
    clock = Clock()
    gate = Gate(clock)
    assert isinstance(_granted(_turns(gate, gate.ticket())), Sent)
    wait = _granted(_turns(gate, gate.ticket()))
    assert wait == pytest.approx(1 / KNOBS.start_rate)  # the head sleeps on the spacing


def test_turns_go_by_ticket_so_a_call_sent_again_keeps_its_place() -> None:
    clock = Clock()
    gate = Gate(clock)
    _granted(_turns(gate, gate.ticket()))  # uses the first slot of the spacing
    early, late = gate.ticket(), gate.ticket()
    later_turns = _turns(gate, late)
    assert _granted(later_turns) == pytest.approx(0.1)  # alone in line: the head
    earlier_turns = _turns(gate, early)  # an older ticket comes back (a refused call)
    assert _granted(earlier_turns) == pytest.approx(0.1)  # it is the head now
    clock.now += 0.1
    assert isinstance(_granted(earlier_turns), Sent)
    assert 0 < _granted(later_turns) < 0.1  # the next spacing (shorter: the rate grew) is its


def test_only_the_head_is_timed_the_others_wait_to_be_woken_or_their_deadline() -> None:
    clock = Clock()
    gate = Gate(clock)
    _granted(_turns(gate, gate.ticket()))
    head = _turns(gate, gate.ticket(), deadline=150.0)
    second = _turns(gate, gate.ticket(), deadline=150.0)
    assert _granted(head) == pytest.approx(0.1)
    assert _granted(second) == pytest.approx(-50.0)  # until woken, or its deadline
    assert gate.queued == 2


def test_a_turn_past_the_deadline_fails_at_once_and_says_how_long_it_waited() -> None:
    clock = Clock()
    gate = Gate(clock)
    _granted(_turns(gate, gate.ticket()))
    turns = _turns(gate, gate.ticket(), deadline=clock.now + 0.05)  # the spacing is 0.1 s
    with pytest.raises(TurnTooLateError) as caught:
        next(turns)
    assert caught.value.waited == 0.0
    assert gate.queued == 0  # it left the line


def test_a_waiter_past_its_deadline_fails_when_it_looks_again() -> None:
    clock = Clock()
    gate = Gate(clock)
    _granted(_turns(gate, gate.ticket()))
    head = _turns(gate, gate.ticket(), deadline=1e9)
    assert _granted(head) == pytest.approx(0.1)
    behind = _turns(gate, gate.ticket(), deadline=clock.now + 3.0)
    assert _granted(behind) == pytest.approx(-3.0)
    clock.now += 3.0
    with pytest.raises(TurnTooLateError) as caught:
        next(behind)
    assert caught.value.waited == pytest.approx(3.0)


def test_a_head_that_gives_up_wakes_the_next_one() -> None:
    clock = Clock()
    gate = Gate(clock)
    _granted(_turns(gate, gate.ticket()))
    head = _turns(gate, gate.ticket())
    _granted(head)
    waiter = Waiter(gate.ticket())
    behind = gate.turns(waiter, 1e9)
    _granted(behind)
    assert waiter.event is not None
    assert not waiter.event.is_set()
    head.close()  # cancelled, interrupted, out of time
    assert waiter.event.is_set()
    assert gate.queued == 1


def test_a_granted_head_wakes_the_next_one_to_time_its_own_turn() -> None:
    clock = Clock()
    gate = Gate(clock)
    _granted(_turns(gate, gate.ticket()))
    head = _turns(gate, gate.ticket())
    waiter = Waiter(gate.ticket())
    behind = gate.turns(waiter, 1e9)
    assert waiter.event is not None
    _granted(behind)  # queued first, but not the head once the older ticket comes
    _granted(head)
    clock.now += 0.1
    waiter.event.clear()
    assert isinstance(_granted(head), Sent)
    assert waiter.event.is_set()


def test_without_adaptive_pacing_no_turn_waits() -> None:
    gate = Gate(Clock(), adaptive=False)
    for _ in range(100):
        assert isinstance(_granted(_turns(gate, gate.ticket())), Sent)


def test_threads_take_their_turns_in_ticket_order() -> None:
    gate = Gate(Clock(), adaptive=False)
    order: list[int] = []
    lock = threading.Lock()

    def call(ticket: int) -> None:
        wait_turn(gate, ticket, deadline=1e9)
        with lock:
            order.append(ticket)

    threads = [threading.Thread(target=call, args=(gate.ticket(),)) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(order) == list(range(16))


def test_a_thread_waits_out_the_spacing_on_the_real_clock() -> None:
    import time

    gate = Gate(time.monotonic)
    sent = [wait_turn(gate, gate.ticket(), time.monotonic() + 5) for _ in range(3)]
    # Spaced by the rate at each send, never bunched.
    assert all(b.at - a.at >= 0.99 / a.rate for a, b in itertools.pairwise(sent))


def test_two_event_loops_share_one_gate() -> None:
    import time

    gate = Gate(time.monotonic)
    results: list[Sent] = []

    def loop_calls() -> None:
        async def calls() -> None:
            for _ in range(2):
                results.append(await await_turn(gate, gate.ticket(), time.monotonic() + 5))

        asyncio.run(calls())

    threads = [threading.Thread(target=loop_calls) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    ordered = sorted(results, key=lambda sent: sent.at)
    assert len(ordered) == 4
    assert all(b.at - a.at >= 0.99 / a.rate for a, b in itertools.pairwise(ordered))


async def test_a_cancelled_async_waiter_leaves_the_line() -> None:
    import time

    gate = Gate(time.monotonic)
    await await_turn(gate, gate.ticket(), time.monotonic() + 5)
    waiting = asyncio.create_task(await_turn(gate, gate.ticket(), time.monotonic() + 5))
    await asyncio.sleep(0)
    assert gate.queued == 1
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert gate.queued == 0


def test_a_turn_too_late_says_how_long_it_waited() -> None:
    assert str(TurnTooLateError(1.5)) == "no turn within the deadline after 1.5s"


def _slow_head(gate: Gate, release: threading.Event) -> threading.Thread:
    """A thread whose call is the head of the line, asleep on its spacing until `release`."""
    wait_turn(gate, gate.ticket(), time.monotonic() + 30)  # takes the free first send
    head = threading.Thread(
        target=wait_turn,
        args=(gate, gate.ticket(), time.monotonic() + 30, lambda seconds: release.wait(10)),
    )
    head.start()
    while gate.queued < 1:
        time.sleep(0.001)
    return head


def test_a_sync_waiter_behind_the_head_gives_up_at_its_deadline() -> None:
    gate = Gate(time.monotonic)
    release = threading.Event()
    head = _slow_head(gate, release)
    try:
        with pytest.raises(TurnTooLateError):
            wait_turn(gate, gate.ticket(), time.monotonic() + 0.05)  # never woken: its deadline
        assert gate.queued == 1  # the head only
    finally:
        release.set()
        head.join(10)


async def test_an_async_waiter_behind_the_head_gives_up_at_its_deadline() -> None:
    gate = Gate(time.monotonic)
    release = threading.Event()
    head = _slow_head(gate, release)
    try:
        with pytest.raises(TurnTooLateError):
            await await_turn(gate, gate.ticket(), time.monotonic() + 0.05)
    finally:
        release.set()
        head.join(10)


def test_a_waiter_on_another_threads_loop_is_woken_there() -> None:
    loop = asyncio.new_event_loop()
    errors: list[object] = []
    loop.set_exception_handler(lambda loop, context: errors.append(context))
    try:
        waiter = Waiter(1, loop)
        waiter.arm()
        assert waiter.future is not None
        threading.Thread(target=waiter.wake).start()
        loop.run_until_complete(asyncio.wait_for(waiter.future, 5))
        assert waiter.future.done()
        waiter.wake()  # a second wake of a done future changes nothing
        loop.run_until_complete(asyncio.sleep(0.01))
    finally:
        loop.close()
    assert errors == []
    waiter.wake()  # its loop is closed: nobody to wake, and no error


def test_a_head_whose_turn_comes_exactly_at_its_deadline_waits_for_it() -> None:
    clock = Clock()
    gate = Gate(clock)
    _granted(_turns(gate, gate.ticket()))
    spacing = 1 / KNOBS.start_rate
    assert _granted(_turns(gate, gate.ticket(), deadline=clock.now + spacing)) == pytest.approx(
        spacing
    )


def test_the_gate_tells_its_rate_of_answers_and_429s() -> None:
    clock = Clock()
    gate = Gate(clock)
    sent = _granted(_turns(gate, gate.ticket()))
    assert isinstance(sent, Sent)
    gate.answered()
    assert list(gate.policy._answers) == [clock.now]
    gate.refused(sent)
    assert gate.policy.rate == pytest.approx(KNOBS.cut * KNOBS.start_rate)
