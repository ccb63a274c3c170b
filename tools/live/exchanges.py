"""Every HTTP exchange of a live run, captured below httpx's client and kept as plain data.

The capture wraps httpx's own transports, so ChatKimi, raw probes and the langchain-tests suites
are all seen the same way, streams included: the body is teed while the caller reads it, so
streaming behaviour is unchanged. Exchanges are appended to a JSON-lines file (one per line) so a
pytest subprocess and the runner can share them.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from langchain_kimi._secrets import is_credential_name

ENDPOINTS = {"/v1/messages": "anthropic", "/v1/chat/completions": "openai"}


@dataclass
class Exchange:
    method: str
    url: str
    request_headers: dict[str, str]
    request_body: str
    status: int = 0
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str = ""
    test: str = ""
    started: float = 0.0
    first_byte_s: float | None = None
    elapsed_s: float | None = None

    @property
    def path(self) -> str:
        return httpx.URL(self.url).path

    @property
    def protocol(self) -> str | None:
        return ENDPOINTS.get(self.path)

    @property
    def request_json(self) -> Any:
        try:
            return json.loads(self.request_body) if self.request_body else None
        except ValueError:
            return None

    @property
    def model(self) -> str:
        body = self.request_json
        return str(body.get("model")) if isinstance(body, dict) else ""

    @property
    def is_stream(self) -> bool:
        return "text/event-stream" in self.response_headers.get("content-type", "")


class ExchangeLog:
    """Thread-safe sink: kept in memory and, when given a path, appended as JSON lines."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.items: list[Exchange] = []
        self.current_test = ""
        self._lock = threading.Lock()

    def add(self, exchange: Exchange) -> None:
        with self._lock:
            self.items.append(exchange)
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(asdict(exchange), ensure_ascii=False) + "\n")

    @staticmethod
    def read(path: Path) -> list[Exchange]:
        if not path.exists():
            return []
        exchanges = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                exchanges.append(Exchange(**json.loads(line)))
            except ValueError:
                continue  # a line cut short when a timed-out run was stopped
        return exchanges


PLACEHOLDER_AUTH = "Bearer <EVOLINK_API_KEY>"


def scrub_headers(headers: Any) -> dict[str, str]:
    """Lower-cased headers with every credential gone (`Authorization` kept as a placeholder,
    `Cookie`, `X-Proxy-Token`, `x-api-key`, ... dropped): the key never leaves this process."""
    clean = {}
    for name, value in headers.items():
        lowered = name.lower()
        if lowered == "authorization":
            clean[lowered] = PLACEHOLDER_AUTH
        elif not is_credential_name(lowered):
            clean[lowered] = value
    return clean


def _start(request: httpx.Request, log: ExchangeLog) -> Exchange:
    request.read()
    return Exchange(
        method=request.method,
        url=str(request.url),
        request_headers=scrub_headers(request.headers),
        request_body=request.content.decode("utf-8", "replace"),
        test=log.current_test,
        started=time.monotonic(),
    )


def _finish(exchange: Exchange, response: httpx.Response) -> None:
    exchange.status = response.status_code
    exchange.response_headers = scrub_headers(response.headers)


class _TeeStream(httpx.SyncByteStream):
    def __init__(self, inner: Any, exchange: Exchange, done: Callable[[], None]) -> None:
        self._inner, self._exchange, self._done, self._parts = inner, exchange, done, []

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            self._note(chunk)
            yield chunk

    def _note(self, chunk: bytes) -> None:
        if self._exchange.first_byte_s is None:
            self._exchange.first_byte_s = time.monotonic() - self._exchange.started
        self._parts.append(chunk)

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._seal()

    def _seal(self) -> None:
        if self._done is None:
            return
        self._exchange.response_body = b"".join(self._parts).decode("utf-8", "replace")
        self._exchange.elapsed_s = time.monotonic() - self._exchange.started
        done, self._done = self._done, None
        done()


class _AsyncTeeStream(_TeeStream, httpx.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._note(chunk)
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            self._seal()


def install(log: ExchangeLog) -> Callable[[], None]:
    """Patch httpx's transports to tee every exchange into `log`; returns the undo function."""
    sync_original = httpx.HTTPTransport.handle_request
    async_original = httpx.AsyncHTTPTransport.handle_async_request

    def handle_request(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        exchange = _start(request, log)
        response = sync_original(self, request)
        _finish(exchange, response)
        response.stream = _TeeStream(response.stream, exchange, lambda: log.add(exchange))
        return response

    async def handle_async_request(
        self: httpx.AsyncHTTPTransport, request: httpx.Request
    ) -> httpx.Response:
        exchange = _start(request, log)
        response = await async_original(self, request)
        _finish(exchange, response)
        response.stream = _AsyncTeeStream(response.stream, exchange, lambda: log.add(exchange))
        return response

    httpx.HTTPTransport.handle_request = handle_request  # type: ignore[method-assign]
    httpx.AsyncHTTPTransport.handle_async_request = handle_async_request  # type: ignore[method-assign]

    def undo() -> None:
        httpx.HTTPTransport.handle_request = sync_original  # type: ignore[method-assign]
        httpx.AsyncHTTPTransport.handle_async_request = async_original  # type: ignore[method-assign]

    return undo
