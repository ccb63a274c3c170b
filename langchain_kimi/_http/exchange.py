"""What the sync and async halves of the transport share: the configuration, the share of the
gateway (its clients, the key's gate), the request, the reading of a finished attempt. The I/O
loops are `_async/exchange.py` and the `_sync/exchange.py` generated from it; the decisions (what
is retried, how long to wait, which error to raise) live in `limits/`.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import SecretStr

from langchain_kimi._errors import KimiError, KimiRateLimitError
from langchain_kimi._http.config import build_headers, host
from langchain_kimi._http.event_stream import Opened
from langchain_kimi._http.limits.gate import Gate
from langchain_kimi._http.limits.rate import Sent
from langchain_kimi._http.limits.retry import Failure, RetryPlan
from langchain_kimi._http.pool import registry
from langchain_kimi._http.pool.clients import GatewayClients
from langchain_kimi._http.replies import (
    ReadFailure,
    error_after_response,
    header_request_id,
    judge_reply,
)
from langchain_kimi._settings import validate_config
from langchain_kimi._version import __version__


@dataclass(frozen=True)
class TransportConfig:
    """The transport's settings; their defaults are ChatKimi's fields', not repeated here."""

    base_url: str
    fallback_base_url: str | None
    api_key: SecretStr
    timeout: httpx.Timeout
    max_retries: int
    rate_limit_timeout: float
    adaptive_concurrency: bool
    default_headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    allow_insecure_http: bool = False
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    async_sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, repr=False)
    user_agent: str = f"langchain-kimi/{__version__}"
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    def __post_init__(self) -> None:
        validate_config(
            self.base_url,
            self.fallback_base_url,
            self.api_key.get_secret_value(),
            self.default_headers,
            allow_insecure_http=self.allow_insecure_http,
            max_retries=self.max_retries,
        )
        object.__setattr__(self, "default_headers", dict(self.default_headers))


@dataclass(frozen=True)
class JsonReply:
    body: dict[str, Any]
    base_url: str
    request_id: str | None
    status_code: int


def report(gate: Gate, sent: Sent, outcome: JsonReply | Opened | Failure) -> None:
    """Tell the key's send rate how an attempt went: an answer (a stream's first event), or a
    429 (overloads do not touch the rate: `limits/rate.py`)."""
    if not isinstance(outcome, Failure):
        gate.answered()
    elif outcome.refusal and outcome.error.status_code == 429:
        gate.refused(sent)


class Exchange:
    """The state and helpers both I/O halves use (see `Transport`)."""

    def __init__(
        self,
        config: TransportConfig,
        *,
        http_client: httpx.Client | None = None,
        http_async_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._config = config
        self._bases = [config.base_url.rstrip("/")]
        if config.fallback_base_url is not None:
            self._bases.append(config.fallback_base_url.rstrip("/"))
        self._gateway_key = registry.GatewayKey(
            tuple(self._bases), registry.environment(), http_client, http_async_client
        )
        self._digest = registry.key_digest(config.api_key.get_secret_value())
        self._share: registry.Share | None = None
        self._share_lock = threading.Lock()

    def _shared(self) -> registry.Share:
        """The gateway's clients and the key's gate (taken again after a close or a fork)."""
        share = self._share
        if share is None or not share.current:
            with self._share_lock:
                share = self._share
                if share is None or not share.current:
                    share = self._share = registry.share(
                        self._gateway_key,
                        self._digest,
                        self,
                        adaptive=self._config.adaptive_concurrency,
                        clock=self._config.clock,
                    )
        return share

    def _give_back(self) -> GatewayClients | None:
        """Closed: the gateway's clients to close, when no other model uses them."""
        with self._share_lock:
            share, self._share = self._share, None
        if share is None or not share.current:
            return None
        return registry.give_back(self._gateway_key, self)

    def _client(self) -> tuple[httpx.Client, Callable[[], None]]:
        """A sync client of the gateway, and what to call when the call is done with it."""
        return self._shared().clients.take()

    async def _aclient(self) -> tuple[httpx.AsyncClient, Callable[[], None]]:
        """A client of the gateway in this loop, and what to call when the call is done with it."""
        return await self._shared().clients.atake()

    def _retry_plan(self) -> RetryPlan:
        return RetryPlan(self._bases, self._config.max_retries, self._config.rate_limit_timeout)

    @property
    def _turn_timeout(self) -> float:
        """How long a call waits for its turn: the pool timeout (httpx's wait for a connection)."""
        pool = self._config.timeout.pool
        return math.inf if pool is None else pool

    def _too_late(self, waited: float) -> KimiError:
        return KimiRateLimitError(
            f"no turn to send within the pool timeout of {self._turn_timeout:g}s: the key's "
            f"calls are paced after the gateway's 429s (waited {waited:.3g}s)"
        )

    @property
    def _secret(self) -> str:
        return self._config.api_key.get_secret_value()

    def _request(
        self,
        client: httpx.Client | httpx.AsyncClient,
        base: str,
        path: str,
        content: bytes,
        *,
        stream: bool,
    ) -> httpx.Request:
        headers = build_headers(
            api_key=self._secret,
            user_agent=self._config.user_agent,
            default_headers=self._config.default_headers,
            stream=stream,
        )
        return client.build_request(
            "POST", base + path, content=content, headers=headers, timeout=self._config.timeout
        )

    def _undecodable(
        self, exc: httpx.DecodingError, base: str, *, stream: bool = True
    ) -> KimiError:
        return error_after_response(exc, host(base), secret=self._secret, streaming=stream)

    def _attempt_done(
        self,
        response: httpx.Response,
        base: str,
        body: bytes,
        read_error: ReadFailure | None,
        *,
        stream: bool,
    ) -> JsonReply | Failure:
        """A fully read response: its JSON reply, or the failure it means (sync and async)."""
        judged = judge_reply(
            response.status_code,
            response.headers,
            body,
            read_error,
            host(base),
            stream=stream,
            secret=self._secret,
        )
        if isinstance(judged, Failure):
            return judged
        return JsonReply(judged, base, header_request_id(response.headers), response.status_code)
