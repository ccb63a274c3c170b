"""Write cassettes/structured_cassettes/*.yaml and cassettes/structured_agent/*.yaml.

Run `python -m tools.authoring.structured`. with_structured_output on both protocols (native
json_schema, the kimi-k3 forced-tool fallback, a reply cut off mid-JSON) and create_agent with a
response_format. Every request and response body, JSON schemas included, is written out by hand
from spec/*.yaml; a schema is what ChatKimi must send for the caller's pydantic model, TypedDict
or dict, spelled out rather than computed.
"""

from __future__ import annotations

from typing import Any

from langchain_kimi.testing import frames
from tools.authoring import _kit
from tools.authoring._kit import Cassettes, exchange, render

SIG = "EqQDCkgIBxABGAIqQKimiStructuredAuthoredFromSpecSignature0aLyE9gTiUw4sPnQ2mHvYdCxK6jRbA5oFz1eIlSuN7gqWy3tVhDp0kZcMxOa8SDBpG2n4rQv7yUeJwLhoMT2xRk9aBcVd3eFgHIjCq5Wm1Ns8Yt0Lr4Kp6Jz2Xv9Ub7AAAAGAE="
USAGE_A = frames.anthropic_usage_counts(40, 30, 12)
USAGE_O = frames.openai_usage_counts(40, 30, 12)


def oa_resp(
    rid: str, model: str, content: str, reasoning: str, finish: str = "stop"
) -> frames.Json:
    message: frames.Json = {"role": "assistant", "content": content, "reasoning_content": reasoning}
    return frames.openai_completion(rid, model, message, finish, USAGE_O)


def oa_sse(rid: str, model: str, pieces: list[str], reasoning: str) -> str:
    chunks = [
        frames.openai_chunk(
            rid, model, {"role": "assistant", "content": "", "reasoning_content": ""}
        ),
        frames.openai_chunk(rid, model, {"reasoning_content": reasoning}),
        *[frames.openai_chunk(rid, model, {"content": p}) for p in pieces],
        frames.openai_chunk(rid, model, {}, "stop"),
        frames.openai_usage_chunk(rid, model, USAGE_O),
    ]
    return frames.frame_openai(chunks)


def an_resp(
    rid: str, model: str, blocks: list[frames.Json], reasoning: str, stop: str = "end_turn"
) -> frames.Json:
    thinking: frames.Json = {"type": "thinking", "thinking": reasoning, "signature": SIG}
    return frames.anthropic_message(rid, model, [thinking, *blocks], stop, USAGE_A)


def an_sse(
    rid: str,
    model: str,
    reasoning: str,
    block: frames.Json,
    pieces: list[str],
    stop: str = "end_turn",
) -> str:
    kind, key = (
        ("text_delta", "text") if block["type"] == "text" else ("input_json_delta", "partial_json")
    )
    final = {k: USAGE_A[k] for k in ("output_tokens", "output_tokens_details")}
    events = [
        frames.message_start(rid, model, frames.start_usage(USAGE_A)),
        frames.block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        frames.block_delta(0, {"type": "thinking_delta", "thinking": reasoning}),
        frames.block_delta(0, {"type": "signature_delta", "signature": SIG}),
        frames.block_stop(0),
        frames.block_start(1, block),
        *[frames.block_delta(1, {"type": kind, key: p}) for p in pieces],
        frames.block_stop(1),
        frames.message_delta(stop, final),
        frames.MESSAGE_STOP,
    ]
    return frames.frame_anthropic(events)


def pair(protocol: str, body: dict[str, Any], resp: frames.Json, sse: str) -> list[frames.Json]:
    """The same hand-written body invoked, then streamed."""
    return [exchange(protocol, body, resp), exchange(protocol, {**body, "stream": True}, sse)]


