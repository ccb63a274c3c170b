"""`Spread` / `ASpread`: each request holds one place of one pool until its response is closed.

The pools are `httpx.MockTransport`s (no sockets): the tests watch where requests are placed
(`pools`, how many pools were opened) and what closing does.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from langchain_kimi._http.pool import spread as spread_module
from langchain_kimi._http.pool.spread import ASpread, Spread

URL = "https://gateway.test/v1/messages"


class _Pool(httpx.MockTransport):
    """A mock pool that remembers being closed."""

    def __init__(self, handler: Callable[[httpx.Request], httpx.Response]) -> None:
        super().__init__(handler)
        self.closed = False

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


def _answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=b"{}")


def _refuse(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("refused", request=request)


def spread(
    kind: type[Spread] | type[ASpread],
    handler: Callable[[httpx.Request], httpx.Response] = _answer,
) -> tuple[Any, list[_Pool]]:
    """A spread of one place per pool, whose pools are `_Pool`s (listed in opening order)."""
    made: list[_Pool] = []

    def make() -> _Pool:
        made.append(_Pool(handler))
        return made[-1]

    transport = kind(per_pool=1)
    transport._places._make = make  # type: ignore[assignment]  # mock pools in place of httpx ones
    return transport, made


def test_a_closed_response_frees_exactly_one_place() -> None:
    transport, _ = spread(Spread)
    transport.handle_request(httpx.Request("POST", URL)).stream.close()
    held = [transport.handle_request(httpx.Request("POST", URL)) for _ in range(2)]
    assert transport.pools == 2  # one place per pool: the second open request needs a second pool
    for response in held:
        response.stream.close()


def test_closing_a_response_twice_frees_its_place_once_and_does_not_fail() -> None:
    transport, _ = spread(Spread)
    response = transport.handle_request(httpx.Request("POST", URL))
    response.stream.close()
    response.stream.close()
    assert transport._places.busy == [0]


async def test_closing_an_async_response_twice_frees_its_place_once_and_does_not_fail() -> None:
    transport, _ = spread(ASpread)
    response = await transport.handle_async_request(httpx.Request("POST", URL))
    await response.stream.aclose()
    await response.stream.aclose()
    assert transport._places.busy == [0]


def test_a_request_that_fails_gives_its_place_back() -> None:
    transport, _ = spread(Spread, _refuse)
    for _ in range(2):
        with pytest.raises(httpx.ConnectError):
            transport.handle_request(httpx.Request("POST", URL))
    assert transport.pools == 1
    assert transport._places.busy == [0]


async def test_an_async_request_that_fails_gives_its_place_back() -> None:
    transport, _ = spread(ASpread, _refuse)
    for _ in range(2):
        with pytest.raises(httpx.ConnectError):
            await transport.handle_async_request(httpx.Request("POST", URL))
    assert transport.pools == 1
    assert transport._places.busy == [0]


def test_closing_the_spread_closes_every_pool() -> None:
    transport, made = spread(Spread)
    held = [transport.handle_request(httpx.Request("POST", URL)) for _ in range(2)]
    transport.close()
    assert [pool.closed for pool in made] == [True, True]
    for response in held:
        response.stream.close()


async def test_closing_the_async_spread_closes_every_pool() -> None:
    transport, made = spread(ASpread)
    held = [await transport.handle_async_request(httpx.Request("POST", URL)) for _ in range(2)]
    await transport.aclose()
    assert [pool.closed for pool in made] == [True, True]
    for response in held:
        await response.stream.aclose()


def test_a_request_goes_to_the_lowest_pool_with_room() -> None:
    """First fit: the busiest pools are the lowest, the others empty out and their connections
    idle (whatever the order places are freed in)."""
    transport, _ = spread(Spread)
    held = [transport.handle_request(httpx.Request("POST", URL)) for _ in range(4)]
    held[2].stream.close()
    held[0].stream.close()
    again = [transport.handle_request(httpx.Request("POST", URL)) for _ in range(3)]
    assert transport._places.busy == [1, 1, 1, 1, 1]
    assert transport.pools == 5  # pools 0 and 2 took the first two, a new one the third
    for response in [held[1], held[3], *again]:
        response.stream.close()
    assert transport._places.busy == [0] * 5
    transport.handle_request(httpx.Request("POST", URL))
    assert transport._places.busy == [1, 0, 0, 0, 0]


def _held(transport: Spread, count: int) -> list[httpx.Response]:
    return [transport.handle_request(httpx.Request("POST", URL)) for _ in range(count)]


def test_idle_connections_beyond_the_cap_are_closed_at_once_the_highest_pools_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spread_module, "KEEPALIVE_CAP", 2)
    transport, made = spread(Spread)
    for response in _held(transport, 5):
        response.stream.close()
    assert [pool.closed for pool in made[:5]] == [False, False, True, True, True]
    assert transport.idle == 2
    assert transport.pools == 5  # the closed pools' places hold new, empty pools
    again = _held(transport, 3)  # the warm pools first, then an empty one
    assert transport.idle == 0
    assert transport._places.connections == [1, 1, 1, 0, 0]
    for response in again:
        response.stream.close()


def test_a_busy_spread_below_the_cap_closes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under steady load a freed connection is taken again: idle stays under the cap."""
    monkeypatch.setattr(spread_module, "KEEPALIVE_CAP", 2)
    transport, made = spread(Spread)
    held = _held(transport, 5)
    for _ in range(20):
        held.pop(0).stream.close()
        held += _held(transport, 1)
    assert not any(pool.closed for pool in made)
    assert transport.pools == 5
    for response in held:
        response.stream.close()


def test_idle_pools_expire_without_more_traffic_and_no_thread_stays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spread_module, "KEEPALIVE_SECONDS", 0.05)
    transport, made = spread(Spread)
    held = _held(transport, 3)
    assert transport._timer is None  # nothing idle, no timer thread
    held[0].stream.close()
    held[1].stream.close()
    timer = transport._timer
    assert isinstance(timer, threading.Timer)
    deadline = time.monotonic() + 5
    while not (made[0].closed and made[1].closed) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [pool.closed for pool in made[:3]] == [True, True, False]  # the busy one stays
    assert transport.idle == 0
    timer.join(5)
    assert not timer.is_alive()
    assert transport._timer is None  # nothing idle any more: no thread re-armed
    held[2].stream.close()
    transport.close()


async def test_idle_async_pools_expire_on_their_loop_without_more_traffic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spread_module, "KEEPALIVE_SECONDS", 0.05)
    transport, made = spread(ASpread)
    held = [await transport.handle_async_request(httpx.Request("POST", URL)) for _ in range(2)]
    for response in held:
        await response.stream.aclose()
    assert transport._timer is not None
    deadline = time.monotonic() + 5
    while not all(pool.closed for pool in made[:2]) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert [pool.closed for pool in made[:2]] == [True, True]
    assert transport.idle == 0
    assert transport._timer is None  # nothing idle: no timer left on the loop
