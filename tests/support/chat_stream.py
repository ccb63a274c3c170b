"""Decoding a Chat Completions event stream in tests: bytes cut into pieces, SSE text to events
(a deliberately tiny parser: the transport uses `langchain_kimi._http.sse`), events to chunks,
chunks to one message, and the fields a streamed and a non-streamed reply must agree on."""

from __future__ import annotations

import functools
import operator
import random
from collections.abc import Iterable
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk

from langchain_kimi.protocols.openai_chat.stream import StreamDecoder
from tools.sse_text import parse_sse


def sse_events(pieces: Iterable[bytes]) -> list[tuple[str, str]]:
    return parse_sse(pieces)


def random_pieces(raw: bytes, seed: int, max_size: int = 40) -> list[bytes]:
    rng = random.Random(seed)
    pieces, at = [], 0
    while at < len(raw):
        size = rng.randint(1, max_size)
        pieces.append(raw[at : at + size])
        at += size
    return pieces


def decode(
    events: list[tuple[str, str]], decoder: StreamDecoder | None = None
) -> list[AIMessageChunk]:
    decoder = decoder or StreamDecoder()
    chunks = [c for event, data in events for c in decoder.feed(event, data)]
    chunks.extend(decoder.finish())
    return chunks


def aggregate(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    return functools.reduce(operator.add, chunks)


def summary(message: AIMessage) -> dict[str, Any]:
    """The fields a streamed and a non-streamed reply must agree on."""
    return {
        "content": message.content,
        "additional_kwargs": message.additional_kwargs,
        "tool_calls": [(c["id"], c["name"], c["args"]) for c in message.tool_calls],
        "invalid_tool_calls": [(c["id"], c["name"], c["args"]) for c in message.invalid_tool_calls],
        "usage_metadata": message.usage_metadata,
        "response_metadata": dict(message.response_metadata),
    }