def structured_output() -> Cassettes:
    """with_structured_output: structured_cassettes/."""
    files: Cassettes = {}
    user: list[frames.Json] = [
        {"role": "user", "content": "What is the weather in Paris? Answer with the schema."}
    ]
    trip_user: list[frames.Json] = [{"role": "user", "content": "Plan a short trip to Portugal."}]

    # --- openai, pydantic Weather, json_schema strict (optional `summary` made nullable) ----------
    weather_strict: frames.Json = {
        "title": "Weather",
        "description": "Current weather in a city.",
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "temperature_c": {"type": "number"},
            "summary": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["city", "temperature_c", "summary"],
        "additionalProperties": False,
    }
    body: frames.Json = {
        "model": "kimi-k3.1-pro",
        "messages": user,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "Weather", "strict": True, "schema": weather_strict},
        },
    }
    answer = '{"city": "Paris", "temperature_c": 21.5, "summary": null}'
    reasoning = "The user wants Paris weather as JSON; summary is unknown, so null."
    files["structured_cassettes/openai_pydantic.yaml"] = render(
        pair(
            "openai",
            body,
            oa_resp("chatcmpl-kimiStructPyd1", "kimi-k3.1-pro", answer, reasoning),
            oa_sse(
                "chatcmpl-kimiStructPyd1",
                "kimi-k3.1-pro",
                ['{"city": "Par', 'is", "temperature_c": 21', '.5, "summary": null}'],
                reasoning,
            ),
        ),
        "Pydantic schema on /v1/chat/completions: response_format json_schema, strict, the optional\n`summary` sent nullable and required; the model answers null, which the parser drops.",
    )

    # --- openai highspeed, JSON-schema dict with nested array and an optional field ---------------
    trip_strict: frames.Json = {
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
                    "additionalProperties": False,
                },
            },
            "budget_eur": {"type": ["number", "null"]},
        },
        "required": ["destination", "stops", "budget_eur"],
        "additionalProperties": False,
    }
    body = {
        "model": "kimi-k3.1-pro-highspeed",
        "messages": trip_user,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "trip", "strict": True, "schema": trip_strict},
        },
    }
    answer = '{"destination": "Portugal", "stops": [{"name": "Lisbon", "nights": 2}, {"name": "Porto", "nights": 1}], "budget_eur": null}'
    reasoning = "Two stops: Lisbon then Porto. No budget given."
    files["structured_cassettes/openai_json_schema_nested.yaml"] = render(
        pair(
            "openai",
            body,
            oa_resp("chatcmpl-kimiStructTrip2", "kimi-k3.1-pro-highspeed", answer, reasoning),
            oa_sse(
                "chatcmpl-kimiStructTrip2",
                "kimi-k3.1-pro-highspeed",
                [
                    '{"destination": "Portugal", "stops": [{"name": "Lis',
                    'bon", "nights": 2}, {"name": "Porto", ',
                    '"nights": 1}], "budget_eur": null}',
                ],
                reasoning,
            ),
        ),
        "JSON-schema dict with a nested array of objects on /v1/chat/completions (highspeed): the\nstrict copy closes the nested objects too; the stream yields growing partial dicts.",
    )

    # --- anthropic K3.1, TypedDict (nested, NotRequired) via output_config.format ------------------
    trip_td: frames.Json = {
        "$defs": {
            "Stop": {
                "properties": {
                    "name": {"title": "Name", "type": "string"},
                    "nights": {"title": "Nights", "type": "integer"},
                },
                "required": ["name", "nights"],
                "title": "Stop",
                "type": "object",
            }
        },
        "description": "A trip plan.",
        "properties": {
            "destination": {"title": "Destination", "type": "string"},
            "stops": {"items": {"$ref": "#/$defs/Stop"}, "title": "Stops", "type": "array"},
            "budget_eur": {"title": "Budget Eur", "type": "number"},
        },
        "required": ["destination", "stops"],
        "title": "Trip",
        "type": "object",
    }
    body = {
        "model": "kimi-k3.1-pro",
        "max_tokens": 131072,
        "messages": trip_user,
        "output_config": {"format": {"type": "json_schema", "schema": trip_td}},
    }
    answer = '{"destination": "Portugal", "stops": [{"name": "Lisbon", "nights": 2}, {"name": "Porto", "nights": 1}]}'
    files["structured_cassettes/anthropic_typeddict.yaml"] = render(
        pair(
            "anthropic",
            body,
            an_resp(
                "msg_01KimiStructTrip3",
                "kimi-k3.1-pro",
                [{"type": "text", "text": answer}],
                reasoning,
            ),
            an_sse(
                "msg_01KimiStructTrip3",
                "kimi-k3.1-pro",
                reasoning,
                {"type": "text", "text": ""},
                [
                    '{"destination": "Portugal", "stops": [{"name": "Lis',
                    'bon", "nights": 2}, {"name": "Porto", ',
                    '"nights": 1}]}',
                ],
            ),
        ),
        "TypedDict (nested, NotRequired field) on /v1/messages with kimi-k3.1-pro: native\noutput_config.format json_schema; the schema is sent as the caller wrote it (no strict rewrite).",
    )

    # --- anthropic kimi-k3: no output_config -> forced tool {"type":"tool"} -------------------------
    weather_params: frames.Json = {
        "properties": {
            "city": {"type": "string"},
            "temperature_c": {"type": "number"},
            "summary": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["city", "temperature_c"],
        "type": "object",
    }
    body = {
        "model": "kimi-k3",
        "max_tokens": 131072,
        "messages": user,
        "tools": [
            {
                "name": "Weather",
                "description": "Current weather in a city.",
                "input_schema": weather_params,
            }
        ],
        "tool_choice": {"type": "tool", "name": "Weather"},
    }
    reasoning_k3 = "I must call the Weather tool with Paris values."
    inp: frames.Json = {"city": "Paris", "temperature_c": 21.5}
    files["structured_cassettes/anthropic_k3_tool.yaml"] = render(
        pair(
            "anthropic",
            body,
            an_resp(
                "msg_01KimiStructK3Tool4",
                "kimi-k3",
                [
                    {
                        "type": "tool_use",
                        "id": "toolu_01KimiWeatherK3",
                        "name": "Weather",
                        "input": inp,
                    }
                ],
                reasoning_k3,
                stop="tool_use",
            ),
            an_sse(
                "msg_01KimiStructK3Tool4",
                "kimi-k3",
                reasoning_k3,
                {"type": "tool_use", "id": "toolu_01KimiWeatherK3", "name": "Weather", "input": {}},
                ['{"city": "Pa', 'ris", "temperature_c"', ": 21.5}"],
                stop="tool_use",
            ),
        ),
        "kimi-k3 on /v1/messages has no output_config: json_schema falls back to one tool forced with\nthe documented K3 form tool_choice {type: tool, name}; the tool input is the answer.",
    )

    # --- openai, invalid JSON (cut off at max_completion_tokens) -> include_raw ---------------------
    weather_json: frames.Json = {
        "title": "weather",
        "type": "object",
        "properties": {"city": {"type": "string"}, "temperature_c": {"type": "number"}},
        "required": ["city", "temperature_c"],
        "additionalProperties": False,
    }
    body = {
        "model": "kimi-k3.1-pro",
        "messages": user,
        "max_completion_tokens": 64,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "weather", "strict": True, "schema": weather_json},
        },
    }
    files["structured_cassettes/openai_invalid_json.yaml"] = render(
        [
            exchange(
                "openai",
                body,
                oa_resp(
                    "chatcmpl-kimiStructCut5",
                    "kimi-k3.1-pro",
                    '{"city": "Paris", "tempera',
                    "Short budget.",
                    finish="length",
                ),
            )
        ],
        "The reply is cut off by max_completion_tokens (finish_reason length): the text is not valid\nJSON. include_raw=True returns it with a parsing_error; without it OutputParserException.",
    )
    return files


