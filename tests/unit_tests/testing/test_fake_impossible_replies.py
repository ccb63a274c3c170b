"""Issue 27 items 3, 4: a reply no service could send to the request is a `ScriptError` naming
the step and the request, never served.

000 `ToolChoice`: "auto deja decidir al modelo, any exige una llamada y none desactiva las
herramientas" (auto lets the model decide, any demands a call, none turns tools off); 001: "tool
exige la herramienta indicada" (tool demands the named tool). 004 `response_format` json_schema:
"salida conforme al esquema" (output conforming to the schema).
"""

from __future__ import annotations

import pytest
from langchain_core.tools import tool
from pydantic import BaseModel

from langchain_kimi.testing import FakeKimiGateway, ScriptError

PROTOCOLS = ["openai", "anthropic"]
WEATHER = [{"name": "get_weather", "args": {"city": "Paris"}}]


@tool
def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"{city}: 18°C"


@tool
def get_time(city: str) -> str:
    """Get the local time in a city."""
    return f"{city}: 12:00"


class Capital(BaseModel):
    city: str


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_call_to_an_undeclared_tool(protocol: str) -> None:
    gw = FakeKimiGateway().add_reply(tool_calls=[{"name": "send_email", "args": {}}])
    model = gw.chat_model(protocol=protocol).bind_tools([get_weather])
    with pytest.raises(ScriptError) as caught:
        model.invoke("Weather?")
    message = str(caught.value)
    assert "step 1 (reply calling ['send_email'])" in message
    assert "request #1" in message
    assert "does not declare" in message


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_tool_call_without_any_tool(protocol: str) -> None:
    gw = FakeKimiGateway().add_reply(tool_calls=WEATHER)
    with pytest.raises(ScriptError, match="does not declare"):
        gw.chat_model(protocol=protocol).invoke("Weather?")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_tool_calls_under_tool_choice_none(protocol: str) -> None:
    gw = FakeKimiGateway().add_reply(tool_calls=WEATHER)
    model = gw.chat_model(protocol=protocol).bind_tools([get_weather], tool_choice="none")
    with pytest.raises(ScriptError, match="tool_choice is none"):
        model.invoke("Weather?")


@pytest.mark.parametrize("choice", ["any", "get_weather"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_text_only_when_a_tool_is_forced(protocol: str, choice: str) -> None:
    gw = FakeKimiGateway().add_reply(text="It is sunny.")
    model = gw.chat_model(protocol=protocol).bind_tools([get_weather, get_time], tool_choice=choice)
    with pytest.raises(ScriptError, match="calls no tool, but the request's tool_choice forces"):
        model.invoke("Weather?")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_another_tool_than_the_named_one(protocol: str) -> None:
    gw = FakeKimiGateway().add_reply(tool_calls=[{"name": "get_time", "args": {"city": "Paris"}}])
    model = gw.chat_model(protocol=protocol).bind_tools(
        [get_weather, get_time], tool_choice="get_weather"
    )
    # Messages: ChatKimi may declare only the named tool; either way the call is impossible.
    with pytest.raises(ScriptError, match=r"another tool than the one tool_choice names|declare"):
        model.invoke("Weather?")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_forced_tool_answered_with_its_call_is_served(protocol: str) -> None:
    gw = FakeKimiGateway().add_reply(tool_calls=WEATHER)
    model = gw.chat_model(protocol=protocol).bind_tools([get_weather], tool_choice="any")
    assert model.invoke("Weather?").tool_calls[0]["name"] == "get_weather"


@pytest.mark.parametrize("text", ["Paris", '{"town": "Paris"}', '{"city": 3}'])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_text_that_is_not_json_for_the_schema(protocol: str, text: str) -> None:
    gw = FakeKimiGateway().add_reply(text=text)
    model = gw.chat_model(protocol=protocol).with_structured_output(Capital, method="json_schema")
    with pytest.raises(ScriptError, match="JSON"):
        model.invoke("Capital of France?")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_text_reply_to_a_forced_structured_tool_is_not_a_silent_none(protocol: str) -> None:
    """The second reader's case: `parsed=None` with no error before."""
    gw = FakeKimiGateway().add_reply(text="Paris.")
    model = gw.chat_model(protocol=protocol).with_structured_output(
        Capital, method="function_calling", include_raw=True
    )
    with pytest.raises(ScriptError, match="forces one"):
        model.invoke("Capital of France?")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_empty_reasoning_on_a_tool_call_step_is_refused_when_scripted(protocol: str) -> None:
    """Was: issued, then its faithful replay refused ("reasoning_content is missing")."""
    gw = FakeKimiGateway()
    with pytest.raises(ValueError, match="carries its reasoning"):
        gw.add_reply(reasoning="", tool_calls=WEATHER)
    assert gw.remaining == 0
    gw.add_reply(reasoning="", text="A text turn may have none.")
    assert gw.chat_model(protocol=protocol).invoke("Hi").content == "A text turn may have none."
