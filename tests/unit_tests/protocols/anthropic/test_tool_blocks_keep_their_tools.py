"""A Messages body never carries tool blocks without their tools (issue 21 item 3).

001 (kimi-k3, Messages) `ToolChoice.type`: "Estrategia de selección: auto deja decidir al modelo,
any exige una herramienta y tool exige la herramienta indicada", enum `auto` / `any` / `tool`:
there is no `none`, so `tool_choice="none"` is kept by sending no tools. But a history holding
`tool_use` / `tool_result` blocks without `tools` is what the Anthropic form refuses, so there
the tools stay (with a one-time warning that kimi-k3 on Messages cannot forbid tool calls).
000 (K3.1, Messages) has no named form: forcing one tool sends only that tool with `any`, which
would leave the history's other tools out: refused before sending, naming them.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from langchain_kimi.protocols.anthropic_messages import request as _request
from tests.support.wire import Wire

K3 = "kimi-k3"
K31 = "kimi-k3.1-pro"


@tool
def get_weather(city: str) -> str:
    """Weather in a city."""
    return "sunny"


@tool
def get_time() -> str:
    """The time."""
    return "noon"


def _tool_history() -> list[BaseMessage]:
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "toolu_1"}
    return [
        HumanMessage("Weather in Paris?"),
        AIMessage(
            "",
            tool_calls=[call],
            additional_kwargs={"reasoning_content": "I will call get_weather."},
        ),
        ToolMessage("sunny", tool_call_id="toolu_1"),
    ]


def _blocks(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == kind
    ]


@pytest.fixture(autouse=True)
def _not_warned_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_request, "_none_kept_tools_warned", False)


def test_k3_none_without_tool_history_sends_no_tools() -> None:
    wire = Wire("anthropic", K3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wire.model.bind_tools([get_weather], tool_choice="none").invoke("hi")
    assert "tools" not in wire.body
    assert "tool_choice" not in wire.body


def test_k3_none_with_tool_history_keeps_the_tools_and_warns_once() -> None:
    wire = Wire("anthropic", K3)
    bound = wire.model.bind_tools([get_weather, get_time], tool_choice="none")
    with pytest.warns(UserWarning, match="cannot forbid tool calls"):
        bound.invoke(_tool_history())
    body = wire.bodies[0]
    assert _blocks(body, "tool_use")
    assert _blocks(body, "tool_result")
    assert [t["name"] for t in body["tools"]] == ["get_weather", "get_time"]
    assert "tool_choice" not in body  # 001 has no `none`; the default lets the model decide
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bound.invoke(_tool_history())  # once per process


@pytest.mark.parametrize("model", [K3, K31])
@pytest.mark.parametrize("choice", [None, "auto", "any", "none", "get_weather"])
def test_every_body_with_tool_blocks_declares_their_tools(model: str, choice: str | None) -> None:
    forced = choice in ("any", "get_weather")  # the reply then calls the tool
    wire = Wire("anthropic", model, calls=["get_weather"] if forced else ())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wire.model.bind_tools([get_weather, get_time], tool_choice=choice).invoke(_tool_history())
    declared = {t["name"] for t in wire.body.get("tools", [])}
    assert {b["name"] for b in _blocks(wire.body, "tool_use")} <= declared


def test_k31_forcing_another_tool_than_the_history_calls_is_refused_before_sending() -> None:
    wire = Wire("anthropic", K31, calls=["get_time"])
    bound = wire.model.bind_tools([get_weather, get_time], tool_choice="get_time")
    with pytest.raises(ValueError, match=r"the history calls \['get_weather'\]"):
        bound.invoke(_tool_history())
    assert wire.bodies == []
    bound.invoke("hi")  # without such a history the one tool is forced with `any`
    assert wire.body["tools"][0]["name"] == "get_time"
    assert wire.body["tool_choice"] == {"type": "any"}
