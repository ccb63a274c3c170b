"""Decoding a Messages (Anthropic) event stream in tests: SSE text to events, events to chunks,
chunks to one message, and the comparison of a streamed message with a parsed body."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from functools import reduce

from langchain_core.messages import AIMessage, AIMessageChunk

from langchain_kimi.protocols.anthropic_messages import StreamDecoder
from tools.sse_text import parse_sse, split_at


def sse_events(raw: bytes, cuts: Sequence[int] = ()) -> list[tuple[str, str]]:
    """`raw` parsed as SSE after being split at `cuts` (byte offsets), like network reads."""
    return parse_sse(split_at(raw, cuts), default_event="message")


def decode(events: Iterable[tuple[str, str]]) -> list[AIMessageChunk]:
    decoder = StreamDecoder()
    chunks: list[AIMessageChunk] = []
    for event, data in events:
        chunks.extend(decoder.feed(event, data))
    chunks.extend(decoder.finish())
    return chunks


def aggregate(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    result: AIMessageChunk = reduce(operator.add, chunks)
    return result


def assert_same_message(streamed: AIMessage, parsed: AIMessage) -> None:
    assert streamed.content == parsed.content
    assert streamed.additional_kwargs == parsed.additional_kwargs
    assert streamed.tool_calls == parsed.tool_calls
    assert streamed.invalid_tool_calls == parsed.invalid_tool_calls
    assert streamed.usage_metadata == parsed.usage_metadata
    assert streamed.response_metadata == parsed.response_metadata
    assert streamed.id == parsed.id
