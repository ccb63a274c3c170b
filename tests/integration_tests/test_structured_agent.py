"""create_agent(ChatKimi(...), tools=..., response_format=Schema) replayed from authored cassettes
(cassettes/structured_agent/).

Where the model x protocol has native structured output (profile `structured_output`), create_agent
picks its ProviderStrategy and passes `response_format` through `bind_tools`; ChatKimi turns it
into openai `response_format` / anthropic `output_config.format`, and the agent returns
`structured_response` after ONE model call. anthropic kimi-k3 has none, so create_agent uses its
ToolStrategy (a forced structured-output tool) instead.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool
from pydantic import BaseModel

from tests.support.recording import ReplayModel

QUESTION = "Report the weather in Paris as structured data."


class Weather(BaseModel):
    """Current weather in a city."""

    city: str
    temperature_c: float
    summary: str | None = None


@tool
def get_weather(city: str) -> str:
    """Look up the current weather for a city."""
    raise AssertionError("the agent answers without calling the tool")


@pytest.mark.parametrize(
    ("model", "protocol"),
    [
        pytest.param(
            "kimi-k3.1-pro",
            "openai",
            marks=[pytest.mark.vcr, pytest.mark.default_cassette("openai_provider_strategy.yaml")],
        ),
        pytest.param(
            "kimi-k3.1-pro",
            "anthropic",
            marks=[
                pytest.mark.vcr,
                pytest.mark.default_cassette("anthropic_provider_strategy.yaml"),
            ],
        ),
    ],
)
def test_native_response_format_in_one_call(
    model: str, protocol: str, vcr: Any, replay_model: ReplayModel
) -> None:
    agent = create_agent(
        replay_model(protocol, model), tools=[get_weather], response_format=Weather
    )
    state = agent.invoke({"messages": [{"role": "user", "content": QUESTION}]})
    assert vcr.play_count == 1, "one model call, no tool round"
    assert state["structured_response"] == Weather(
        city="Paris", temperature_c=21.5, summary="Sunny"
    )
    last = state["messages"][-1]
    assert last.tool_calls == []
    assert last.additional_kwargs["reasoning_content"]


@pytest.mark.vcr
@pytest.mark.default_cassette("anthropic_k3_tool_strategy.yaml")
async def test_kimi_k3_on_anthropic_uses_tool_strategy(vcr: Any, replay_model: ReplayModel) -> None:
    agent = create_agent(
        replay_model("anthropic", "kimi-k3"), tools=[get_weather], response_format=Weather
    )
    state = await agent.ainvoke({"messages": [{"role": "user", "content": QUESTION}]})
    assert vcr.play_count == 1
    assert state["structured_response"] == Weather(
        city="Paris", temperature_c=21.5, summary="Sunny"
    )
    assert state["messages"][1].tool_calls[0]["name"] == "Weather"
