"""Capacity that follows the work (issue 20 item 6): the in-flight limit grows while slow answers
hold every slot, each growth another small connection pool (`spread`), never one huge pool."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from langchain_kimi._http.pool.admission import ANSWERED, SLOW_ANSWER, Admission, Permit
from langchain_kimi._http.pool.spread import ASpread, Spread
from tests.support.loopback import LoopbackServer, QuietHandler, running

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def fill(gate: Admission, clock: Clock, n: int) -> list[Permit]:
    return [gate.call(30.0).enter(clock.sleep) for _ in range(n)]


def test_slow_answers_holding_every_slot_grow_the_limit_by_one_pool_at_a_time() -> None:
    clock = Clock()
    gate = Admission(10, adaptive=True, clock=clock, max_capacity=30)
    permits = fill(gate, clock, 10)
    clock.now += 2 * SLOW_ANSWER * 10  # long answers
    for permit in permits:
        permit.done(ANSWERED)  # the moving average of hold times is now well above SLOW_ANSWER
    held = fill(gate, clock, 10)
    waiter = gate.call(30.0)
    assert gate.capacity == 10
    extra = waiter.enter(clock.sleep)  # queued behind full slots of slow answers: one more pool
    assert gate.capacity == 20
    more = fill(gate, clock, 9)
    assert gate.in_flight == 20
    last = fill(gate, clock, 10)
    assert gate.capacity == 30
    with pytest.raises(Exception, match="free connection"):
        gate.call(0.0).enter(clock.sleep)
    assert gate.capacity == 30  # never past the most it may hold
    for permit in [*held, extra, *more, *last]:
        permit.release()
    assert gate.in_flight == 0


def test_fast_answers_never_grow_it() -> None:
    clock = Clock()
    gate = Admission(10, adaptive=True, clock=clock, max_capacity=30)
    for _ in range(5):
        permits = fill(gate, clock, 10)
        clock.now += 0.05
        for permit in permits:
            permit.done(ANSWERED)
    fill(gate, clock, 10)
    with pytest.raises(Exception, match="free connection"):
        gate.call(0.0).enter(clock.sleep)  # full, but its answers are fast: it waits its turn
    assert gate.capacity == 10


class Slow(QuietHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_spread_opens_another_small_pool_only_when_all_are_full() -> None:
    with running(LoopbackServer(Slow)) as server:
        spread = Spread(per_pool=2, keepalive=2)
        with httpx.Client(transport=spread) as client:
            streams = [client.stream("POST", server.url, content=b"x") for _ in range(5)]
            opened = [stream.__enter__() for stream in streams]
            assert spread.pools == 3  # 2 + 2 + 1 requests held open
            for stream in streams:
                stream.__exit__(None, None, None)
            assert [r.status_code for r in opened] == [200] * 5
            for _ in range(4):
                assert client.post(server.url, content=b"x").json() == {"ok": True}
            assert spread.pools == 3  # the freed places are used again, no new pool


async def test_async_spread_does_the_same() -> None:
    with running(LoopbackServer(Slow)) as server:
        spread = ASpread(per_pool=2, keepalive=2)
        async with httpx.AsyncClient(transport=spread) as client:
            replies = await asyncio.gather(
                *(client.post(server.url, content=b"x") for _ in range(6))
            )
            assert [r.status_code for r in replies] == [200] * 6
            assert 1 <= spread.pools <= 3
            for _ in range(4):
                assert (await client.post(server.url, content=b"x")).status_code == 200
            assert spread.pools <= 3
