"""Issue 27 items 2, 6, 7: what 004's and 000's prose says, beyond their request schemas.

004, kimi-k3 on Chat Completions: `temperature` "fijada por el modelo en `1` ... `kimi-k3` devuelve
un error para valores no admitidos" (fixed at 1; kimi-k3 returns an error for values it does not
accept); `top_p` likewise at `0.95`; `reasoning_effort` "`kimi-k3`: solo se admite `max`" (only
max); `prompt_cache_options` "`kimi-k3` no admite este parámetro" (does not support it).
000, K3.1 Messages `stop_sequences`: "una coincidencia exacta detiene la generación y se excluye
de la salida. Máximo 5 secuencias, de hasta 32 bytes cada una" (an exact match stops the
generation and is left out of the output; at most 5, of up to 32 bytes each).
"""

from __future__ import annotations

from typing import Any

import pytest

from langchain_kimi.testing import FakeKimiGateway, ScriptError
from tests.unit_tests.testing.raw import error_message, post, user
from tools.schema_validation import validate_response


@pytest.mark.parametrize(
    ("field", "value", "quote"),
    [
        ("temperature", 0.5, "fijada por el modelo en `1`"),
        ("top_p", 0.5, "0.95"),
        ("reasoning_effort", "low", "solo se admite `max`"),
        ("reasoning_effort", "high", "solo se admite `max`"),
        ("prompt_cache_options", {"mode": "implicit", "ttl": "1h"}, "no admite este parámetro"),
    ],
)
def test_kimi_k3_on_chat_refuses_what_004_says_it_refuses(
    field: str, value: Any, quote: str
) -> None:
    gw = FakeKimiGateway().add_reply(text="never served")
    response = post(gw, "openai", {**user("Hi", model="kimi-k3"), field: value})
    assert response.status_code == 400
    assert field in error_message(response)
    assert quote in error_message(response)
    assert gw.remaining == 1


@pytest.mark.parametrize(
    "fields",
    [
        {"temperature": 1, "top_p": 0.95, "reasoning_effort": "max"},
        {},
    ],
)
def test_kimi_k3_on_chat_accepts_the_fixed_values(fields: dict[str, Any]) -> None:
    gw = FakeKimiGateway().add_reply(text="ok")
    assert post(gw, "openai", {**user("Hi", model="kimi-k3"), **fields}).status_code == 200


def test_k3_1_ignores_temperature_as_004_says() -> None:
    gw = FakeKimiGateway().add_reply(text="ok")
    body = {**user("Hi"), "temperature": 0.2, "top_p": 0.5, "reasoning_effort": "low"}
    assert post(gw, "openai", body).status_code == 200


@pytest.mark.parametrize("stream", [False, True])
def test_k3_1_stop_sequences_cut_the_answer(stream: bool) -> None:
    gw = FakeKimiGateway().add_reply(text="Hello END world STOP again")
    model = gw.chat_model(protocol="anthropic", stop=["STOP", "END"], streaming=stream)
    reply = model.invoke("Say hello")
    assert reply.content == "Hello "
    assert gw.requests[0]["stop_sequences"] == ["STOP", "END"]
    assert reply.response_metadata["stop_sequence"] == "END"
    assert reply.response_metadata["stop_reason"] == "end_turn"  # 000's enum has no stop_sequence
    (use,) = [u for u in gw.assumed if u.question == "stop-sequence-reason"]
    assert (use.outcome, use.choice, use.request) == ("served", "strict", 1)


def test_the_stop_reason_of_a_match_is_an_assumption_the_user_can_flip() -> None:
    gw = FakeKimiGateway(assume={"stop-sequence-reason": "lenient"}).add_reply(text="a END b")
    response = post(
        gw, "anthropic", {**user("Hi", protocol="anthropic"), "stop_sequences": ["END"]}
    )
    body = response.json()
    assert (body["stop_reason"], body["stop_sequence"]) == ("stop_sequence", "END")
    assert body["content"][-1] == {"type": "text", "text": "a "}


def test_a_stop_reply_validates_against_000() -> None:
    gw = FakeKimiGateway().add_reply(text="a END b")
    response = post(
        gw, "anthropic", {**user("Hi", protocol="anthropic"), "stop_sequences": ["END"]}
    )
    validate_response(response.json(), "anthropic", "kimi-k3.1-pro")


def test_a_stop_sequence_over_32_bytes_is_refused() -> None:
    gw = FakeKimiGateway().add_reply(text="never served")
    ok = "x" * 32
    too_long = "é" * 17  # 34 bytes in UTF-8, 17 characters
    body = {**user("Hi", protocol="anthropic"), "stop_sequences": [ok, too_long]}
    response = post(gw, "anthropic", body)
    assert response.status_code == 400
    assert "stop_sequences/1: 34 bytes" in error_message(response)
    assert post(gw, "anthropic", {**body, "stop_sequences": [ok]}).status_code == 200


def test_searches_beyond_max_uses_are_a_script_error() -> None:
    gw = FakeKimiGateway().add_web_search("a").add_web_search("b").add_reply(text="two searches")
    body = {
        **user("Search", protocol="anthropic"),
        "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 1}],
    }
    with pytest.raises(ScriptError, match="2 searches, beyond the web search tool's max_uses 1"):
        post(gw, "anthropic", body)


def test_an_issued_tool_use_may_come_back_with_a_block_cache_control() -> None:
    """000: "las marcas en bloques de mensaje no lo sustituyen": block marks are allowed."""
    tools = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    gw = FakeKimiGateway()
    gw.add_reply(tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}}])
    gw.add_reply(text="18°C")
    first = post(gw, "anthropic", {**user("Weather?", protocol="anthropic"), "tools": tools}).json()
    content = [dict(b) for b in first["content"]]
    content[-1]["cache_control"] = {"type": "ephemeral"}
    result = {"type": "tool_result", "tool_use_id": content[-1]["id"], "content": "18°C"}
    body = {
        **user("Weather?", protocol="anthropic"),
        "tools": tools,
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": content},
            {"role": "user", "content": [result]},
        ],
    }
    response = post(gw, "anthropic", body)
    assert response.status_code == 200, response.text
    assert gw.refusals == []


@pytest.mark.parametrize("authorization", ["Bearer ", "Bearer", "Basic azp2", "k", "Token abc"])
def test_only_a_bearer_token_is_a_key(authorization: str) -> None:
    """000 / 004 `bearerAuth`: "Authorization: Bearer YOUR_API_KEY"."""
    gw = FakeKimiGateway().add_reply(text="never served")
    response = post(gw, "openai", user("Hi"), headers={"authorization": authorization})
    assert response.status_code == 401
    assert (
        post(gw, "openai", user("Hi"), headers={"authorization": "bearer abc"}).status_code == 200
    )


def test_reasoning_tokens_above_output_tokens_are_refused_at_scripting() -> None:
    """004 `reasoning_tokens`: "ya incluidos en completion_tokens" (already included in them)."""
    gw = FakeKimiGateway()
    with pytest.raises(ValueError, match="reasoning_tokens must not exceed output_tokens"):
        gw.add_reply(text="x", usage={"input_tokens": 5, "output_tokens": 3, "reasoning_tokens": 4})
    assert gw.remaining == 0
