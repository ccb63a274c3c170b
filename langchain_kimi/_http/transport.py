"""HTTP transport: pooled httpx clients, auth headers, retries, fallback base URL, I/O loops.

Knows nothing about LangChain messages or the wire JSON beyond error bodies. The decisions (what is
retried, how long to wait, when to use the fallback, which error to raise) live in `_retry`; this
module only holds the thin sync and async I/O loops around them; an open event stream is
`_event_stream`.

A `Transport` owns sockets, locks and loop-bound clients, so it is not picklable: ChatKimi keeps
only the (picklable) `TransportConfig` inputs and recreates the Transport lazily after unpickling.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
)
from dataclasses import dataclass, field
from typing import Any, NoReturn

import httpx
from pydantic import SecretStr

from langchain_kimi._errors import KimiError
from langchain_kimi._http.config import build_headers, encode_body, host, validate_config
from langchain_kimi._http.event_stream import (
    AsyncEventStream,
    EventStream,
    Opened,
    afirst_wanted,
    first_wanted,
)
from langchain_kimi._http.pool import shared as _pool
from langchain_kimi._http.pool.admission import AdmittedCall, Permit, outcome_of
from langchain_kimi._http.reading import aiter_events, aread_body, iter_events, read_body
from langchain_kimi._http.replies import (
    ReadFailure,
    error_after_response,
    failure_before_response,
    header_request_id,
    is_open_stream,
    judge_reply,
)
from langchain_kimi._http.retry import Failure, RetryPlan
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


def _settle(permit: Permit, outcome: JsonReply | Opened | Failure) -> None:
    """Tell the pool how an attempt went; an open stream keeps its slot until it is closed."""
    failure = outcome if isinstance(outcome, Failure) else None
    permit.done(outcome_of(failure), keep=isinstance(outcome, Opened))


class Transport:
    """HTTP to the Kimi gateway. Thread-safe; usable from several event loops in turn.

    Injected clients are used as-is (our timeout is still passed per request) and never closed.
    The clients and their admission (queue, shared cool-down, adaptive window) live in a pool
    shared with every Transport of the same settings (`_pool`).
    """

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
        )
        self._lease: _pool.Lease | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Transport(base_urls={self._bases!r}, max_retries={self._config.max_retries})"

    def __reduce__(self) -> NoReturn:
        raise TypeError("Transport is not picklable; rebuild it from its TransportConfig")

    # -- clients ---------------------------------------------------------------------------------

    def _pool(self) -> _pool.SharedPool:
        lease = self._lease
        if lease is None or lease.returned:
            with self._lock:  # threads sharing one Transport share one lease
                if self._lease is None or self._lease.returned:
                    self._lease = _pool.lease(self._pool_key, owner=self)
                lease = self._lease
        return lease.pool

    def _sync_client(self) -> httpx.Client:
        return self._pool().sync_client()

    async def _async_client(self) -> httpx.AsyncClient:
        return await self._pool().async_client()

    def _admitted(self) -> AdmittedCall:
        return self._pool().admission.call(self._config.timeout.pool)

    def close(self) -> None:
        """Return our share of the pool; the last Transport using it closes its clients."""
        with self._lock:
            lease, self._lease = self._lease, None
        if lease is not None:
            lease.close()

    async def aclose(self) -> None:
        """`close`, also closing the current loop's async client when we are the last user."""
        with self._lock:
            lease, self._lease = self._lease, None
        if lease is not None:
            await lease.aclose()

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

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

    # -- sync I/O --------------------------------------------------------------------------------

    def _attempt(
        self, client: httpx.Client, base: str, path: str, content: bytes, *, stream: bool
    ) -> JsonReply | Opened | Failure:
        request = self._request(client, base, path, content, stream=stream)
        try:
            response = client.send(request, stream=True)
        except httpx.TransportError as exc:
            return failure_before_response(exc, host(base), secret=self._secret)
        except httpx.DecodingError as exc:
            return Failure(
                self._undecodable(exc, base, stream=stream), retryable=False, fallback=False
            )
        if stream and is_open_stream(response.status_code, response.headers):
            events = iter_events(response, self._config.timeout.read)
            try:
                return Opened(response, events, first_wanted(events))
            except httpx.TransportError as exc:
                failure = failure_before_response(exc, host(base), secret=self._secret)
            except httpx.DecodingError as exc:
                failure = Failure(self._undecodable(exc, base), retryable=False, fallback=False)
            except BaseException:  # interrupted while waiting for the first event
                response.close()
                raise
            response.close()
            return failure
        try:
            text, read_error = read_body(response, self._config.timeout.read)
        finally:
            response.close()
        return self._attempt_done(response, base, text, read_error, stream=stream)

    def _run(
        self, path: str, body: dict[str, Any], *, stream: bool
    ) -> tuple[JsonReply | Opened, str, Permit]:
        """The reply (or open stream), its base URL, and its pool permit (held by a stream)."""
        content = encode_body(body)
        client = self._sync_client()
        plan = RetryPlan(self._bases, self._config.max_retries)
        admitted = self._admitted()
        while True:
            base = plan.base
            permit = admitted.enter(self._config.sleep)
            try:
                outcome = self._attempt(client, base, path, content, stream=stream)
            except BaseException:
                permit.release()
                raise
            _settle(permit, outcome)
            if not isinstance(outcome, Failure):
                return outcome, base, permit
            delay = plan.next_delay(outcome, path, requeue=admitted.requeues(outcome))
            if delay is None:
                raise outcome.error
            if delay := admitted.retry_wait(delay, outcome):
                self._config.sleep(delay)

    def post_json(self, path: str, body: dict[str, Any]) -> JsonReply:
        reply, _, _ = self._run(path, body, stream=False)
        assert isinstance(reply, JsonReply)
        return reply

    def stream_events(self, path: str, body: dict[str, Any]) -> AbstractContextManager[EventStream]:
        """Open an SSE POST (retrying until its first event arrives) and yield its events."""
        return self._stream_events(path, body)

    @contextmanager
    def _stream_events(self, path: str, body: dict[str, Any]) -> Iterator[EventStream]:
        opened, base, permit = self._run(path, body, stream=True)
        assert isinstance(opened, Opened)
        events = EventStream(opened, base, secret=self._secret)
        try:
            yield events
        except BaseException:  # failed, or the caller stopped early: the connection is not reused
            opened.response.close()
            permit.release()
            raise
        permit.release()  # the gateway's part is done; the rest of the body is connection upkeep
        events.drain_in_background()  # the caller is done with the events

    # -- async I/O (mirrors the sync loops) -------------------------------------------------------

    async def _aattempt(
        self, client: httpx.AsyncClient, base: str, path: str, content: bytes, *, stream: bool
    ) -> JsonReply | Opened | Failure:
        request = self._request(client, base, path, content, stream=stream)
        try:
            response = await client.send(request, stream=True)
        except httpx.TransportError as exc:
            return failure_before_response(exc, host(base), secret=self._secret)
        except httpx.DecodingError as exc:
            return Failure(
                self._undecodable(exc, base, stream=stream), retryable=False, fallback=False
            )
        if stream and is_open_stream(response.status_code, response.headers):
            events = aiter_events(response, self._config.timeout.read)
            try:
                return Opened(response, events, await afirst_wanted(events))
            except httpx.TransportError as exc:
                failure = failure_before_response(exc, host(base), secret=self._secret)
            except httpx.DecodingError as exc:
                failure = Failure(self._undecodable(exc, base), retryable=False, fallback=False)
            except BaseException:  # cancelled while waiting for the first event
                await response.aclose()
                raise
            await response.aclose()
            return failure
        try:
            text, read_error = await aread_body(response, self._config.timeout.read)
        finally:
            await response.aclose()
        return self._attempt_done(response, base, text, read_error, stream=stream)

    async def _arun(
        self, path: str, body: dict[str, Any], *, stream: bool
    ) -> tuple[JsonReply | Opened, str, Permit]:
        """The reply (or open stream), its base URL, and its pool permit (held by a stream)."""
        content = encode_body(body)
        client = await self._async_client()
        plan = RetryPlan(self._bases, self._config.max_retries)
        admitted = self._admitted()
        while True:
            base = plan.base
            permit = await admitted.aenter(self._config.async_sleep)
            try:
                outcome = await self._aattempt(client, base, path, content, stream=stream)
            except BaseException:
                permit.release()
                raise
            _settle(permit, outcome)
            if not isinstance(outcome, Failure):
                return outcome, base, permit
            delay = plan.next_delay(outcome, path, requeue=admitted.requeues(outcome))
            if delay is None:
                raise outcome.error
            if delay := admitted.retry_wait(delay, outcome):
                await self._config.async_sleep(delay)

    async def apost_json(self, path: str, body: dict[str, Any]) -> JsonReply:
        reply, _, _ = await self._arun(path, body, stream=False)
        assert isinstance(reply, JsonReply)
        return reply

    def astream_events(
        self, path: str, body: dict[str, Any]
    ) -> AbstractAsyncContextManager[AsyncEventStream]:
        """Async twin of `stream_events`."""
        return self._astream_events(path, body)

    @asynccontextmanager
    async def _astream_events(
        self, path: str, body: dict[str, Any]
    ) -> AsyncIterator[AsyncEventStream]:
        opened, base, permit = await self._arun(path, body, stream=True)
        assert isinstance(opened, Opened)
        events = AsyncEventStream(opened, base, secret=self._secret)
        try:
            yield events
            await events.drain()  # the caller is done with the events (not failed, not cancelled)
        finally:
            await opened.response.aclose()
            permit.release()
