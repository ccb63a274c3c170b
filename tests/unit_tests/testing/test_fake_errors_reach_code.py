"""Issue 27 item 1 / Build 4: a scripted error reaches the code under test, and retries happen
only as the model's `max_retries` says.

004 and 000 name `https://api.evolink.ai` the fallback ("sirve como dirección de respaldo para
los modelos de texto"); the fake serves it only when a test asks for the switch.
"""

from __future__ import annotations

import pytest

from langchain_kimi import KimiAPIError, KimiRateLimitError
from langchain_kimi.testing import FakeKimiGateway, ScriptError

PROTOCOLS = ["openai", "anthropic"]


@pytest.mark.parametrize("status", [500, 503, 529])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_scripted_server_error_reaches_the_code_at_once(protocol: str, status: int) -> None:
    gw = FakeKimiGateway().add_error(status).add_reply(text="never served")
    with pytest.raises(KimiAPIError) as caught:
        gw.chat_model(protocol=protocol).invoke("Hi")
    assert caught.value.status_code == status
    assert gw.remaining == 1, "the error used one step, and nothing moved on to the next"
    assert len(gw.requests) == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_max_retries_two_is_three_attempts_on_three_steps(protocol: str) -> None:
    gw = FakeKimiGateway()
    for _ in range(3):
        gw.add_error(500, retry_after=0.001)
    gw.add_reply(text="never served")
    with pytest.raises(KimiAPIError):
        gw.chat_model(protocol=protocol, max_retries=2).invoke("Hi")
    assert len(gw.requests) == 3
    assert gw.remaining == 1
    assert gw.hosts == ["direct.evolink.ai"] * 3


def test_a_retried_429_then_a_reply() -> None:
    gw = FakeKimiGateway().add_error(429, retry_after=0.001).add_reply(text="ok")
    # A refusal spends no retry: it waits within `rate_limit_timeout` (0 in the kit: raised).
    assert gw.chat_model(rate_limit_timeout=1).invoke("Hi").content == "ok"
    with pytest.raises(KimiRateLimitError):
        FakeKimiGateway().add_error(429).chat_model(max_retries=5).invoke("Hi")


def test_the_fallback_switch_is_served_only_when_asked() -> None:
    gw = FakeKimiGateway().add_error(503).add_reply(text="from the fallback")
    reply = gw.chat_model(fallback=True).invoke("Hi")
    assert reply.content == "from the fallback"
    assert gw.hosts == ["direct.evolink.ai", "api.evolink.ai"]


def test_a_users_own_fallback_url_is_served() -> None:
    gw = FakeKimiGateway().add_error(500).add_reply(text="from mine")
    model = gw.chat_model(fallback_base_url="https://backup.example.com")
    assert model.invoke("Hi").content == "from mine"
    assert gw.hosts[-1] == "backup.example.com"


def test_a_client_of_its_own_reaching_the_fallback_is_told_why() -> None:
    import httpx

    from langchain_kimi import ChatKimi

    gw = FakeKimiGateway().add_error(503).add_reply(text="never served")
    model = ChatKimi(
        api_key="fake-kimi-gateway-key",
        max_retries=0,
        http_client=httpx.Client(transport=gw.transport),
    )
    with pytest.raises(ScriptError, match=r"fallback.*api\.evolink\.ai.*fallback=True"):
        model.invoke("Hi")
    assert gw.remaining == 1
