"""The transport's I/O loops: one attempt, the retry loop around it, the public calls.

`_http/_async/` is the source, `_http/_sync/` is generated from it by `tools/unasync.py` (`./dev
lint` checks it is current): edit the async file, then run `python -m tools.unasync`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx

from langchain_kimi._errors import KimiError
from langchain_kimi._http._async.event_stream import AsyncEventStream, afirst_wanted
from langchain_kimi._http._async.reading import aiter_events, aread_body
from langchain_kimi._http.config import encode_body, host
from langchain_kimi._http.event_stream import Opened
from langchain_kimi._http.exchange import Exchange, JsonReply, report
from langchain_kimi._http.limits.gate import Gate, TurnTooLateError, await_turn
from langchain_kimi._http.limits.rate import Sent
from langchain_kimi._http.limits.retry import Failure
from langchain_kimi._http.replies import (
    failure_before_response,
    is_open_stream,
)


class AsyncExchange(Exchange):
    """The I/O loops of `Transport` (its `apost_json` and `astream_events`)."""

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
            except BaseException:  # interrupted while waiting for the first event
                await response.aclose()
                raise
            await response.aclose()
            return failure
        try:
            body, read_error = await aread_body(response, self._config.timeout.read)
        finally:
            await response.aclose()
        return self._attempt_done(response, base, body, read_error, stream=stream)

    async def _aturn(self, gate: Gate, ticket: int) -> Sent:
        """Wait for the call's turn at its key's gate, at most the pool timeout."""
        deadline = self._config.clock() + self._turn_timeout
        try:
            return await await_turn(gate, ticket, deadline, self._config.async_sleep)
        except TurnTooLateError as late:
            raise self._too_late(late.waited) from None

    async def _arun(
        self, path: str, body: dict[str, Any], *, stream: bool
    ) -> tuple[JsonReply | Opened, str, Callable[[], None]]:
        """The reply (or open stream), its base URL, and what gives the client back once the
        call is done with it (a stream: when it is closed)."""
        content = encode_body(body)
        gate = self._shared().gate
        client, give_back = await self._aclient()
        try:
            plan = self._retry_plan()
            ticket = gate.ticket()
            while True:
                base = plan.base
                sent = await self._aturn(gate, ticket)
                outcome = await self._aattempt(client, base, path, content, stream=stream)
                report(gate, sent, outcome)
                if not isinstance(outcome, Failure):
                    return outcome, base, give_back
                delay = plan.after(outcome, path)
                if isinstance(delay, KimiError):
                    raise delay
                if delay:
                    await self._config.async_sleep(delay)
        except BaseException:
            give_back()
            raise

    async def apost_json(self, path: str, body: dict[str, Any]) -> JsonReply:
        reply, _, give_back = await self._arun(path, body, stream=False)
        give_back()
        assert isinstance(reply, JsonReply)
        return reply

    def astream_events(
        self, path: str, body: dict[str, Any]
    ) -> AbstractAsyncContextManager[AsyncEventStream]:
        """Open an SSE POST (retrying until its first event arrives) and yield its events."""
        return self._astream_events(path, body)

    @asynccontextmanager
    async def _astream_events(
        self, path: str, body: dict[str, Any]
    ) -> AsyncIterator[AsyncEventStream]:
        opened, base, give_back = await self._arun(path, body, stream=True)
        assert isinstance(opened, Opened)
        events = AsyncEventStream(opened, base, secret=self._secret)
        try:
            yield events
        except BaseException:  # failed, cancelled or interrupted: the connection is not reused
            try:
                await events.aclose()
            finally:
                give_back()
            raise
        await events.afinish(give_back)  # drained within bounds, so the connection can be reused
