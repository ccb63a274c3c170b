"""A `Transport` over an `httpx.MockTransport` for the transport tests: no network, no waiting.

`Script` is a `FakeKimiGateway` answering with raw steps in order (the last one repeats; the
fallback host served) that also keeps every `httpx.Request` as sent; `scripted_transport` wires
a handler into sync and async clients and records each back-off delay instead of sleeping, so
every retry is observable. Unless a test brings its own clock, the pool's clock is a fake one
that the recorded delays advance: time passes only by those waits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from pydantic import SecretStr

from langchain_kimi import ChatKimi
from langchain_kimi._http.transport import JsonReply, Transport, TransportConfig
from langchain_kimi.testing import FakeKimiGateway

Step = httpx.Response | Exception


class Script:
    """A MockTransport handler: a fake gateway answering `steps` in order (the last one
    repeats), each request judged first, as the service would."""

    def __init__(self, *steps: Step) -> None:
        self.gateway = FakeKimiGateway(fallback=True)
        for number, step in enumerate(steps, 1):
            self.gateway.add_raw(step, repeat=number == len(steps))
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        return self.gateway.transport.handle_request(request)

    @property
    def hosts(self) -> list[str]:
        return [r.url.host for r in self.requests]


def field_defaults() -> dict[str, Any]:
    """ChatKimi's defaults of the transport settings (the one place they are written)."""
    names = ("max_retries", "rate_limit_timeout", "adaptive_concurrency")
    return {name: ChatKimi.model_fields[name].default for name in names}


def idle_clients(transport: Transport) -> list[httpx.Client]:
    """The idle sync clients of the transport's gateway (ours: one connection each)."""
    return list(transport._shared().clients._sync._idle)


def our_clients_answered_by(
    monkeypatch: Any, handler: Callable[[httpx.Request], httpx.Response]
) -> None:
    """Every client ChatKimi makes from now on (its own, with its settings) is answered by
    `handler` instead of the network."""
    from langchain_kimi._http.pool import clients

    mock = httpx.MockTransport(handler)  # serves sync and async clients alike
    settings = clients._client_settings
    monkeypatch.setattr(clients, "_client_settings", lambda: {**settings(), "transport": mock})


def loop_clients(transport: Transport) -> list[httpx.AsyncClient]:
    """The idle clients of the transport's gateway in event loops that are not closed."""
    loops = transport._shared().clients._loops.items()
    entries = [ref() for loop, ref in loops if not loop.is_closed()]
    return [client for entry in entries if entry is not None for client in entry.idle._idle]


def transport_config(*args: Any, **settings: Any) -> TransportConfig:
    """A `TransportConfig` with ChatKimi's defaults for what `settings` leaves out."""
    return TransportConfig(*args, **{**field_defaults(), **settings})


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
        **field_defaults(),
        # The recorded waits are the retries' alone: the key's pacing has tests of its own
        # (tests/unit_tests/http/limits), and a test that wants it passes True.
        "adaptive_concurrency": False,
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
BODY: dict[str, Any] = {
    "model": "kimi-k3.1-pro",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "hé"}],
}
OK = {"id": "msg_1", "type": "message"}


async def post(transport: Transport, mode: str) -> JsonReply:
    if mode == "sync":
        return transport.post_json(PATH, BODY)
    return await transport.apost_json(PATH, BODY)


def ok(**headers: str) -> httpx.Response:
    return httpx.Response(200, json=OK, headers=headers)