def structured_agent() -> Cassettes:
    """create_agent(response_format=...): structured_agent/."""
    files: Cassettes = {}
    agent_user: list[frames.Json] = [
        {"role": "user", "content": "Report the weather in Paris as structured data."}
    ]
    tool_params: frames.Json = {
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "type": "object",
    }
    tool_description = "Look up the current weather for a city."
    agent_schema: frames.Json = {
        "description": "Current weather in a city.",
        "properties": {
            "city": {"title": "City", "type": "string"},
            "temperature_c": {"title": "Temperature C", "type": "number"},
            "summary": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "title": "Summary",
            },
        },
        "required": ["city", "temperature_c"],
        "title": "Weather",
        "type": "object",
    }
    answer = '{"city": "Paris", "temperature_c": 21.5, "summary": "Sunny"}'
    reasoning = "I already know the answer format; no tool call is needed."
    body: frames.Json = {
        "model": "kimi-k3.1-pro",
        "messages": agent_user,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": tool_description,
                    "parameters": tool_params,
                },
            }
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "Weather", "schema": agent_schema},
        },
    }
    files["structured_agent/openai_provider_strategy.yaml"] = render(
        [
            exchange(
                "openai", body, oa_resp("chatcmpl-kimiAgentOA1", "kimi-k3.1-pro", answer, reasoning)
            )
        ],
        "create_agent(response_format=Weather) on /v1/chat/completions: ProviderStrategy passes\nresponse_format through bind_tools (strict left to the service default); one call, no tool use.",
    )
    body = {
        "model": "kimi-k3.1-pro",
        "max_tokens": 131072,
        "messages": agent_user,
        "tools": [
            {"name": "get_weather", "description": tool_description, "input_schema": tool_params}
        ],
        "output_config": {"format": {"type": "json_schema", "schema": agent_schema}},
    }
    files["structured_agent/anthropic_provider_strategy.yaml"] = render(
        [
            exchange(
                "anthropic",
                body,
                an_resp(
                    "msg_01KimiAgentAN2",
                    "kimi-k3.1-pro",
                    [{"type": "text", "text": answer}],
                    reasoning,
                ),
            )
        ],
        "create_agent(response_format=Weather) on /v1/messages with kimi-k3.1-pro: the response_format\nbind kwarg becomes output_config.format; one call, no tool use.",
    )
    weather_tool: frames.Json = {
        "name": "Weather",
        "description": "Current weather in a city.",
        "input_schema": {
            "properties": {
                "city": {"type": "string"},
                "temperature_c": {"type": "number"},
                "summary": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            },
            "required": ["city", "temperature_c"],
            "type": "object",
        },
    }
    body = {
        "model": "kimi-k3",
        "max_tokens": 131072,
        "messages": agent_user,
        "tools": [
            {"name": "get_weather", "description": tool_description, "input_schema": tool_params},
            weather_tool,
        ],
        "tool_choice": {"type": "any"},
    }
    inp: frames.Json = {"city": "Paris", "temperature_c": 21.5, "summary": "Sunny"}
    files["structured_agent/anthropic_k3_tool_strategy.yaml"] = render(
        [
            exchange(
                "anthropic",
                body,
                an_resp(
                    "msg_01KimiAgentK3T3",
                    "kimi-k3",
                    [
                        {
                            "type": "tool_use",
                            "id": "toolu_01KimiAgentWeather",
                            "name": "Weather",
                            "input": inp,
                        }
                    ],
                    "Call the Weather tool.",
                    stop="tool_use",
                ),
            )
        ],
        "create_agent(response_format=Weather) with kimi-k3 on /v1/messages: no native structured output\n(profile structured_output false), so create_agent uses ToolStrategy: a Weather tool and\ntool_choice {type: any}; the structured tool call ends the run after one model call.",
    )
    return files


def cassettes() -> Cassettes:
    return {**structured_output(), **structured_agent()}


if __name__ == "__main__":
    _kit.main(cassettes())
