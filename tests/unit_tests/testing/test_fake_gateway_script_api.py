"""The script's API at its edges (issue 31: gateway.py mutants that survived): error statuses at
their bounds, every field of a scripted error, the Retry-After headers, truncation, a search
round's own reasoning and usage, binding errors, unknown paths and bodies that are not JSON."""

from __future__ import annotations

import pytest

from langchain_kimi.testing import FakeKimiGateway
from tests.unit_tests.testing.raw import post, user


@pytest.mark.parametrize("status", [400, 599])
def test_error_statuses_at_the_bounds_are_accepted(status: int) -> None:
    gw = FakeKimiGateway().add_error(status)
    assert post(gw, "openai", user("Hi")).status_code == status


@pytest.mark.parametrize("status", [399, 600, 200])
def test_error_statuses_out_of_bounds_are_refused(status: int) -> None:
    with pytest.raises(ValueError, match=f"status must be 4xx or 5xx, got {status}"):
        FakeKimiGateway().add_error(status)


def test_every_field_of_a_scripted_error_is_sent() -> None:
    gw = FakeKimiGateway().add_error(
        429,
        "slow down",
        error_type="rate_limit_error",
        code="rate_limited",
        retry_after=1.2,
        headers={"x-extra": "1"},
    )
    response = post(gw, "openai", user("Hi"))
    assert response.json() == {
        "error": {"message": "slow down", "type": "rate_limit_error", "code": "rate_limited"}
    }
    assert response.headers["retry-after"] == "2"
    assert response.headers["retry-after-ms"] == "1200"
    assert response.headers["x-extra"] == "1"
    assert response.headers["x-request-id"] == "req_fake_0001"


def test_a_messages_error_body_names_the_request() -> None:
    gw = FakeKimiGateway().add_error(500)
    body = post(gw, "anthropic", user("Hi", protocol="anthropic")).json()
    assert body == {
        "type": "error",
        "error": {"type": "api_error", "message": "scripted error 500"},
        "request_id": "req_fake_0001",
    }


def test_an_error_can_be_bound_to_its_request() -> None:
    gw = FakeKimiGateway().add_reply(text="fine").add_error(503, when="break me")
    assert post(gw, "openai", user("break me")).status_code == 503
    assert post(gw, "openai", user("other")).json()["choices"][0]["message"]["content"] == "fine"


def test_a_reply_scripted_as_truncated() -> None:
    gw = FakeKimiGateway().add_reply(text='{"city": "Par', truncated=True)
    reply = post(gw, "openai", {**user("Hi"), "response_format": {"type": "json_object"}}).json()
    assert reply["choices"][0]["finish_reason"] == "length"
    gw.add_reply(text="cut", truncated=True)
    assert (
        post(gw, "anthropic", user("Hi", protocol="anthropic")).json()["stop_reason"]
        == "max_tokens"
    )


def test_a_search_round_with_its_own_reasoning_and_usage() -> None:
    usage = {"input_tokens": 50, "output_tokens": 9, "reasoning_tokens": 4}
    gw = FakeKimiGateway().add_web_search("kimi", reasoning="Search it.", usage=usage)
    reply = post(gw, "openai", {**user("Q"), "tools": [{"type": "web_search"}]}).json()
    assert reply["choices"][0]["message"]["reasoning_content"] == "Search it."
    assert reply["usage"]["prompt_tokens"] == 50
    assert reply["usage"]["completion_tokens_details"] == {"reasoning_tokens": 4}
    with pytest.raises(ValueError, match="unknown key"):
        gw.add_web_search("x", usage={"tokens": 1})


def test_scripting_mistakes_are_named() -> None:
    gw = FakeKimiGateway()
    with pytest.raises(ValueError, match=r"^add_reply: a refusal calls no tool$"):
        gw.add_reply(refusal=True, tool_calls=[{"name": "f", "args": {}}])
    with pytest.raises(ValueError, match=r"give reasoning=None \(a default\) or a text$"):
        gw.add_reply(reasoning="", tool_calls=[{"name": "f", "args": {}}])
    with pytest.raises(ValueError, match="reasoning_tokens must not exceed"):
        gw.add_reply(
            reasoning="", usage={"input_tokens": 1, "output_tokens": 0, "reasoning_tokens": 1}
        )
    assert gw.remaining == 0


def test_an_unknown_path_and_a_body_that_is_not_json() -> None:
    import httpx

    gw = FakeKimiGateway().add_reply(text="never served")
    with httpx.Client(transport=gw.transport) as client:
        missing = client.post(
            "https://direct.evolink.ai/v1/completions",
            json={},
            headers={"authorization": "Bearer k"},
        )
        garbled = client.post(
            "https://direct.evolink.ai/v1/chat/completions",
            content=b"{not json",
            headers={"authorization": "Bearer k"},
        )
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"  # the Chat Completions body
    assert garbled.status_code == 400
    assert gw.requests == [{}, None]
    assert gw.paths == ["/v1/completions", "/v1/chat/completions"]
    assert gw.remaining == 1
