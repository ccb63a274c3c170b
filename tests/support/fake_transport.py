"""A `Transport` over an `httpx.MockTransport` for the transport tests: no network, no waiting.

`Script` replays responses or exceptions in order (the last one repeats) and records every
request; `scripted_transport` wires a handler into sync and async clients and records each back-off
delay instead of sleeping, so every retry is observable. Unless a test brings its own clock, the
pool's clock is a fake one that the recorded delays advance: time passes only by those waits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from pydantic import SecretStr

from langchain_kimi._http.transport import JsonReply, Transport, TransportConfig

Step = httpx.Response | Exception


class Script:
    """A MockTransport handler replaying `steps` in order (the last one repeats)."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        step = self.steps[min(len(self.requests), len(self.steps)) - 1]
        if isinstance(step, Exception):
            raise step
        return step

    @property
    def hosts(self) -> list[str]:
        return [r.url.host for r in self.requests]


def scripted_transport(
    handler: Callable[[httpx.Request], httpx.Response],
    *,
    base_url: str,
    key: str,
    fallback: str | None = None,
    **config: Any,
) -> tuple[Transport, list[float]]:
    """The transport and the list its back-off delays are recorded in (nothing sleeps)."""
    delays: list[float] = []
    elapsed = [0.0]

    def sleep(seconds: float) -> None:
        delays.append(seconds)
        elapsed[0] += seconds

    async def async_sleep(seconds: float) -> None:
        sleep(seconds)

    settings: dict[str, Any] = {
        "timeout": httpx.Timeout(5.0),
        "clock": lambda: 1000.0 + elapsed[0],
        **config,
    }
    cfg = TransportConfig(
        base_url=base_url,
        fallback_base_url=fallback,
        api_key=SecretStr(key),
        sleep=sleep,
        async_sleep=async_sleep,
        **settings,
    )
    mock = httpx.MockTransport(handler)
    transport = Transport(
        cfg,
        http_client=httpx.Client(transport=mock),
        http_async_client=httpx.AsyncClient(transport=mock),
    )
    return transport, delays


# One JSON call, on the sync or the async path (`mode`), and a reply that answers it.
PATH = "/v1/messages"
BODY: dict[str, Any] = {"model": "kimi-k3.1-pro", "messages": [{"role": "user", "content": "hé"}]}
OK = {"id": "msg_1", "type": "message"}


async def post(transport: Transport, mode: str) -> JsonReply:
    if mode == "sync":
        return transport.post_json(PATH, BODY)
    return await transport.apost_json(PATH, BODY)


def ok(**headers: str) -> httpx.Response:
    return httpx.Response(200, json=OK, headers=headers)
