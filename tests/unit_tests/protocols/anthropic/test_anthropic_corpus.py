"""Real recorded Messages traffic (tests/fixtures/corpus/anthropic-messages) through the parser,
the stream decoder and the replay path. These bodies come from other services, so they are not
validated against Kimi's schema; they check that we read the protocol byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langchain_kimi._contract import FOREIGN_TURN_REASONING
from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import capabilities
from langchain_kimi.protocols.anthropic_messages import build_request, parse_response
from tests.support.messages_stream import (
    aggregate,
    assert_same_message,
    decode,
    sse_events,
)
from tools.paths import CORPUS as CORPUS_ROOT

CORPUS = CORPUS_ROOT / "anthropic-messages"
FILES = sorted(CORPUS.glob("*.json"))
STREAMS = [
    f for f in FILES if "event-stream" in json.loads(f.read_text())["response"]["content_type"]
]
BODIES = [f for f in FILES if f not in STREAMS]


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def reference_body(raw: str) -> dict[str, Any]:
    """The non-streaming body equivalent to a stream, assembled the plain documented way."""
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for event, data in sse_events(raw.encode()):
        if event == "ping":
            continue
        payload = json.loads(data)
        if event == "message_start":
            message = dict(payload["message"])
            message["usage"] = dict(message.get("usage") or {})
        elif event == "content_block_start":
            blocks[payload["index"]] = dict(payload["content_block"])
            partial[payload["index"]] = ""
        elif event == "content_block_delta":
            block, delta = blocks[payload["index"]], payload["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] += delta["signature"]
            elif delta["type"] == "citations_delta":
                block["citations"] = [*(block.get("citations") or []), delta["citation"]]
            elif delta["type"] == "input_json_delta":
                partial[payload["index"]] += delta["partial_json"]
        elif event == "message_delta":
            message.update(payload["delta"])
            message["usage"].update({k: v for k, v in payload["usage"].items() if v is not None})
    for index, block in blocks.items():
        if block["type"] in ("tool_use", "server_tool_use"):
            block["input"] = json.loads(partial[index]) if partial[index] else {}
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def test_corpus_present() -> None:
    assert len(BODIES) >= 10
    assert len(STREAMS) >= 7


@pytest.mark.parametrize("path", BODIES, ids=lambda p: p.stem)
def test_non_streaming_bodies_parse(path: Path) -> None:
    body = json.loads(load(path)["response"]["body"])
    msg = parse_response(body)
    blocks = body["content"]
    assert msg.additional_kwargs["anthropic_blocks"] == blocks
    assert msg.content == "".join(b["text"] for b in blocks if b["type"] == "text")
    assert [tc["id"] for tc in msg.tool_calls] == [
        b["id"] for b in blocks if b["type"] == "tool_use"
    ]
    thinking = [b for b in blocks if b["type"] in ("thinking", "redacted_thinking")]
    assert msg.additional_kwargs.get("thinking_blocks", []) == thinking
    usage = body["usage"]
    assert msg.usage_metadata is not None
    assert msg.usage_metadata["input_tokens"] == (
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
    )
    assert msg.response_metadata["raw_finish_reason"] == body["stop_reason"]
    if "server_tool_use" in usage:
        assert msg.response_metadata["server_tool_use"] == usage["server_tool_use"]


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.stem)
def test_streams_aggregate_to_the_equivalent_body(path: Path) -> None:
    raw: str = load(path)["response"]["body"]
    expected = parse_response(reference_body(raw))
    size = len(raw.encode())
    for cuts in [
        (),
        (1, 2, 3),
        tuple(range(5, size, 97)),
        tuple(range(0, size, 1009)),
        (size // 2,),
    ]:
        chunks = decode(sse_events(raw.encode(), cuts))
        assert_same_message(aggregate(chunks), expected)
        assert [c.usage_metadata is not None for c in chunks].count(True) == 1
        assert chunks[-1].chunk_position == "last"


def test_signatures_survive_streaming() -> None:
    raw = load(CORPUS / "langchain-anthropic.test_thinking.1.json")["response"]["body"]
    merged = aggregate(decode(sse_events(raw.encode())))
    (block,) = merged.additional_kwargs["thinking_blocks"]
    assert block["signature"]
    assert block["thinking"] == merged.additional_kwargs["reasoning_content"]


# --- multi-turn: what the recorded client echoed vs what we echo ----------------------------

# (earlier reply, later request) where the recorded client sent the blocks back unchanged.
EXACT_ECHOES = [
    ("langchain-anthropic.test_agent_loop.0", "langchain-anthropic.test_agent_loop.1"),
    (
        "langchain-anthropic.test_agent_loop_streaming.0",
        "langchain-anthropic.test_agent_loop_streaming.1",
    ),
    (
        "langchain-anthropic.test_redacted_thinking.1",
        "langchain-anthropic.test_redacted_thinking.2",
    ),
    ("langchain-anthropic.test_thinking.1", "langchain-anthropic.test_thinking.2"),
    (
        "pydantic-ai.test_anthropic_model_thinking_part.0",
        "pydantic-ai.test_anthropic_model_thinking_part.1",
    ),
    (
        "pydantic-ai.test_anthropic_tool_with_thinking.0",
        "pydantic-ai.test_anthropic_tool_with_thinking.1",
    ),
]
# Echoes where the recorded client dropped keys (pydantic-ai: `citations`; langchain-anthropic:
# the server blocks' `caller`); we send them back complete, as the protocol asks.
LOSSY_ECHOES = [
    (
        "pydantic-ai.test_anthropic_web_search_tool.0",
        "pydantic-ai.test_anthropic_web_search_tool.1",
        "citations",
    ),
    ("langchain-anthropic.test_web_search.1", "langchain-anthropic.test_web_search.2", "caller"),
]


def reply_message(stem: str) -> AIMessage:
    response = load(CORPUS / f"{stem}.json")["response"]
    if "event-stream" in response["content_type"]:
        return aggregate(decode(sse_events(response["body"].encode())))
    return parse_response(json.loads(response["body"]))


def echoed(stem: str) -> list[dict[str, Any]]:
    messages = load(CORPUS / f"{stem}.json")["request"]["body"]["messages"]
    content: list[dict[str, Any]] = next(m for m in messages if m["role"] == "assistant")["content"]
    return content


def our_echo(ai: AIMessage) -> list[dict[str, Any]]:
    options = RequestOptions(caps=capabilities("kimi-k3.1-pro", "anthropic"))
    body = build_request([HumanMessage("question"), ai], options)
    content: list[dict[str, Any]] = body["messages"][1]["content"]
    return content


@pytest.mark.parametrize(("reply", "request_stem"), EXACT_ECHOES, ids=lambda s: s)
def test_replay_matches_recorded_echo(reply: str, request_stem: str) -> None:
    ours, theirs = our_echo(reply_message(reply)), echoed(request_stem)
    # Claude's encrypted reasoning is not sent to Kimi: 000 / 001 `ContentBlock` has no
    # `redacted_thinking` (tests/unit_tests/protocols/anthropic/test_redacted_thinking_is_not_sent.py).
    theirs = [b for b in theirs if b["type"] != "redacted_thinking"]
    if not any(b["type"] == "thinking" for b in theirs) and any(
        b["type"] == "tool_use" for b in theirs
    ):
        # A tool-call turn recorded without thinking (the peer ran with thinking off): Kimi
        # rejects that, so ours leads with the unsigned placeholder (issue 11 item 10).
        assert ours[0] == {"type": "thinking", "thinking": FOREIGN_TURN_REASONING}
        ours = ours[1:]
    assert ours == theirs


@pytest.mark.parametrize(("reply", "request_stem", "dropped"), LOSSY_ECHOES, ids=lambda s: s)
def test_replay_is_complete_where_recorded_client_dropped_keys(
    reply: str, request_stem: str, dropped: str
) -> None:
    ours = our_echo(reply_message(reply))
    assert any(dropped in block for block in ours)

    def without(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in b.items() if k != dropped and v is not None} for b in blocks]

    assert without(ours) == without(echoed(request_stem))
