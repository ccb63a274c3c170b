"""The one fake gateway of the unit tests: ChatKimi with an `httpx.MockTransport` instead of HTTP.

`FakeGateway` records every request (JSON body and path) and answers each with `reply(body,
path)` — by default the smallest valid reply of the protocol the path names ("ok"); a `reply`
may also return any `httpx.Response` (an error status, raw SSE bytes) or raise (a transport error). `offline`
builds a ChatKimi whose gateway fails the test if anything is sent (bad input must be refused
before any I/O). Both give sync and async clients, so every call style goes through them. The
conftest fixtures `gateway` and `offline_model` hand them out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from langchain_kimi import ChatKimi
from langchain_kimi.testing import frames

PLACEHOLDER_KEY = "test-key-not-real"
K31 = "kimi-k3.1-pro"

Reply = Callable[[dict[str, Any], str], Any]
"""`(request body, URL path) -> reply`: a dict (sent as JSON), a str (sent as an SSE body), or an
`httpx.Response` (sent as it is)."""


def minimal_reply(body: dict[str, Any], path: str) -> dict[str, Any]:
    """The smallest valid non-streamed reply of the protocol `path` names, answering "ok": the
    fake gateway's shapes (`langchain_kimi.testing.frames`) with only the required usage counts,
    so that a parser needing an optional field fails here."""
    model = str(body.get("model"))
    if path.endswith("/messages"):
        content = [{"type": "text", "text": "ok"}]
        usage = {"input_tokens": 1, "output_tokens": 1}
        return frames.anthropic_message("msg_fake", model, content, "end_turn", usage)
    message = {"role": "assistant", "content": "ok"}
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    return frames.openai_completion("chatcmpl-fake", model, message, "stop", usage)


class FakeGateway:
    """Answers every request with `reply`; `bodies` / `paths` hold what was sent, in order."""

    def __init__(self, reply: Reply = minimal_reply) -> None:
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        self.paths.append(request.url.path)
        answer = self.reply(body, request.url.path)
        if isinstance(answer, httpx.Response):
            return answer
        if isinstance(answer, str):
            return httpx.Response(200, text=answer, headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json=answer)

    def model(self, protocol: str = "openai", model: str = K31, **fields: Any) -> ChatKimi:
        """A ChatKimi talking to this gateway, sync and async (fields override the defaults)."""
        settings: dict[str, Any] = {
            "model": model,
            "protocol": protocol,
            "api_key": PLACEHOLDER_KEY,
            "http_client": httpx.Client(transport=self.transport),
            "http_async_client": httpx.AsyncClient(transport=self.transport),
        }
        return ChatKimi(**{**settings, **fields})

    @property
    def body(self) -> dict[str, Any]:
        """The body of the one request sent (fails unless exactly one was)."""
        assert len(self.bodies) == 1, f"{len(self.bodies)} requests were sent"
        return self.bodies[0]


def refuse(body: dict[str, Any], path: str) -> Any:
    """A `reply` for tests where nothing may be sent (the request is recorded first)."""
    pytest.fail(f"a request was sent to {path}: {body!r}")


def offline(protocol: str = "openai", model: str = K31, **fields: Any) -> ChatKimi:
    """A ChatKimi whose sync and async transports fail the test if anything is sent."""
    return FakeGateway(reply=refuse).model(protocol, model, **fields)
