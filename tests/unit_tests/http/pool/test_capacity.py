"""Capacity that follows the work (issue 20 item 6): the in-flight limit grows while slow answers
hold every slot, each growth another small connection pool (`spread`), never one huge pool."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from langchain_kimi._http.limits.admission import Admission, Permit
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import ANSWERED
from langchain_kimi._http.pool import shared
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
    clock.now += 2 * KNOBS.slow_answer * 10  # long answers
    for permit in permits:
        permit.done(
            ANSWERED
        )  # the moving average of hold times is now well above KNOBS.slow_answer
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
        spread = Spread(per_pool=2)
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
        spread = ASpread(per_pool=2)
        async with httpx.AsyncClient(transport=spread) as client:
            replies = await asyncio.gather(
                *(client.post(server.url, content=b"x") for _ in range(6))
            )
            assert [r.status_code for r in replies] == [200] * 6
            assert 1 <= spread.pools <= 3
            for _ in range(4):
                assert (await client.post(server.url, content=b"x")).status_code == 200
            assert spread.pools <= 3


class Counting(Slow):
    """`Slow`, counting the connections it accepts (one handler per connection)."""

    connections = 0

    def setup(self) -> None:
        type(self).connections += 1
        super().setup()


def _pool_client() -> httpx.Client:
    key = shared.PoolKey(
        bases=("http://127.0.0.1",),
        key_digest=shared.PoolKey.digest("sk-spread-test"),
        adaptive=True,
        clock=time.monotonic,
        http_client=None,
        http_async_client=None,
    )
    return shared.SharedPool(key).sync_client()


def _hold(client: httpx.Client, url: str, n: int) -> list[httpx.Response]:
    """`n` responses held open at once (each keeps its connection busy)."""
    return [
        client.send(client.build_request("POST", url, content=b"x"), stream=True) for _ in range(n)
    ]


def _connections_per_pool(client: httpx.Client) -> list[int]:
    spread = client._transport
    assert isinstance(spread, Spread)
    return [len(pool._pool.connections) for pool in spread._places.pools]


def test_a_pools_requests_meet_a_few_connections_each_not_all_of_them() -> None:
    """httpcore scans every connection of a pool on each request: 60 requests in flight are spread
    over small httpcore pools, none holding more than `CONNECTIONS_PER_POOL` connections."""
    with running(LoopbackServer(Slow)) as server, _pool_client() as client:
        held = _hold(client, server.url, 60)
        sizes = _connections_per_pool(client)
        assert sum(sizes) == 60
        assert max(sizes) <= shared.CONNECTIONS_PER_POOL < 60
        for response in held:
            response.read()
            response.close()


def test_connections_stay_alive_for_the_next_burst() -> None:
    """Every connection of a burst is kept for the next one: httpcore counts all of a pool's
    connections, idle or not, against its keep-alive limit, so a limit below the pool's size
    closes connections as soon as they are idle (the second burst would reconnect)."""
    Counting.connections = 0
    with running(LoopbackServer(Counting)) as server, _pool_client() as client:
        for _ in range(2):
            held = _hold(client, server.url, 60)
            for response in held:
                assert response.read() == b'{"ok": true}'
                response.close()
        assert Counting.connections == 60  # the second burst reused the first one's
        assert sum(_connections_per_pool(client)) == 60
