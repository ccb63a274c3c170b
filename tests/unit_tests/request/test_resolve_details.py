"""`resolve_options` in detail: the peers' names for a call's settings, which settings warn when,
a call's `model`, and the exact words of the refusals the refusal tables do not hold."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import K3, K31_PRO, Protocol
from langchain_kimi._request.resolve import ModelDefaults, resolve_options

TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


def _resolve(
    protocol: Protocol = "anthropic", *, checked: bool = False, stream: bool = False, **kwargs: Any
) -> RequestOptions:
    defaults = ModelDefaults(model=K31_PRO, protocol=protocol, **kwargs.pop("defaults", {}))
    return resolve_options(defaults, None, kwargs, stream=stream, defaults_checked=checked)


def _warnings(**kwargs: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _resolve(**kwargs)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize(
    ("given", "field", "value"),
    [
        ({"max_completion_tokens": 7}, "max_tokens", 7),
        ({"stop_sequences": ["x"]}, "stop", ("x",)),
        ({"stop": "x"}, "stop", ("x",)),
        ({"effort": "low"}, "reasoning_effort", "low"),
    ],
)
def test_a_peers_name_for_a_setting_is_taken(given: dict[str, Any], field: str, value: Any) -> None:
    assert getattr(_resolve(**given), field) == value


def test_a_calls_model_replaces_the_models_own() -> None:
    assert _resolve(model=K3).model == K3
    assert _resolve(model=K3).caps.model == K3


def test_the_stream_flag_is_kept() -> None:
    assert _resolve(stream=True).stream is True
    assert _resolve().stream is False


def test_tool_choice_without_tools_is_dropped() -> None:
    assert _resolve(tool_choice="any").tool_choice is None
    assert _resolve(tools=[TOOL], tool_choice="any").tool_choice is not None


def test_an_ignored_temperature_warns_in_the_documents_words() -> None:
    assert _warnings(protocol="openai", temperature=0.5) == [
        'kimi-k3.1-pro ignores temperature; 004 (Chat Completions): "Temperatura de muestreo, '
        'fijada por el modelo en `1`", "`kimi-k3.1-pro` / `kimi-k3.1-pro-highspeed` lo ignoran '
        'automáticamente". 0.5 is sent and has no effect'
    ]


@pytest.mark.parametrize(
    ("kwargs", "count"),
    [
        ({"protocol": "openai", "temperature": 1}, 0),  # the fixed value: nothing ignored
        ({"protocol": "openai", "top_p": 0.95}, 0),
        ({"protocol": "openai", "top_p": 0.5}, 1),
        ({"protocol": "openai", "checked": True, "defaults": {"temperature": 0.5}}, 0),
        ({"protocol": "openai", "checked": False, "defaults": {"temperature": 0.5}}, 1),
        ({"protocol": "openai", "checked": True, "temperature": 0.5}, 1),
    ],
    ids=["fixed-temperature", "fixed-top_p", "top_p", "model-field-checked", "model-field", "call"],
)
def test_which_sampling_settings_warn(kwargs: dict[str, Any], count: int) -> None:
    assert len(_warnings(**kwargs)) == count


def test_kimi_k3_refuses_rather_than_warns() -> None:
    with pytest.raises(ValueError, match="only accepts temperature=1"):
        _resolve(protocol="openai", model=K3, temperature=0.5)


def test_the_words_of_the_effort_and_stop_refusals() -> None:
    with pytest.raises(ValueError) as effort:
        _resolve(reasoning_effort=3)
    assert str(effort.value) == "reasoning_effort must be a string, got 3"
    with pytest.raises(ValueError) as allowed:
        _resolve(model=K3, reasoning_effort="low")
    assert str(allowed.value) == "kimi-k3 accepts reasoning_effort max only; got 'low'"
    with pytest.raises(ValueError) as surrogate:
        _resolve(stop=["a\udfffb"])
    assert str(surrogate.value) == (
        "stop sequence 'a\\udfffb' holds a lone surrogate, which UTF-8 cannot encode (text must "
        "be valid Unicode): remove or replace it"
    )


def test_a_model_field_is_warned_about_when_checked_first_and_only_then() -> None:
    defaults = ModelDefaults(model=K31_PRO, protocol="openai", top_p=0.5, temperature=0.5)
    with warnings.catch_warnings(record=True) as first:
        warnings.simplefilter("always")
        resolve_options(defaults, None, {}, stream=False)  # at construction
    assert len(first) == 2
    with warnings.catch_warnings(record=True) as later:
        warnings.simplefilter("always")
        resolve_options(defaults, None, {}, stream=False, defaults_checked=True)  # at a call
    assert later == []


def test_extra_body_follows_model_kwargs() -> None:
    defaults = ModelDefaults(model=K31_PRO, protocol="openai", model_kwargs={"a": 1, "b": 1})
    options = resolve_options(defaults, None, {"extra_body": {"b": 2}}, stream=False)
    assert options.extra_body == {"a": 1, "b": 2}
