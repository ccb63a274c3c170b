"""`anthropic-version` on Messages requests (issue 30 item 5), with ChatAnthropic as the oracle.

000 and 001 name one request header, `Authorization: Bearer` ("Todas las interfaces requieren
autenticación mediante Bearer Token"); neither requires nor forbids `anthropic-version`. Every
Anthropic client sends it, so ChatKimi sends the same value on Messages requests (the live
question `anthropic-version` in tools/live/questions.py asks whether the gateway needs it), and
not on Chat Completions, whose clients do not.
"""

from __future__ import annotations

import httpx
import httpx2
import pytest

from langchain_kimi.testing import FakeKimiGateway
from tests.support.anthropic_peer import recording_chat_anthropic


def _kimi_request_headers(protocol: str, **fields: object) -> httpx.Headers:
    gateway = FakeKimiGateway().add_reply("Hi.")
    sent: list[httpx.Request] = []
    client = httpx.Client(transport=gateway.transport, event_hooks={"request": [sent.append]})
    model = gateway.chat_model(protocol=protocol, http_client=client, **fields)
    assert model.invoke("Hello").content == "Hi."  # the fake gateway serves it
    (request,) = sent
    return request.headers


def _peer_anthropic_version() -> str:
    sent: list[httpx2.Request] = []
    recording_chat_anthropic(sent).invoke("Hello")
    (request,) = sent
    return request.headers["anthropic-version"]


def test_messages_requests_carry_an_anthropic_version_as_chat_anthropic_does() -> None:
    # The installed anthropic SDK (2.x) sends a later date than 2023-06-01; ChatKimi keeps the
    # version the documents' Messages shape was published under (the reason is in request.py).
    assert _peer_anthropic_version()
    assert _kimi_request_headers("anthropic").get_list("anthropic-version") == ["2023-06-01"]


def test_chat_completions_requests_carry_no_anthropic_version() -> None:
    assert "anthropic-version" not in _kimi_request_headers("openai")


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_default_headers_set_anthropic_version_on_either_protocol(protocol: str) -> None:
    headers = _kimi_request_headers(protocol, default_headers={"Anthropic-Version": "2099-01-01"})
    assert headers.get_list("anthropic-version") == ["2099-01-01"]


async def test_async_messages_requests_carry_it_too() -> None:
    gateway = FakeKimiGateway().add_reply("Hi.")
    sent: list[httpx.Request] = []

    async def record(request: httpx.Request) -> None:
        sent.append(request)

    client = httpx.AsyncClient(transport=gateway.transport, event_hooks={"request": [record]})
    model = gateway.chat_model(protocol="anthropic", http_async_client=client)
    await model.ainvoke("Hello")
    assert sent[0].headers["anthropic-version"] == "2023-06-01"
