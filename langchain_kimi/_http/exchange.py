"""What the sync and async halves of the transport share: the configuration, the pool (clients,
admission), the request, and the reading of a finished attempt. The I/O loops themselves are in
`_async/exchange.py`, from which `_sync/exchange.py` is generated (`tools/unasync.py`): the two
halves cannot drift apart.

Knows nothing about LangChain messages or the wire JSON beyond error bodies. The decisions (what is
retried, how long to wait, when to use the fallback, which error to raise) live in `limits/`.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import SecretStr

from langchain_kimi._errors import KimiError
from langchain_kimi._http.config import build_headers, host, validate_config
from langchain_kimi._http.event_stream import Opened
from langchain_kimi._http.limits.admission import AdmittedCall, Permit
from langchain_kimi._http.limits.outcome import outcome_of
from langchain_kimi._http.limits.retry import Failure, RetryPlan
from langchain_kimi._http.pool import shared as _pool
from langchain_kimi._http.replies import (
    ReadFailure,
    error_after_response,
    header_request_id,
    judge_reply,
)
from langchain_kimi._version import __version__


@dataclass(frozen=True)
class TransportConfig:
    base_url: str
    fallback_base_url: str | None
    api_key: SecretStr
    timeout: httpx.Timeout
    max_retries: int = 2
    default_headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    allow_insecure_http: bool = False
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    async_sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, repr=False)
    user_agent: str = f"langchain-kimi/{__version__}"
    adaptive_concurrency: bool = True
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


@functools.lru_cache(maxsize=32)
def _url(base: str, path: str) -> httpx.URL:
    return httpx.URL(base + path)


def report(permit: Permit, outcome: JsonReply | Opened | Failure) -> None:
    """Tell the pool how an attempt went; an open stream keeps its slot until it is closed."""
    failure = outcome if isinstance(outcome, Failure) else None
    permit.done(outcome_of(failure), keep=isinstance(outcome, Opened))


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
        self._injected_client = http_client
        self._injected_async_client = http_async_client
        self._pool_key = _pool.PoolKey(
            bases=tuple(self._bases),
            key_digest=_pool.PoolKey.digest(config.api_key.get_secret_value()),
            adaptive=config.adaptive_concurrency,
            clock=config.clock,
            http_client=http_client,
            http_async_client=http_async_client,
            environment=_pool.environment(),
        )
        self._pool_use = _pool.PoolUse(self._pool_key)

    # -- clients ---------------------------------------------------------------------------------

    def _pool(self) -> _pool.SharedPool:
        return self._pool_use.pool()

    def _sync_client(self) -> httpx.Client:
        return self._pool().sync_client()

    async def _async_client(self) -> httpx.AsyncClient:
        return await self._pool().async_client()

    def _retry_plan(self) -> RetryPlan:
        return RetryPlan(self._bases, self._config.max_retries, budget=self._config.timeout.pool)

    def _admitted(self) -> AdmittedCall:
        pool = self._pool()
        pool.drains.make_room()  # a full pool's draining connections give way to a new call
        return pool.admission.call(self._config.timeout.pool)

    # -- shared helpers ----------------------------------------------------------------------------

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
        if client is self._injected_client or client is self._injected_async_client:
            # The caller's client may carry its own headers, cookies or auth: let it merge them.
            return client.build_request(
                "POST", base + path, content=content, headers=headers, timeout=self._config.timeout
            )
        # Our own clients have no defaults to merge, so the request is built directly: the
        # merging in `client.build_request` costs ~100 µs per call (measured, docs/benchmarks.md).
        if "accept-encoding" not in headers:
            headers["Accept-Encoding"] = client.headers["Accept-Encoding"]  # as httpx would send
        request = httpx.Request(
            "POST",
            _url(base, path),
            content=content,
            headers=headers,
            extensions={"timeout": self._config.timeout.as_dict()},
        )
        if client.cookies:  # e.g. a load balancer's sticky-session cookie, as httpx would send
            client.cookies.set_cookie_header(request)
        return request

    def _undecodable(
        self, exc: httpx.DecodingError, base: str, *, stream: bool = True
    ) -> KimiError:
        return error_after_response(exc, host(base), secret=self._secret, streaming=stream)

    def _attempt_done(
        self,
        response: httpx.Response,
        base: str,
        text: str,
        read_error: ReadFailure | None,
        *,
        stream: bool,
    ) -> JsonReply | Failure:
        judged = judge_reply(
            response.status_code,
            response.headers,
            text,
            read_error,
            host(base),
            stream=stream,
            secret=self._secret,
        )
        if isinstance(judged, Failure):
            return judged
        return JsonReply(judged, base, header_request_id(response.headers), response.status_code)
