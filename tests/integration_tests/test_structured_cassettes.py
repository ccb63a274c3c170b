"""with_structured_output replayed from authored cassettes (cassettes/structured_cassettes/).

vcr matches the JSON request body, so each test also checks the exact body ChatKimi sends:
openai response_format json_schema (strict copy), anthropic K3.1 output_config.format, kimi-k3 on
anthropic falling back to a forced tool. Each cassette holds the invoke and the stream exchange.
"""

from __future__ import annotations

from typing import Any, NotRequired

import pytest
from langchain_core.exceptions import OutputParserException
from pydantic import BaseModel
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from tests.support.recording import ReplayModel

WEATHER_Q = "What is the weather in Paris? Answer with the schema."
TRIP_Q = "Plan a short trip to Portugal."


class Weather(BaseModel):
    """Current weather in a city."""

    city: str
    temperature_c: float
    summary: str | None = None


class Stop(TypedDict):
    name: str
    nights: int


class Trip(TypedDict):
    """A trip plan."""

    destination: str
    stops: list[Stop]
    budget_eur: NotRequired[float]


TRIP_JSON: dict[str, Any] = {
    "title": "trip",
    "description": "A trip plan.",
    "type": "object",
    "properties": {
        "destination": {"type": "string"},
        "stops": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "nights": {"type": "integer"}},
                "required": ["name", "nights"],
            },
        },
        "budget_eur": {"type": "number"},
    },
    "required": ["destination", "stops"],
}
TRIP = {
    "destination": "Portugal",
    "stops": [{"name": "Lisbon", "nights": 2}, {"name": "Porto", "nights": 1}],
}
PARIS = Weather(city="Paris", temperature_c=21.5)


# (cassette, model, protocol, schema, question, expected result)
CASES: list[tuple[str, str, str, Any, str, Any]] = [
    ("openai_pydantic", "kimi-k3.1-pro", "openai", Weather, WEATHER_Q, PARIS),
    (
        "openai_json_schema_nested",
        "kimi-k3.1-pro-highspeed",
        "openai",
        TRIP_JSON,
        TRIP_Q,
        TRIP,  # the strict-mode null on the optional budget_eur is dropped
    ),
    ("anthropic_typeddict", "kimi-k3.1-pro", "anthropic", Trip, TRIP_Q, TRIP),
    ("anthropic_k3_tool", "kimi-k3", "anthropic", Weather, WEATHER_Q, PARIS),
]


def _params() -> list[Any]:
    return [
        pytest.param(
            *case[1:],
            id=case[0],
            marks=[pytest.mark.vcr, pytest.mark.default_cassette(f"{case[0]}.yaml")],
        )
        for case in CASES
    ]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(("model", "protocol", "schema", "question", "expected"), _params())
async def test_invoke_then_stream(
    model: str,
    protocol: str,
    schema: Any,
    question: str,
    expected: Any,
    mode: str,
    vcr: Any,
    replay_model: ReplayModel,
) -> None:
    structured = replay_model(protocol, model).with_structured_output(schema)
    if mode == "sync":
        invoked = structured.invoke(question)
        parts = list(structured.stream(question))
    else:
        invoked = await structured.ainvoke(question)
        parts = [part async for part in structured.astream(question)]
    assert vcr.play_count == 2, "both exchanges were answered from the cassette"
    assert invoked == expected
    assert parts[-1] == expected, "the stream ends with the complete object"
    if not isinstance(expected, BaseModel):
        # dict schemas stream progressively: several growing partial dicts
        assert len(parts) >= 3
        assert all(isinstance(part, dict) for part in parts)
        assert parts[0] != expected


@pytest.mark.vcr
@pytest.mark.default_cassette("anthropic_k3_tool.yaml")
def test_include_raw_keeps_the_forced_tool_call(replay_model: ReplayModel) -> None:
    out = replay_model("anthropic", "kimi-k3").with_structured_output(Weather, include_raw=True)
    result = out.invoke(WEATHER_Q)
    assert result["parsed"] == PARIS
    assert result["parsing_error"] is None
    raw = result["raw"]
    assert raw.tool_calls[0]["name"] == "Weather"
    assert raw.additional_kwargs["reasoning_content"] == (
        "I must call the Weather tool with Paris values."
    )


_WEATHER_JSON: dict[str, Any] = {
    "title": "weather",
    "type": "object",
    "properties": {"city": {"type": "string"}, "temperature_c": {"type": "number"}},
    "required": ["city", "temperature_c"],
    "additionalProperties": False,
}


@pytest.mark.vcr
@pytest.mark.default_cassette("openai_invalid_json.yaml")
def test_include_raw_with_invalid_json(replay_model: ReplayModel) -> None:
    model = replay_model("openai", "kimi-k3.1-pro", max_tokens=64)
    result = model.with_structured_output(_WEATHER_JSON, include_raw=True).invoke(WEATHER_Q)
    assert result["parsed"] is None
    assert isinstance(result["parsing_error"], OutputParserException)
    assert result["raw"].content == '{"city": "Paris", "tempera'
    assert result["raw"].response_metadata["finish_reason"] == "length"


@pytest.mark.vcr
@pytest.mark.default_cassette("openai_invalid_json.yaml")
def test_invalid_json_without_include_raw_raises(replay_model: ReplayModel) -> None:
    model = replay_model("openai", "kimi-k3.1-pro", max_tokens=64)
    with pytest.raises(OutputParserException) as caught:
        model.with_structured_output(_WEATHER_JSON).invoke(WEATHER_Q)
    assert caught.value.llm_output == '{"city": "Paris", "tempera'
