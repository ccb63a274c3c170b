"""Kimi features replayed from authored cassettes (cassettes/features_cassettes/).

vcr matches on the JSON request body, so each test also checks the wire form of the feature:
effort (aliases normalized) and cache TTL per protocol, native vs emulated stop, multimodal
parts. Usage details (cache reads/writes with the 5m/1h split, reasoning) are checked in invoke
and in streaming, where they must be counted exactly once.
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

from langchain_kimi import ChatKimi
from tests.support.recording import ReplayModel

MODES = ("invoke", "ainvoke", "stream", "astream")
PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQ"
    "DwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
MP4_B64 = "AAAAIGZ0eXBpc29tAAACAGlzb21pc28yYXZjMW1wNDE="
CONTEXT = "Here is our style guide: " + "Prefer short sentences. " * 8
SUMMARY_Q = CONTEXT + "Summarize it in three words."
STOP_Q = "List three primary colours, one per line, then write END."


async def _run(
    model: ChatKimi, mode: str, messages: list[BaseMessage], **kwargs: Any
) -> tuple[AIMessage, list[AIMessageChunk]]:
    if mode == "invoke":
        return model.invoke(messages, **kwargs), []
    if mode == "ainvoke":
        return await model.ainvoke(messages, **kwargs), []
    if mode == "stream":
        chunks = list(model.stream(messages, **kwargs))
    else:
        chunks = [chunk async for chunk in model.astream(messages, **kwargs)]
    assert len(chunks) > 1
    return chunks[0] + chunks[1:], chunks


def _case(name: str, modes: tuple[str, ...] = MODES) -> list[Any]:
    return [
        pytest.param(mode, id=mode, marks=[pytest.mark.vcr, pytest.mark.default_cassette(name)])
        for mode in modes
    ]


def _usage_once(chunks: list[AIMessageChunk]) -> None:
    if chunks:
        with_usage = [c for c in chunks if c.usage_metadata]
        assert len(with_usage) == 1, "streaming reports usage exactly once"
        assert with_usage[0].chunk_position == "last"


# --- effort + cache TTL + usage details -----------------------------------------------------


@pytest.mark.parametrize("mode", _case("anthropic_effort_cache"))
async def test_anthropic_effort_cache_and_usage(
    mode: str, vcr: Any, replay_model: ReplayModel
) -> None:
    # medium -> output_config.effort "high"; 1h TTL -> top-level cache_control (vcr checks).
    model = replay_model("anthropic", "kimi-k3.1-pro", reasoning_effort="medium", cache_ttl="1h")
    reply, chunks = await _run(model, mode, [HumanMessage(SUMMARY_Q)])
    assert vcr.play_count == 1
    assert reply.content == "Prefer short sentences."
    assert reply.usage_metadata == {
        # plain 30 + cache reads 1000 + cache writes 2048 (disjoint on Messages)
        "input_tokens": 3078,
        "output_tokens": 120,
        "total_tokens": 3198,
        "input_token_details": {
            "cache_read": 1000,
            "cache_creation": 0,  # every write is covered by the TTL split
            "ephemeral_5m_input_tokens": 0,
            "ephemeral_1h_input_tokens": 2048,
        },
        "output_token_details": {"reasoning": 100},
    }
    assert "server_tool_use" not in reply.response_metadata
    _usage_once(chunks)


@pytest.mark.parametrize("mode", _case("openai_effort_cache"))
async def test_openai_effort_cache_and_usage(
    mode: str, vcr: Any, replay_model: ReplayModel
) -> None:
    # xhigh -> reasoning_effort "max"; 5m TTL -> prompt_cache_options (vcr checks).
    model = replay_model("openai", "kimi-k3.1-pro-highspeed", effort="low")
    reply, chunks = await _run(
        model, mode, [HumanMessage(SUMMARY_Q)], reasoning_effort="xhigh", cache_ttl="5m"
    )
    assert vcr.play_count == 1
    assert reply.content == "Prefer short sentences."
    assert reply.additional_kwargs["reasoning_content"] == "The guide keeps repeating one rule."
    assert reply.usage_metadata == {
        # prompt_tokens already counts cache reads and writes: not added again
        "input_tokens": 3078,
        "output_tokens": 120,
        "total_tokens": 3198,
        "input_token_details": {"cache_read": 1000, "cache_creation": 2048},
        "output_token_details": {"reasoning": 100},
    }
    assert reply.response_metadata["model_name"] == "kimi-k3.1-pro-highspeed"
    _usage_once(chunks)


# --- stop sequences ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", _case("anthropic_stop"))
async def test_anthropic_native_stop_sequences(
    mode: str, vcr: Any, replay_model: ReplayModel
) -> None:
    model = replay_model("anthropic", "kimi-k3.1-pro", max_tokens=1024)
    reply, _ = await _run(model, mode, [HumanMessage(STOP_Q)], stop=["END", "STOP"])
    assert vcr.play_count == 1
    assert reply.content == "Red\nYellow\nBlue\n"
    assert reply.response_metadata["stop_sequence"] == "END"
    assert reply.response_metadata["finish_reason"] == "stop"


@pytest.mark.parametrize(
    ("protocol", "mode"),
    [
        pytest.param(
            protocol,
            mode,
            id=f"{protocol}-{mode}",
            marks=[pytest.mark.vcr, pytest.mark.default_cassette(f"{protocol}_k3_stop")],
        )
        for protocol in ("openai", "anthropic")
        for mode in MODES
    ],
)
async def test_emulated_stop_on_kimi_k3(
    protocol: str, mode: str, vcr: Any, replay_model: ReplayModel
) -> None:
    fields: dict[str, Any] = {"stop": ["END"]}
    if protocol == "openai":
        fields["reasoning_effort"] = "max"  # the only effort kimi-k3 accepts
    model = replay_model(protocol, "kimi-k3", **fields)
    reply, chunks = await _run(model, mode, [HumanMessage(STOP_Q)])
    assert vcr.play_count == 1
    assert reply.content == "Red\nYellow\nBlue\n"
    assert reply.response_metadata["stop_sequence"] == "END"
    assert reply.response_metadata["finish_reason"] == "stop"
    # Only answer text is cut: the reasoning keeps its "END".
    reasoning = "Three primaries, then END." if protocol == "openai" else "Three primaries."
    assert reply.additional_kwargs["reasoning_content"] == reasoning
    if chunks:
        assert not any("ND" in str(c.content) for c in chunks), "held-back tail never leaks"
    _usage_once(chunks)


# --- multimodal input --------------------------------------------------------------------------


@pytest.mark.vcr
@pytest.mark.default_cassette("anthropic_multimodal")
def test_anthropic_images_and_tool_result_image(vcr: Any, replay_model: ReplayModel) -> None:
    model = replay_model("anthropic", "kimi-k3.1-pro")
    history: list[BaseMessage] = [
        HumanMessage(
            content=[
                {"type": "text", "text": "What do these two images show?"},
                {"type": "image", "base64": PNG_B64, "mime_type": "image/png"},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
            ]
        ),
        AIMessage(
            content="", tool_calls=[{"id": "toolu_01KimiShot", "name": "screenshot", "args": {}}]
        ),
        ToolMessage(
            content=[
                {"type": "text", "text": "Screen captured."},
                {"type": "image", "base64": PNG_B64, "mime_type": "image/png"},
            ],
            tool_call_id="toolu_01KimiShot",
        ),
    ]
    reply = model.invoke(history)
    assert vcr.play_count == 1
    assert reply.content == "A single pixel, a cat and your screen."


@pytest.mark.vcr
@pytest.mark.default_cassette("openai_multimodal")
def test_openai_image_and_video(vcr: Any, replay_model: ReplayModel) -> None:
    model = replay_model("openai", "kimi-k3")
    reply = model.invoke(
        [
            HumanMessage(
                content=[
                    {"type": "text", "text": "Compare the image with the video."},
                    {"type": "image", "base64": PNG_B64, "mime_type": "image/png"},
                    {"type": "image", "url": "https://example.com/cat.jpg"},
                    {"type": "video", "base64": MP4_B64, "mime_type": "video/mp4"},
                ]
            )
        ]
    )
    assert vcr.play_count == 1
    assert reply.content == "Both show a cat."
