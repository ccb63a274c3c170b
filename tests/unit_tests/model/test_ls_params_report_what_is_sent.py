"""Tracing reports what the request carries (issue 30 item 2), as ChatAnthropic does.

LangSmith reads `ls_max_tokens` / `ls_temperature` from `_get_ls_params`. A Messages request
always carries `max_tokens` (000 and 001 list it under `required`), so ChatKimi sends 131,072 when
the caller set none; a Chat Completions request carries `max_completion_tokens` only when set (004:
"Por defecto: 131072" is the service's default, not something ChatKimi sends). `temperature` is
sent on Chat Completions only: neither Messages document has the field.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from langchain_kimi.testing import FakeKimiGateway
from tests.support.anthropic_peer import recording_chat_anthropic

SENT_MAX_TOKENS = {"anthropic": "max_tokens", "openai": "max_completion_tokens"}


def _sent_and_reported(protocol: str, **fields: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    gateway = FakeKimiGateway().add_reply("Hi.")
    model = gateway.chat_model(protocol=protocol, **fields)
    model.invoke("Hello")
    (body,) = gateway.requests
    return body, dict(model._get_ls_params())


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_ls_max_tokens_is_the_max_tokens_the_request_carries(protocol: str) -> None:
    body, reported = _sent_and_reported(protocol)
    assert reported.get("ls_max_tokens") == body.get(SENT_MAX_TOKENS[protocol])


def test_messages_reports_the_131072_it_sends_when_max_tokens_is_unset() -> None:
    body, reported = _sent_and_reported("anthropic")
    assert body["max_tokens"] == 131_072
    assert reported["ls_max_tokens"] == 131_072


def test_chat_completions_sends_and_reports_no_max_tokens_when_unset() -> None:
    body, reported = _sent_and_reported("openai")
    assert "max_completion_tokens" not in body
    assert "ls_max_tokens" not in reported


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_a_set_max_tokens_is_sent_and_reported(protocol: str) -> None:
    body, reported = _sent_and_reported(protocol, max_tokens=300)
    assert body[SENT_MAX_TOKENS[protocol]] == 300
    assert reported["ls_max_tokens"] == 300


def test_a_per_call_max_tokens_is_reported_under_either_name() -> None:
    model = FakeKimiGateway().chat_model(protocol="anthropic")
    assert model._get_ls_params(max_tokens=20)["ls_max_tokens"] == 20
    assert model._get_ls_params(max_completion_tokens=30)["ls_max_tokens"] == 30


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_ls_temperature_only_where_temperature_is_sent(protocol: str) -> None:
    with pytest.warns(UserWarning, match="temperature"):  # 0.5 has no effect: ChatKimi says so
        body, reported = _sent_and_reported(protocol, temperature=0.5)
    assert reported.get("ls_temperature") == body.get("temperature")
    assert ("temperature" in body) is (protocol == "openai")


def test_chat_anthropic_oracle_reports_the_max_tokens_it_sends() -> None:
    sent: list[httpx2.Request] = []
    peer = recording_chat_anthropic(sent)
    peer.invoke("Hello")
    (request,) = sent
    assert peer._get_ls_params()["ls_max_tokens"] == json.loads(request.content)["max_tokens"]
