"""ChatKimi core behaviour replayed from authored cassettes (cassettes/core_cassettes/).

Each cassette holds the non-streaming and the streaming exchange of one scenario; vcr matches on
the JSON request body, so a test passes only if ChatKimi sends exactly the hand-written body.
Streaming usage variants (see each cassette's header comment):
- anthropic_plain / turn 1 of anthropic_two_turn: input counts only in `message_start`;
- anthropic_system / turn 2 of anthropic_two_turn: `message_delta` repeats cumulative counts;
- openai_plain: trailing top-level usage chunk; openai_system: `choices[0].usage` of the finish
  chunk; openai_two_turn: both. In every case usage is counted exactly once.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)

from langchain_kimi import ChatKimi
from tests.support.recording import ReplayModel

PROTOCOLS = ("anthropic", "openai")
MODES = ("invoke", "ainvoke", "stream", "astream")
SYSTEM = "You are a terse assistant. Answer in one word."
Q1 = "Pick a number between 1 and 3. Reply with the number only."
Q2 = "Add 1 to it. Reply with the number only."


async def _run(model: ChatKimi, mode: str, messages: list[BaseMessage]) -> AIMessage:
    if mode == "invoke":
        return model.invoke(messages)
    if mode == "ainvoke":
        return await model.ainvoke(messages)
    chunks: list[AIMessageChunk] = []
    if mode == "stream":
        chunks = list(model.stream(messages))
    else:
        chunks = [chunk async for chunk in model.astream(messages)]
    assert len(chunks) > 1, "a streamed reply arrives in several chunks"
    return chunks[0] + chunks[1:]


def _usage(
    input_tokens: int, cache_read: int, cache_creation: int, output: int, reasoning: int
) -> Any:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output,
        "total_tokens": input_tokens + output,
        "input_token_details": {"cache_read": cache_read, "cache_creation": cache_creation},
        "output_token_details": {"reasoning": reasoning},
    }


# (scenario, protocol) -> expected reply per turn: text, reasoning, usage, id
_PLAIN_REASONING = "The user asks me to reply with OK. I will do exactly that."
_SYSTEM_REASONING = "A one-word answer is requested: OK."
_TURN1_REASONING = "Any number from 1 to 3 works; I pick 2."
_TURN2_REASONING = "I picked 2 before; 2 + 1 = 3."
EXPECTED: dict[tuple[str, str], list[dict[str, Any]]] = {
    # anthropic input_tokens = input + cache reads + cache writes (12 + 4 + 2)
    ("plain", "anthropic"): [
        {
            "text": "OK",
            "reasoning": _PLAIN_REASONING,
            "usage": _usage(18, 4, 2, 21, 19),
            "id": "msg_01KimiPlainA1b2C3d4E5f6G7",
        },
    ],
    ("plain", "openai"): [
        {
            "text": "OK",
            "reasoning": _PLAIN_REASONING,
            "usage": _usage(18, 4, 2, 21, 19),
            "id": "chatcmpl-kimiPlain7Qx2Lm9Vb4",
        },
    ],
    ("system", "anthropic"): [
        {
            "text": "OK",
            "reasoning": _SYSTEM_REASONING,
            "usage": _usage(33, 0, 8, 17, 15),
            "id": "msg_01KimiSystemH8i9J0k1L2m3",
        },
    ],
    ("system", "openai"): [
        {
            "text": "OK",
            "reasoning": _SYSTEM_REASONING,
            "usage": _usage(33, 0, 8, 17, 15),
            "id": "chatcmpl-kimiSystem3Fh8Kd1Wp6",
        },
    ],
    ("two_turn", "anthropic"): [
        {
            "text": "2",
            "reasoning": _TURN1_REASONING,
            "usage": _usage(22, 0, 0, 18, 16),
            "id": "msg_01KimiTurnOneN4o5P6q7R8",
        },
        {
            "text": "3",
            "reasoning": _TURN2_REASONING,
            "usage": _usage(49, 40, 0, 16, 14),
            "id": "msg_01KimiTurnTwoS9t0U1v2W3",
        },
    ],
    ("two_turn", "openai"): [
        {
            "text": "2",
            "reasoning": _TURN1_REASONING,
            "usage": _usage(22, 0, 0, 18, 16),
            "id": "chatcmpl-kimiTurnOne5Rt7Yu2Io9",
        },
        {
            "text": "3",
            "reasoning": _TURN2_REASONING,
            "usage": _usage(49, 40, 0, 16, 14),
            "id": "chatcmpl-kimiTurnTwo8Pa3Sd6Fg1",
        },
    ],
}


def _check_reply(reply: AIMessage, expected: dict[str, Any], protocol: str) -> None:
    assert reply.content == expected["text"]
    assert reply.additional_kwargs["reasoning_content"] == expected["reasoning"]
    usage: Any = reply.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] == expected["usage"]["input_tokens"]
    assert usage["output_tokens"] == expected["usage"]["output_tokens"]
    assert usage["total_tokens"] == expected["usage"]["total_tokens"]
    assert (
        usage["input_token_details"].get("cache_read", 0)
        == (expected["usage"]["input_token_details"]["cache_read"])
    )
    assert (
        usage["input_token_details"].get("cache_creation", 0)
        == (expected["usage"]["input_token_details"]["cache_creation"])
    )
    assert (
        usage["output_token_details"]["reasoning"]
        == (expected["usage"]["output_token_details"]["reasoning"])
    )
    meta = reply.response_metadata
    assert meta["model_provider"] == "kimi"
    assert meta["model_name"] == "kimi-k3.1-pro"
    assert meta["id"] == expected["id"]
    assert meta["finish_reason"] == "stop"
    assert meta["protocol"] == protocol
    if protocol == "anthropic":
        (thinking,) = reply.additional_kwargs["thinking_blocks"]
        assert thinking["type"] == "thinking"
        assert thinking["thinking"] == expected["reasoning"]
        assert len(thinking["signature"]) > 100
        assert [b["type"] for b in reply.additional_kwargs["anthropic_blocks"]] == [
            "thinking",
            "text",
        ]


def _comparable(reply: AIMessage) -> dict[str, Any]:
    """What a streamed aggregate must share with the invoke result."""
    keys = ("reasoning_content", "thinking_blocks", "anthropic_blocks")
    meta = ("id", "model_name", "finish_reason", "raw_finish_reason", "protocol")
    return {
        "content": reply.content,
        "additional_kwargs": {k: reply.additional_kwargs.get(k) for k in keys},
        "usage_metadata": reply.usage_metadata,
        "response_metadata": {k: reply.response_metadata.get(k) for k in meta},
        "tool_calls": reply.tool_calls,
    }


def _first_turn(scenario: str) -> list[BaseMessage]:
    if scenario == "plain":
        return [HumanMessage("Reply with OK.")]
    if scenario == "system":
        return [SystemMessage(SYSTEM), HumanMessage("Reply with OK.")]
    return [HumanMessage(Q1)]


async def _conversation(model: ChatKimi, mode: str, scenario: str) -> list[AIMessage]:
    history = _first_turn(scenario)
    replies = [await _run(model, mode, history)]
    if scenario == "two_turn":
        # The first reply goes back exactly as ChatKimi returned it; the cassette's second
        # request body checks it is echoed unchanged (thinking + signature / reasoning_content).
        history = [*history, replies[0], HumanMessage(Q2)]
        replies.append(await _run(model, mode, history))
    return replies


def _cases() -> list[Any]:
    return [
        pytest.param(
            protocol,
            mode,
            scenario,
            id=f"{protocol}-{scenario}-{mode}",
            marks=[pytest.mark.vcr, pytest.mark.default_cassette(f"{protocol}_{scenario}")],
        )
        for protocol in PROTOCOLS
        for scenario in ("plain", "system", "two_turn")
        for mode in MODES
    ]


@pytest.mark.parametrize(("protocol", "mode", "scenario"), _cases())
async def test_core(
    protocol: str, mode: str, scenario: str, vcr: Any, replay_model: ReplayModel
) -> None:
    replies = await _conversation(replay_model(protocol), mode, scenario)
    assert vcr.play_count == len(replies), "every request was answered from the cassette"
    expected = EXPECTED[(scenario, protocol)]
    assert len(replies) == len(expected)
    for reply, want in zip(replies, expected, strict=True):
        _check_reply(reply, want, protocol)


def _stream_cases() -> list[Any]:
    return [
        pytest.param(
            protocol,
            mode,
            scenario,
            id=f"{protocol}-{scenario}-{mode}",
            marks=[pytest.mark.vcr, pytest.mark.default_cassette(f"{protocol}_{scenario}")],
        )
        for protocol in PROTOCOLS
        for scenario in ("plain", "system", "two_turn")
        for mode in ("stream", "astream")
    ]


@pytest.mark.parametrize(("protocol", "mode", "scenario"), _stream_cases())
async def test_stream_aggregate_equals_invoke(
    protocol: str, mode: str, scenario: str, vcr: Any, replay_model: ReplayModel
) -> None:
    invoke_mode = "ainvoke" if mode == "astream" else "invoke"
    invoked = await _conversation(replay_model(protocol), invoke_mode, scenario)
    streamed = await _conversation(replay_model(protocol), mode, scenario)
    assert vcr.play_count == 2 * len(invoked)
    for via_invoke, via_stream in zip(invoked, streamed, strict=True):
        assert _comparable(via_stream) == _comparable(via_invoke)


@pytest.mark.parametrize(
    "protocol",
    [
        pytest.param(p, marks=[pytest.mark.vcr, pytest.mark.default_cassette(f"{p}_plain")])
        for p in PROTOCOLS
    ],
)
def test_v1_output_uses_kimi_blocks(protocol: str, replay_model: ReplayModel) -> None:
    model = replay_model(protocol).model_copy(update={"output_version": "v1"})
    reply = model.invoke("Reply with OK.")
    blocks: list[Any] = list(reply.content)
    assert [b["type"] for b in blocks] == ["reasoning", "text"]
    assert blocks[0]["reasoning"] == _PLAIN_REASONING
    assert blocks[1]["text"] == "OK"
    if protocol == "anthropic":
        assert len(blocks[0]["extras"]["signature"]) > 100

    chunks = list(model.stream("Reply with OK."))
    total = chunks[0] + chunks[1:]
    streamed: list[Any] = [b for b in total.content if isinstance(b, dict)]
    assert [b["type"] for b in streamed] == ["reasoning", "text"]
    assert streamed[0]["reasoning"] == _PLAIN_REASONING
    assert streamed[1]["text"] == "OK"
    if protocol == "anthropic":
        assert streamed[0]["extras"]["signature"] == blocks[0]["extras"]["signature"]
