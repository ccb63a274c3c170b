# Generated from _async/exchange.py by tools/unasync.py: do not edit.
"""The transport's I/O loops: one attempt, the retry loop around it, the public calls.

`_http/_async/` is the source, `_http/_sync/` is generated from it by `tools/unasync.py` (`./dev
lint` checks it is current): edit the async file, then run `python -m tools.unasync`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import httpx

from langchain_kimi._errors import KimiError
from langchain_kimi._http._sync.event_stream import EventStream, first_wanted
from langchain_kimi._http._sync.reading import iter_events, read_body
from langchain_kimi._http.config import encode_body, host
from langchain_kimi._http.event_stream import Opened
from langchain_kimi._http.exchange import Exchange, JsonReply, report
from langchain_kimi._http.limits.gate import Gate, TurnTooLateError, wait_turn
from langchain_kimi._http.limits.rate import Sent
from langchain_kimi._http.limits.retry import Failure
from langchain_kimi._http.replies import (
    failure_before_response,
    is_open_stream,
)


class SyncExchange(Exchange):
    """The I/O loops of `Transport` (its `apost_json` and `astream_events`)."""

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
            body, read_error = read_body(response, self._config.timeout.read)
        finally:
            response.close()
        return self._attempt_done(response, base, body, read_error, stream=stream)

    def _turn(self, gate: Gate, ticket: int) -> Sent:
        """Wait for the call's turn at its key's gate, at most the pool timeout."""
        deadline = self._config.clock() + self._turn_timeout
        try:
            return wait_turn(gate, ticket, deadline, self._config.sleep)
        except TurnTooLateError as late:
            raise self._too_late(late.waited) from None

    def _run(
        self, path: str, body: dict[str, Any], *, stream: bool
    ) -> tuple[JsonReply | Opened, str, Callable[[], None]]:
        """The reply (or open stream), its base URL, and what gives the client back once the
        call is done with it (a stream: when it is closed)."""
        content = encode_body(body)
        gate = self._shared().gate
        client, give_back = self._client()
        try:
            plan = self._retry_plan()
            ticket = gate.ticket()
            while True:
                base = plan.base
                sent = self._turn(gate, ticket)
                outcome = self._attempt(client, base, path, content, stream=stream)
                report(gate, sent, outcome)
                if not isinstance(outcome, Failure):
                    return outcome, base, give_back
                delay = plan.after(outcome, path)
                if isinstance(delay, KimiError):
                    raise delay
                if delay:
                    self._config.sleep(delay)
        except BaseException:
            give_back()
            raise

    def post_json(self, path: str, body: dict[str, Any]) -> JsonReply:
        reply, _, give_back = self._run(path, body, stream=False)
        give_back()
        assert isinstance(reply, JsonReply)
        return reply

    def stream_events(self, path: str, body: dict[str, Any]) -> AbstractContextManager[EventStream]:
        """Open an SSE POST (retrying until its first event arrives) and yield its events."""
        return self._stream_events(path, body)

    @contextmanager
    def _stream_events(self, path: str, body: dict[str, Any]) -> Iterator[EventStream]:
        opened, base, give_back = self._run(path, body, stream=True)
        assert isinstance(opened, Opened)
        events = EventStream(opened, base, secret=self._secret)
        try:
            yield events
        except BaseException:  # failed, cancelled or interrupted: the connection is not reused
            try:
                events.close()
            finally:
                give_back()
            raise
        events.finish(give_back)  # drained within bounds, so the connection can be reused
