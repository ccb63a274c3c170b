"""`Spread` / `ASpread`: each request holds one place of one pool until its response is closed.

The pools are `httpx.MockTransport`s (no sockets): the tests watch where requests are placed
(`pools`, how many pools were opened) and what closing does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

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
