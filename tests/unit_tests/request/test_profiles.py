"""The capability table's module-level facts, pinned next to it: the documented effort aliases.

000 (Messages, `output_config.effort`) and 004 (Chat Completions, `reasoning_effort`) say the same:
"Por compatibilidad con clientes genéricos, `medium` equivale a `high`, `xhigh` a `max` y
`minimal` / `none` a `low`; `none` no desactiva el razonamiento" (004) -- for compatibility with
generic clients, `medium` means `high`, `xhigh` `max`, and `minimal` / `none` `low`; `none` does
not turn reasoning off.
"""

from __future__ import annotations

import pytest

from langchain_kimi._request.profiles import (
    CANONICAL_EFFORTS,
    EFFORT_ALIASES,
    K31_PRO,
    Protocol,
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
