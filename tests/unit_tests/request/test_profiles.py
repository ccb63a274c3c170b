"""The capability table's module-level facts, pinned next to it: the documented effort aliases.

000 (Messages, `output_config.effort`) and 004 (Chat Completions, `reasoning_effort`) say the same:
"Por compatibilidad con clientes genéricos, `medium` equivale a `high`, `xhigh` a `max` y
`minimal` / `none` a `low`; `none` no desactiva el razonamiento" (004) -- for compatibility with
generic clients, `medium` means `high`, `xhigh` `max`, and `minimal` / `none` `low`; `none` does
not turn reasoning off.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import pytest

from langchain_kimi._request import profiles
from langchain_kimi._request.profiles import (
    CANONICAL_EFFORTS,
    EFFORT_ALIASES,
    K3,
    K31_PRO,
    Protocol,
    cache_writes_billed_as_input,
    capabilities,
    model_family,
    normalize_effort,
)
from langchain_kimi.testing import FakeKimiGateway

DOCUMENTED = {
    "low": "low",
    "high": "high",
    "max": "max",
    "medium": "high",
    "xhigh": "max",
    "minimal": "low",
    "none": "low",
}


def test_the_aliases_are_the_documented_ones() -> None:
    assert {**{e: e for e in CANONICAL_EFFORTS}, **EFFORT_ALIASES} == DOCUMENTED


@pytest.mark.parametrize(("given", "canonical"), DOCUMENTED.items())
def test_each_documented_effort_maps_to_its_canonical_value(given: str, canonical: str) -> None:
    assert normalize_effort(given) == canonical
    assert normalize_effort(f" {given.upper()} ") == canonical


@pytest.mark.parametrize(
    ("protocol", "field"), [("anthropic", "output_config"), ("openai", "reasoning_effort")]
)
def test_reasoning_effort_none_is_sent_as_low(protocol: Protocol, field: str) -> None:
    """`none` is a documented alias, not a refusal, and reasoning stays on."""
    gw = FakeKimiGateway().add_reply(text="Hi.", reasoning="Greeting.")
    model = gw.chat_model(model=K31_PRO, protocol=protocol, reasoning_effort="none")
    reply = model.invoke("Hello")
    sent = gw.requests[0][field]
    assert (sent["effort"] if protocol == "anthropic" else sent) == "low"
    assert reply.additional_kwargs["reasoning_content"] == "Greeting."


def test_an_undocumented_effort_is_refused_naming_every_accepted_value() -> None:
    with pytest.raises(ValueError) as info:
        normalize_effort("off")
    assert str(info.value) == (
        "reasoning_effort must be one of low, high, max, medium, xhigh, minimal, none; got 'off'"
    )


# --- the lookups every layer relies on ----------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("kimi-k3", "kimi-k3"),
        ("kimi-k3-0901", "kimi-k3"),
        ("kimi-k3.1-pro", "kimi-k3.1-pro"),
        ("kimi-k3.1-pro-highspeed", "kimi-k3.1-pro-highspeed"),
        ("kimi-k3.1-pro-highspeed-0901", "kimi-k3.1-pro-highspeed"),
        ("kimi-k3.1-pro-0901", "kimi-k3.1-pro"),
        ("kimi-k3x", None),
        ("other-kimi-k3", None),
        (None, None),
        (3, None),
    ],
)
def test_model_family_names_the_known_model_of_a_dated_id(
    model: object, family: str | None
) -> None:
    assert model_family(model) == family


@pytest.mark.parametrize(
    ("reply_model", "requested", "folded"),
    [
        ("kimi-k3", None, True),
        ("kimi-k3-0901", "kimi-k3.1-pro", True),  # the reply's model served the call
        ("kimi-k3.1-pro", "kimi-k3", False),
        (None, "kimi-k3", True),
        ("gateway-alias", "kimi-k3", True),
        (None, "kimi-k3.1-pro", False),
        (None, None, False),
    ],
)
def test_only_kimi_k3_bills_cache_writes_as_input(
    reply_model: str | None, requested: str | None, folded: bool
) -> None:
    """004 `cache_write_tokens`: "`kimi-k3` no los distingue y los factura como entrada normal"
    (kimi-k3 does not tell them apart and bills them as normal input)."""
    assert cache_writes_billed_as_input(reply_model, requested) is folded


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_an_unknown_model_gets_the_k31_row_with_checks_off_and_one_warning(
    protocol: Protocol, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(profiles, "_warned_unknown", set())  # once per process: start afresh
    name = f"kimi-next-{protocol}"
    with pytest.warns(UserWarning, match=rf"Unknown Kimi model id '{name}'") as caught:
        row = capabilities(name, protocol)
    assert str(caught[0].message).endswith(
        "(known models: kimi-k3.1-pro, kimi-k3.1-pro-highspeed, kimi-k3)."
    )
    assert row == replace(capabilities(K31_PRO, protocol), model=name, known=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert capabilities(name, protocol).known is False  # warned once only
    assert capabilities(K31_PRO, protocol).known is True


def test_an_unknown_protocol_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"protocol must be one of \('openai', 'anthropic'\), got 'grpc'"
    ):
        capabilities(K31_PRO, "grpc")  # type: ignore[arg-type]


def test_the_langchain_profile_of_a_row() -> None:
    row = capabilities(K3, "anthropic")
    assert row.profile() == {
        "max_input_tokens": 1_048_576,
        "max_output_tokens": row.max_tokens_limit,
        "text_inputs": True,
        "text_outputs": True,
        "image_inputs": row.image_inputs,
        "image_url_inputs": row.image_url_inputs,
        "video_inputs": row.video_inputs,
        "audio_inputs": False,
        "pdf_inputs": False,
        "image_tool_message": row.image_tool_message,
        "pdf_tool_message": False,
        "reasoning_output": True,
        "reasoning_effort_levels": ["max"],
        "tool_calling": True,
        "tool_choice": True,
        "structured_output": False,  # no output_config on kimi-k3 Messages: ToolStrategy
        "tool_call_streaming": True,
        "reasoning_effort_default": "max",
    }
    assert capabilities(K31_PRO, "openai").profile()["reasoning_effort_levels"] == [
        "low",
        "high",
        "max",
    ]
    assert capabilities(K31_PRO, "openai").profile()["structured_output"] is True


def test_a_known_model_supports_only_its_efforts_an_unknown_one_any() -> None:
    assert capabilities(K3, "openai").supports_effort("max") is True
    assert capabilities(K3, "openai").supports_effort("low") is False
    unknown = replace(capabilities(K3, "openai"), known=False)
    assert unknown.supports_effort("low") is True, "checks are off for an unknown model"


def test_all_rows_are_every_known_model_on_each_protocol() -> None:
    rows = profiles.all_rows()
    assert [(r.model, r.protocol) for r in rows] == [
        (model, protocol) for protocol in profiles.PROTOCOLS for model in profiles.KNOWN_MODELS
    ]
    assert all(r == capabilities(r.model, r.protocol) for r in rows)
