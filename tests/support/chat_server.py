"""A loopback Chat Completions gateway for ChatKimi's life-cycle and shared-pool tests.

Every POST carrying `SECRET` as its key is answered "OK" by a `FakeKimiGateway` (so the request
is checked against the documents too); any other key gets the documented 401 error body. The
headers of the last request are kept in `ChatServerHandler.seen_headers`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

import httpx

from langchain_kimi.testing import FakeKimiGateway, wire
from langchain_kimi.testing.script import Error
from tests.support.loopback import GatewayHandler, GatewayServer, running

SECRET = "sk-lifecycle-secret-0123456789abcdef"
REQUEST_ID = "req-loopback"
"""The request id of the 401 answers."""
_WRONG_KEY = Error(
    status=401,
    message="invalid api key",
    error_type="authentication_error",
    code="invalid_api_key",
    retry_after=None,
)


class ChatServerHandler(GatewayHandler):
    seen_headers: ClassVar[dict[str, str]] = {}


def answer(request: httpx.Request) -> httpx.Response:
    ChatServerHandler.seen_headers = dict(request.headers.items())
    if request.headers.get("authorization") != f"Bearer {SECRET}":
        body = wire.error_body(_WRONG_KEY, "openai", REQUEST_ID)
        return httpx.Response(401, json=body, headers={"x-request-id": REQUEST_ID})
    gateway = FakeKimiGateway()  # one per request: every request gets the same answer
    gateway.add_reply("OK", reasoning="Say OK.", usage={"input_tokens": 5, "output_tokens": 3})
    return gateway.transport.handle_request(request)


@contextmanager
def serving() -> Iterator[str]:
    """The server's base URL while the block runs."""
    with running(GatewayServer(answer, ChatServerHandler)) as server:
        yield server.url
