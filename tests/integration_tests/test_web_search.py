"""Built-in web search on both protocols, replayed from authored cassettes (cassettes/web_search/).

vcr matches the JSON request body, so each follow-up request in a cassette checks what ChatKimi
sends: on Chat Completions the `$web_search` loop's assistant message verbatim plus one tool
message per call; on Messages the server search blocks echoed unchanged and in order.
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

from langchain_kimi._errors import KimiAPIError
from tests.support.recording import ReplayModel

MODES = ("invoke", "ainvoke", "stream", "astream")


async def _run(
    runnable: Any, mode: str, messages: list[BaseMessage]
) -> tuple[AIMessage, list[Any]]:
    """The reply and, when streamed, the chunks."""
    if mode == "invoke":
        return runnable.invoke(messages), []
    if mode == "ainvoke":
        return await runnable.ainvoke(messages), []
    if mode == "stream":
        chunks = list(runnable.stream(messages))
    else:
        chunks = [chunk async for chunk in runnable.astream(messages)]
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    total: AIMessageChunk = chunks[0] + chunks[1:]
    return total, chunks


def _case(name: str, modes: tuple[str, ...] = MODES) -> list[Any]:
    return [
        pytest.param(mode, id=mode, marks=[pytest.mark.vcr, pytest.mark.default_cassette(name)])
        for mode in modes
    ]


# --- Chat Completions: the `$web_search` loop -----------------------------------------------

QUESTION = "What is the latest stable Python release? Answer in one sentence."
ANSWER = "The latest stable Python release is Python 3.14."
A1 = '{"query":"latest stable Python release","search_id":"ws_7Hq2Lm9Vb4"}'
A2A = '{"query":"Python 3.14 release notes","search_id":"ws_3Fh8Kd1Wp6"}'
A2B = '{"query":"python.org downloads latest","search_id":"ws_5Rt7Yu2Io9"}'
R1 = "I should check the web for the current release."
R2 = " The first results mention 3.14; let me confirm on python.org."
R3 = " Both sources agree on 3.14."


def _builtin(call_id: str, arguments: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "builtin_function",
        "function": {"name": "$web_search", "arguments": arguments},
    }


EXPECTED_ROUNDS = [
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": R1,
        "tool_calls": [_builtin("call_ws_01", A1)],
    },
    {"role": "tool", "tool_call_id": "call_ws_01", "content": A1},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": R2,
        "tool_calls": [_builtin("call_ws_02", A2A), _builtin("call_ws_03", A2B)],
    },
    {"role": "tool", "tool_call_id": "call_ws_02", "content": A2A},
    {"role": "tool", "tool_call_id": "call_ws_03", "content": A2B},
]


@pytest.mark.parametrize("mode", _case("openai_loop"))
async def test_openai_web_search_loop(mode: str, vcr: Any, replay_model: ReplayModel) -> None:
    model = replay_model("openai").bind_tools([{"type": "web_search"}])
    reply, chunks = await _run(model, mode, [HumanMessage(QUESTION)])
    assert vcr.play_count == 3, "two search rounds, then the answer"

    assert reply.content == ANSWER
    assert reply.tool_calls == []
    assert reply.invalid_tool_calls == []
    assert "tool_calls" not in reply.additional_kwargs  # the final reply has no calls
    assert reply.additional_kwargs["builtin_rounds"] == EXPECTED_ROUNDS
    assert reply.additional_kwargs["reasoning_content"] == R1 + R2 + R3
    # Usage summed over the three rounds (prompt_tokens already includes cache reads/writes).
    usage: Any = reply.usage_metadata
    assert usage["input_tokens"] == 40 + 900 + 2500
    assert usage["output_tokens"] == 30 + 50 + 25
    assert usage["total_tokens"] == 70 + 950 + 2525
    assert usage["input_token_details"] == {"cache_read": 940, "cache_creation": 2500}
    assert usage["output_token_details"] == {"reasoning": 41}
    meta = reply.response_metadata
    assert meta["server_tool_use"] == {"web_search_requests": 3}
    assert meta["finish_reason"] == "stop"
    assert meta["model_name"] == "kimi-k3.1-pro"
    assert meta["protocol"] == "openai"
    # One id for the whole loop, the first round's, whether streamed or not.
    assert meta["id"] == reply.id == "chatcmpl-kimiSearchR1a2B3c4"

    blocks = reply.content_blocks
    assert [b["type"] for b in blocks] == [
        "reasoning",
        *["server_tool_call", "server_tool_result"] * 3,
        "text",
    ]
    calls: list[Any] = [b for b in blocks if b["type"] == "server_tool_call"]
    assert [(c["id"], c["name"]) for c in calls] == [
        ("call_ws_01", "web_search"),
        ("call_ws_02", "web_search"),
        ("call_ws_03", "web_search"),
    ]
    assert calls[1]["args"] == {"query": "Python 3.14 release notes", "search_id": "ws_3Fh8Kd1Wp6"}

    if chunks:
        assert not any(c.tool_call_chunks for c in chunks), "no $web_search as a client call"
        text_chunks = [c.content for c in chunks if c.content]
        assert len(text_chunks) > 1, "the final answer streams"
        assert [c for c in chunks if c.chunk_position == "last"] == [chunks[-1]]


@pytest.mark.parametrize("mode", _case("openai_loop", ("invoke",)))
async def test_openai_web_search_reply_replays(
    mode: str, vcr: Any, replay_model: ReplayModel
) -> None:
    model = replay_model("openai").bind_tools(["web_search"])
    first, _ = await _run(model, mode, [HumanMessage(QUESTION)])
    # The cassette's fourth request holds the search rounds verbatim, then the answer.
    second, _ = await _run(
        model, mode, [HumanMessage(QUESTION), first, HumanMessage("And the one before it?")]
    )
    assert vcr.play_count == 4
    assert second.content == "Python 3.13."
    assert "builtin_rounds" not in second.additional_kwargs


@pytest.mark.parametrize("mode", _case("openai_loop_limit"))
async def test_openai_web_search_round_limit(
    mode: str, vcr: Any, replay_model: ReplayModel
) -> None:
    model = replay_model("openai", max_builtin_rounds=1).bind_tools(["web_search"])
    with pytest.raises(KimiAPIError, match="max_builtin_rounds=1"):
        await _run(model, mode, [HumanMessage(QUESTION)])
    assert vcr.play_count == 2, "one follow-up, then the limit stops the loop"


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@pytest.mark.vcr
@pytest.mark.default_cassette("openai_mixed")
def test_openai_mixed_client_and_builtin_calls(vcr: Any, replay_model: ReplayModel) -> None:
    model = replay_model("openai").bind_tools([WEATHER_TOOL, "web_search"])
    question = HumanMessage(
        "Search for tomorrow's big events in Paris and tell me the weather there."
    )
    first = model.invoke([question])
    # Mixed reply: the loop stops, only the client call surfaces.
    assert [(c["name"], c["args"], c["id"]) for c in first.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "call_fn_11")
    ]
    raw = first.additional_kwargs["tool_calls"]
    assert [c["type"] for c in raw] == ["builtin_function", "function"]
    assert first.response_metadata["finish_reason"] == "tool_calls"
    # Its search is counted with the reply that asked for it.
    assert first.response_metadata["server_tool_use"] == {"web_search_requests": 1}
    # The caller answers its own call; ChatKimi adds the $web_search answer (vcr checks the body).
    answer = ToolMessage("Sunny, 21 C", tool_call_id="call_fn_11")
    final = model.invoke([question, first, answer])
    assert vcr.play_count == 2
    assert final.content == "A jazz festival opens tomorrow; the weather is sunny, 21 C."


# --- Messages: server web search (K3.1) -------------------------------------------------------

AQ = "How do I update a web app to TypeScript 5.5?"
AQ2 = "Thanks. Is 5.5 still supported?"
SEARCH_TOOL = {"type": "web_search_20250305", "name": "web_search", "max_uses": 1}
BLOCK_TYPES = [
    "thinking",
    "server_tool_use",
    "web_search_tool_result",
    "text",
    "server_tool_use",
    "web_search_tool_result",
    "text",
    "text",
]


@pytest.mark.parametrize("mode", _case("anthropic_search"))
async def test_anthropic_web_search_echo(mode: str, vcr: Any, replay_model: ReplayModel) -> None:
    model = replay_model("anthropic").bind_tools([SEARCH_TOOL])
    reply, chunks = await _run(model, mode, [HumanMessage(AQ)])

    blocks = reply.additional_kwargs["anthropic_blocks"]
    assert [b["type"] for b in blocks] == BLOCK_TYPES
    assert reply.content == (
        "Let me look for a migration guide as well."
        "Run npm install -D typescript@5.5"
        ", then fix the new type errors the compiler reports."
    )
    assert reply.tool_calls == []
    assert reply.invalid_tool_calls == []
    results = blocks[2]["content"]
    assert len(results[0]["encrypted_content"]) == 600
    assert blocks[5]["content"] == {
        "type": "web_search_tool_result_error",
        "error_code": "max_uses_exceeded",
    }
    assert blocks[6]["citations"][0]["type"] == "web_search_result_location"
    assert blocks[1]["input"] == {"query": "TypeScript 5.5 upgrade"}
    meta = reply.response_metadata
    assert meta["server_tool_use"] == {"web_search_requests": 1}
    assert meta["finish_reason"] == "stop"
    usage: Any = reply.usage_metadata
    assert (usage["input_tokens"], usage["output_tokens"]) == (2050, 160)
    assert usage["output_token_details"] == {"reasoning": 24}

    standard = reply.content_blocks
    kinds = [b["type"] for b in standard]
    assert kinds == [
        "reasoning",
        "server_tool_call",
        "server_tool_result",
        "text",
        "server_tool_call",
        "server_tool_result",
        "text",
        "text",
    ]
    statuses = [b["status"] for b in standard if b["type"] == "server_tool_result"]
    assert statuses == ["success", "error"]

    if chunks:
        assert not any(c.tool_call_chunks for c in chunks), "input_json_delta of a server tool"

    # Turn 2: the cassette's request holds every block unchanged and in order.
    second, _ = await _run(model, mode, [HumanMessage(AQ), reply, HumanMessage(AQ2)])
    assert vcr.play_count == 2
    assert second.content == "Yes, 5.5 is a supported release."
    usage = second.usage_metadata
    assert usage["input_tokens"] == 35 + 2200
    assert usage["input_token_details"]["cache_read"] == 2200


@pytest.mark.parametrize(
    "mode",
    [
        pytest.param(m, marks=[pytest.mark.vcr, pytest.mark.default_cassette("anthropic_search")])
        for m in ("stream", "astream")
    ],
)
async def test_anthropic_web_search_stream_equals_invoke(
    mode: str, vcr: Any, replay_model: ReplayModel
) -> None:
    model = replay_model("anthropic").bind_tools([SEARCH_TOOL])
    invoked, _ = await _run(model, "invoke", [HumanMessage(AQ)])
    streamed, _ = await _run(model, mode, [HumanMessage(AQ)])
    assert vcr.play_count == 2
    assert streamed.content == invoked.content
    for key in ("anthropic_blocks", "thinking_blocks", "reasoning_content"):
        assert streamed.additional_kwargs[key] == invoked.additional_kwargs[key]
    assert streamed.usage_metadata == invoked.usage_metadata
    assert (
        streamed.response_metadata["server_tool_use"]
        == invoked.response_metadata["server_tool_use"]
    )
