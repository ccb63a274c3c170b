"""Capability refusals have one home, `_resolve.resolve_options`, driven by the capability table.

Each refusal is tested here once, on every protocol where the table says it applies, with its
exact message; the adapters only reject shapes their wire cannot express (their own tests).
The limits are tried at the boundary itself: the documented maximum passes, one more fails.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import K3, K31_PRO, Protocol
from langchain_kimi._request.resolve import ModelDefaults, resolve_options
from langchain_kimi.protocols import adapter

BOTH: tuple[Protocol, ...] = ("openai", "anthropic")


def resolve(
    model: str = K31_PRO,
    protocol: Protocol = "anthropic",
    stop: list[str] | None = None,
    **kwargs: Any,
) -> RequestOptions:
    return resolve_options(
        ModelDefaults(model=model, protocol=protocol), stop, kwargs, stream=False
    )


def refusal(model: str, protocol: Protocol, **kwargs: Any) -> str:
    with pytest.raises(ValueError) as info:
        resolve(model, protocol, **kwargs)
    return str(info.value)


def _function(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


SCHEMA = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}}


# --- stop sequences (anthropic K3.1 only: native, at most 5 of at most 32 bytes) -----------


def test_exactly_five_stop_sequences_are_sent() -> None:
    stops = ["a", "b", "c", "d", "e"]
    options = resolve(stop=stops)
    assert options.stop == tuple(stops)
    body = adapter("anthropic").build_request([HumanMessage("hi")], options)
    assert body["stop_sequences"] == stops


def test_six_stop_sequences_are_refused() -> None:
    message = refusal(K31_PRO, "anthropic", stop=["a", "b", "c", "d", "e", "f"])
    assert message == "at most 5 stop sequences are allowed, got 6"


def test_stop_sequence_of_32_bytes_passes_33_is_refused() -> None:
    assert resolve(stop=["ÿ" * 16]).stop == ("ÿ" * 16,)  # 32 bytes in UTF-8
    message = refusal(K31_PRO, "anthropic", stop=["é" * 16 + "x"])
    assert message == f"stop sequence {'é' * 16 + 'x'!r} is 33 bytes in UTF-8; the limit is 32"


@pytest.mark.parametrize(("model", "protocol"), [(K31_PRO, "openai"), (K3, "anthropic")])
def test_emulated_stop_sequences_have_no_wire_limit(model: str, protocol: Protocol) -> None:
    stops = ["a", "b", "c", "d", "e", "f", "g" * 40]
    options = resolve(model, protocol, stop=stops)
    assert options.stop == tuple(stops)
    assert not options.native_stop


# --- max_tokens ------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", BOTH)
def test_max_tokens_range(protocol: Protocol) -> None:
    assert resolve(protocol=protocol, max_tokens=1).max_tokens == 1
    assert resolve(protocol=protocol, max_tokens=1_048_576).max_tokens == 1_048_576
    for value, shown in ((0, "0"), (1_048_577, "1,048,577")):
        message = refusal(K31_PRO, protocol, max_tokens=value)
        assert message == f"max_tokens must be between 1 and 1,048,576, got {shown}"


# --- effort, cache TTL -----------------------------------------------------------------------


@pytest.mark.parametrize("protocol", BOTH)
def test_kimi_k3_accepts_effort_max_only(protocol: Protocol) -> None:
    assert resolve(K3, protocol, reasoning_effort="max").reasoning_effort == "max"
    message = refusal(K3, protocol, reasoning_effort="medium")
    assert message == "kimi-k3 accepts reasoning_effort max only; got 'medium' (= 'high')"


@pytest.mark.parametrize("protocol", BOTH)
def test_cache_ttl_refusals(protocol: Protocol) -> None:
    assert resolve(protocol=protocol, cache_ttl="1h").cache_ttl == "1h"
    message = refusal(K3, protocol, cache_ttl="5m")
    assert message == f"kimi-k3 has no cache TTL option on the {protocol} protocol; drop cache_ttl"
    assert refusal(K31_PRO, protocol, cache_ttl="2h") == "cache_ttl must be one of 5m, 1h, got '2h'"


# --- tools, web search, structured output ----------------------------------------------------


@pytest.mark.parametrize("model", [K31_PRO, K3, "kimi-future"])
def test_tool_count_limit_on_every_model(model: str) -> None:
    # 004's `maxItems: 128` (Chat Completions); 000 / 001 set no limit on Messages.
    tools = [_function(f"t{i}") for i in range(129)]
    assert len(resolve(model, "openai", tools=tools[:128]).tools) == 128
    message = refusal(model, "openai", tools=tools)
    assert message == "at most 128 tools may be bound on the openai protocol; got 129"
    assert len(resolve(model, "anthropic", tools=tools).tools) == 129


def test_web_search_refused_where_the_row_has_none() -> None:
    assert len(resolve(K3, "openai", tools=["web_search"]).tools) == 1
    message = refusal(K3, "anthropic", tools=["web_search"])
    assert message == (
        "built-in web search is not available for kimi-k3 on the anthropic protocol; "
        "use protocol='openai' (all models) or a K3.1 model"
    )


def test_json_mode_refused_on_messages() -> None:
    assert resolve(K3, "openai", response_format={"type": "json_object"}).output_format
    message = refusal(K31_PRO, "anthropic", response_format={"type": "json_object"})
    assert message == (
        "JSON mode (response_format json_object) is not documented on the anthropic protocol; "
        "pass a schema, or use protocol='openai'"
    )


def test_native_structured_output_refused_on_kimi_k3_messages() -> None:
    assert resolve(K31_PRO, "anthropic", response_format=SCHEMA).output_format
    assert resolve(K3, "openai", response_format=SCHEMA).output_format
    message = refusal(K3, "anthropic", response_format=SCHEMA)
    assert message == (
        "kimi-k3 has no native structured output on the anthropic protocol; "
        "use with_structured_output(..., method='function_calling') or protocol='openai'"
    )


# --- sampling (fixed by the service) ---------------------------------------------------------


@pytest.mark.parametrize("name", ["temperature", "top_p"])
@pytest.mark.parametrize("value", [True, float("nan"), float("inf"), "1.0"])
def test_sampling_must_be_a_real_number(name: str, value: object) -> None:
    """`True` is an int to Python, NaN and infinity floats: none is a temperature (infinity
    was sent, as JSON's `null`)."""
    expected = f"{name} must be a finite number, got {value!r}"
    assert refusal(K31_PRO, "openai", **{name: value}) == expected


def test_kimi_k3_on_chat_completions_takes_only_the_fixed_sampling_values() -> None:
    assert resolve(K3, "openai", temperature=1, top_p=0.95).temperature == 1.0
    assert refusal(K3, "openai", temperature=0.9) == (
        "kimi-k3 only accepts temperature=1.0 (fixed by the model); got 0.9"
    )


def test_sampling_is_sent_as_a_float_only_where_the_row_puts_it_on_the_wire() -> None:
    rows = {
        protocol: resolve(K31_PRO, protocol, temperature=1, top_p=0.95).temperature
        for protocol in BOTH
    }
    assert rows == {"openai": 1.0, "anthropic": None}
    assert type(rows["openai"]) is float


@pytest.mark.parametrize("protocol", BOTH)
def test_unset_settings_stay_unset(protocol: Protocol) -> None:
    """Nothing is invented: an unset setting is None (the adapter then sends nothing, or the
    protocol's documented default)."""
    options = resolve(K31_PRO, protocol)
    unset = (options.max_tokens, options.reasoning_effort, options.cache_ttl, options.temperature)
    assert unset == (None, None, None, None)
    assert (options.top_p, options.stop, options.tool_choice) == (None, (), None)


def test_a_calls_stop_replaces_the_models_and_none_keeps_it() -> None:
    defaults = ModelDefaults(model=K31_PRO, protocol="openai", stop=["END"])
    kept = resolve_options(defaults, None, {}, stream=False)
    replaced = resolve_options(defaults, ["HALT"], {}, stream=False)
    assert (kept.stop, replaced.stop) == (("END",), ("HALT",))
