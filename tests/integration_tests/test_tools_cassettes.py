"""Tool loops replayed from authored cassettes (cassettes/tools_cassettes/).

vcr matches the JSON request body, so each follow-up request passes only if ChatKimi echoes the
assistant tool-call turn exactly as the hand-written cassette says (thinking + signature /
reasoning_content, original ids and argument strings) and sends the tool results in the
documented form.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.tools import tool

from tests.support.recording import ReplayModel

Q = "What is the weather in Oslo, and what time is it?"
OSLO = "Oslo: -3°C, light snow"
TIME = "2026-01-15T12:00:00Z"
ROME = "Rome: 14°C, sunny"


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return {"Oslo": OSLO, "Rome": ROME}[city]


@tool
def get_time() -> str:
    """Get the current UTC time."""
    return TIME


def _call(runnable: Any, messages: list[BaseMessage], stream: bool) -> AIMessage:
    if not stream:
        reply: AIMessage = runnable.invoke(messages)
        return reply
    chunks: list[AIMessageChunk] = list(runnable.stream(messages))
    assert len(chunks) > 1
    total = chunks[0] + chunks[1:]
    assert total.chunk_position == "last"
    return total


def _comparable(reply: AIMessage) -> dict[str, Any]:
    keys = ("reasoning_content", "thinking_blocks", "anthropic_blocks", "tool_calls")
    return {
        "content": reply.content,
        "tool_calls": reply.tool_calls,
        "invalid_tool_calls": reply.invalid_tool_calls,
        "additional_kwargs": {k: reply.additional_kwargs.get(k) for k in keys},
        "usage": reply.usage_metadata,
        "finish": reply.response_metadata.get("finish_reason"),
    }


@pytest.mark.vcr
def test_anthropic_k31_parallel_loop(vcr: Any, replay_model: ReplayModel) -> None:
    """Invoke, then stream, the same two-step loop; the streamed turns equal the invoked ones."""
    bound = replay_model("anthropic").bind_tools([get_weather, get_time])
    replies: dict[bool, list[AIMessage]] = {}
    for stream in (False, True):
        first = _call(bound, [HumanMessage(Q)], stream)
        assert [(c["id"], c["name"], c["args"]) for c in first.tool_calls] == [
            ("toolu_01WeatherOslo7Kq2", "get_weather", {"city": "Oslo"}),
            ("toolu_01ClockUtc3Zp8", "get_time", {}),
        ]
        assert first.response_metadata["finish_reason"] == "tool_calls"
        results = [
            ToolMessage([{"type": "text", "text": OSLO}], tool_call_id=first.tool_calls[0]["id"]),
            ToolMessage(
                "clock service unavailable", tool_call_id=first.tool_calls[1]["id"], status="error"
            ),
        ]
        final = _call(bound, [HumanMessage(Q), first, *results], stream)
        assert final.content.startswith("Oslo is at -3°C")  # type: ignore[union-attr]
        assert not final.tool_calls
        replies[stream] = [first, final]
    assert vcr.play_count == 4
    for invoked, streamed in zip(replies[False], replies[True], strict=True):
        assert _comparable(streamed) == _comparable(invoked)


@pytest.mark.vcr
def test_anthropic_k3_named_choice(vcr: Any, replay_model: ReplayModel) -> None:
    model = replay_model("anthropic", "kimi-k3")
    first = model.bind_tools([get_weather, get_time], tool_choice="get_weather").invoke(
        "Weather in Oslo?"
    )
    (call,) = first.tool_calls
    assert call["id"] == "toolu_01K3Named5Vb"
    result = get_weather.invoke(call)  # a ToolMessage answering that call
    assert isinstance(result, ToolMessage)
    history = [HumanMessage("Weather in Oslo?"), first, result]
    final = model.bind_tools([get_weather, get_time], tool_choice="auto").invoke(history)
    assert final.content == "-3°C and light snow."
    assert vcr.play_count == 2


@pytest.mark.vcr
def test_openai_k31_parallel_loop(vcr: Any, replay_model: ReplayModel) -> None:
    model = replay_model("openai")
    forced = model.bind_tools([get_weather, get_time], tool_choice="any")
    free = model.bind_tools([get_weather, get_time])
    replies: dict[bool, list[AIMessage]] = {}
    for stream in (False, True):
        first = _call(forced, [HumanMessage(Q)], stream)
        assert [(c["id"], c["args"]) for c in first.tool_calls] == [
            ("functions.get_weather:0", {"city": "Oslo"}),
            ("functions.get_time:1", {}),
        ]
        raw = first.additional_kwargs["tool_calls"]
        assert [c["function"]["arguments"] for c in raw] == ['{"city":"Oslo"}', ""]
        results = [
            ToolMessage(OSLO, tool_call_id="functions.get_weather:0"),
            ToolMessage(TIME, tool_call_id="functions.get_time:1"),
        ]
        final = _call(free, [HumanMessage(Q), first, *results], stream)
        assert final.content == "Oslo: -3°C with light snow; it is 12:00 UTC."
        replies[stream] = [first, final]
    assert vcr.play_count == 4
    for invoked, streamed in zip(replies[False], replies[True], strict=True):
        assert _comparable(streamed) == _comparable(invoked)


def _other_provider_turn() -> list[BaseMessage]:
    """Turn two, produced by another OpenAI-style provider: `call_` id, no reasoning."""
    raw = {
        "id": "call_Xk2pL9mQ4rT",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'},
    }
    return [
        HumanMessage("And Rome?"),
        AIMessage(
            content="",
            additional_kwargs={"tool_calls": [raw]},
            tool_calls=[
                {"id": "call_Xk2pL9mQ4rT", "name": "get_weather", "args": {"city": "Rome"}}
            ],
        ),
        ToolMessage(ROME, tool_call_id="call_Xk2pL9mQ4rT"),
    ]


@pytest.mark.vcr
def test_openai_mixed_history(vcr: Any, replay_model: ReplayModel) -> None:
    thinking = {"type": "thinking", "thinking": "Need the Oslo weather first.", "signature": "c2ln"}
    use = {"type": "tool_use", "id": "toolu_01FromMessagesQ9", "name": "get_weather"}
    from_messages = AIMessage(
        content="Checking.",
        additional_kwargs={
            "reasoning_content": thinking["thinking"],
            "thinking_blocks": [thinking],
            "anthropic_blocks": [
                thinking,
                {"type": "text", "text": "Checking."},
                {**use, "input": {"city": "Oslo"}},
            ],
        },
        tool_calls=[{"id": use["id"], "name": "get_weather", "args": {"city": "Oslo"}}],
        response_metadata={"model_provider": "kimi", "protocol": "anthropic"},
    )
    history: list[BaseMessage] = [
        HumanMessage("Weather in Oslo?"),
        from_messages,
        ToolMessage(OSLO, tool_call_id="toolu_01FromMessagesQ9"),
        AIMessage("-3°C, light snow.", additional_kwargs={"reasoning_content": "Report it."}),
        *_other_provider_turn(),
    ]
    reply = replay_model("openai").bind_tools([get_weather]).invoke(history)
    assert reply.content == "Rome is 14°C and sunny."
    assert vcr.play_count == 1


@pytest.mark.vcr
def test_anthropic_mixed_history(vcr: Any, replay_model: ReplayModel) -> None:
    from_chat_completions = AIMessage(
        content="",
        additional_kwargs={
            "reasoning_content": "Call get_weather for Oslo.",
            "tool_calls": [
                {
                    "id": "functions.get_weather:0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        tool_calls=[
            {"id": "functions.get_weather:0", "name": "get_weather", "args": {"city": "Oslo"}}
        ],
        response_metadata={"model_provider": "kimi", "protocol": "openai"},
    )
    history: list[BaseMessage] = [
        HumanMessage("Weather in Oslo?"),
        from_chat_completions,
        ToolMessage(OSLO, tool_call_id="functions.get_weather:0"),
        AIMessage("-3°C, light snow.", additional_kwargs={"reasoning_content": "Report it."}),
        *_other_provider_turn(),
    ]
    reply = replay_model("anthropic").bind_tools([get_weather]).invoke(history)
    assert reply.content == "Rome is 14°C and sunny."
    assert reply.additional_kwargs["thinking_blocks"][0]["signature"]
    assert vcr.play_count == 1
