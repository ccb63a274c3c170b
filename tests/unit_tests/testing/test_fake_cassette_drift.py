"""Issue 27 Build 7: the fake and the authored cassettes cannot drift.

For every 200 interaction in `cassettes/` (see `drift.py` for how the script is built from the
cassette's reply and what "same" means): the fake accepts the cassette's request, its reply
validates against the same document, and ChatKimi parses both replies into the same AIMessage.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage

from langchain_kimi.testing import FakeKimiGateway
from langchain_kimi.testing.documents import response_problems
from tests.unit_tests.testing import drift
from tests.unit_tests.testing.raw import MESSAGES_HEADERS, post
from tools.schema_validation import validate_response

EXCHANGES = list(drift.exchanges())


def _usage(message: AIMessage) -> dict[str, Any]:
    """The counts; a detail of 0 is the same as a detail not sent (the fake sends every detail
    its document names, an authored cassette may leave zeros out)."""
    usage: dict[str, Any] = dict(message.usage_metadata or {})
    for name in ("input_token_details", "output_token_details"):
        details = {k: v for k, v in (usage.pop(name, None) or {}).items() if v}
        if details:
            usage[name] = details
    return usage


def _same(message: AIMessage) -> dict[str, Any]:
    return {
        "content": message.content,
        "reasoning": message.additional_kwargs.get("reasoning_content"),
        "tool_calls": [(c["name"], c["args"]) for c in message.tool_calls],
        "invalid_tool_calls": [(c["name"], c["args"]) for c in message.invalid_tool_calls],
        "usage": _usage(message),
        "finish_reason": message.response_metadata.get("finish_reason"),
    }


def test_the_cassettes_hold_many_exchanges_of_both_protocols() -> None:
    assert len(EXCHANGES) > 100
    assert {e.protocol for e in EXCHANGES} == {"openai", "anthropic"}
    assert any(e.stream for e in EXCHANGES)


@pytest.mark.parametrize("exchange", EXCHANGES, ids=lambda e: e.name)
def test_the_fake_answers_a_cassettes_request_as_the_cassette_does(
    exchange: drift.Exchange,
) -> None:
    model = str(exchange.body.get("model"))
    recorded = drift.as_json(exchange.protocol, exchange.reply, exchange.stream)
    gw = FakeKimiGateway()
    drift.script_from(gw, exchange.protocol, recorded, model)
    response = post(gw, exchange.protocol, exchange.body, MESSAGES_HEADERS)
    assert response.status_code == 200, (gw.refusals, response.text[:500])
    served = drift.as_json(exchange.protocol, response.text, exchange.stream)
    if not exchange.stream:
        assert response_problems(served, exchange.protocol, model) == []
        validate_response(served, exchange.protocol, model)
    assert _same(drift.parse(exchange.protocol, served, model)) == _same(
        drift.parse(exchange.protocol, recorded, model)
    )
