"""A tool-shaped schema's description survives `with_structured_output` in every dict form.

The Anthropic form (`{"name", "description", "input_schema"}`) and the bare function form
(`{"name", "description", "parameters"}`) carry the description beside the schema, not inside
it; langchain-anthropic's `convert_to_anthropic_tool` keeps it, and so must the forced tool.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_anthropic.chat_models import convert_to_anthropic_tool

from langchain_kimi._request.tools import schema_parts
from langchain_kimi.testing import FakeKimiGateway

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
FORMS = {
    "anthropic": {"name": "weather", "description": "Current weather.", "input_schema": PARAMETERS},
    "function": {"name": "weather", "description": "Current weather.", "parameters": PARAMETERS},
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_schema_parts_keeps_the_description_beside_the_schema(form: str) -> None:
    oracle = convert_to_anthropic_tool(FORMS[form])
    assert schema_parts(FORMS[form]) == (oracle["name"], oracle["description"], PARAMETERS)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_forced_tool_sent_carries_the_description(form: str) -> None:
    gateway = FakeKimiGateway()
    gateway.add_reply(tool_calls=[{"name": "weather", "args": {"city": "Paris"}}])
    model = gateway.chat_model(protocol="anthropic")
    runnable = model.with_structured_output(FORMS[form], method="function_calling")
    assert runnable.invoke("hi") == {"city": "Paris"}
    (tool,) = gateway.requests[0]["tools"]
    assert tool["description"] == "Current weather."


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_form_without_a_description_has_none(form: str) -> None:
    bare = {key: value for key, value in FORMS[form].items() if key != "description"}
    assert schema_parts(bare) == ("weather", "", PARAMETERS)
