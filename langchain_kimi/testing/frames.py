"""The pieces every Kimi reply is made of, as the documents spell them, in one place.

Usage objects, Chat Completions completions and chunks, Messages messages and stream events, and
the SSE framing of both protocols (`spec/*.yaml`: `ChatCompletionResponse`, the chunk stream
ending in `data: [DONE]`; `MessageResponse`, `MessageUsage`, the `message_start` ...
`message_stop` events). `wire.py` renders the fake gateway's scripted steps with them; the
repository's cassette authoring and benchmark replies build their bodies with them too, so a
protocol fix lands once. Keys are in the order the documents list them.
"""

from __future__ import annotations

import json
from typing import Any

Json = dict[str, Any]
CREATED = 1767225600
"""The `created` timestamp of every Chat Completions reply built here (2026-01-01)."""


def compact(payload: Any) -> str:
    """JSON as the gateway sends it on a stream: no spaces, UTF-8 left as is."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


# --- SSE framing -----------------------------------------------------------------------------


def frame_openai(chunks: list[Json]) -> str:
    """Chat Completions stream: one `data:` line per chunk, then the `[DONE]` sentinel."""
    return "".join(f"data: {compact(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def frame_anthropic(events: list[Json]) -> str:
    """Messages stream: every event names its `type` in the SSE `event:` line as well."""
    return "".join(f"event: {e['type']}\ndata: {compact(e)}\n\n" for e in events)


# --- Chat Completions ------------------------------------------------------------------------


def openai_usage_counts(
    prompt: int, completion: int, reasoning: int, *, cached: int = 0, written: int = 0
) -> Json:
    """Chat Completions usage: `prompt_tokens` counts ALL input, cache reads and writes
    included (004)."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def openai_completion(rid: str, model: str, message: Json, finish: str, usage: Json) -> Json:
    """A whole `chat.completion` with one choice."""
    return {
        "id": rid,
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def openai_chunk(
    rid: str, model: str, delta: Json, finish: str | None = None, *, usage: Json | None = None
) -> Json:
    """One stream chunk; `usage` here is the `choices[0].usage` variant on the finish chunk."""
    choice: Json = {"index": 0, "delta": delta, "finish_reason": finish}
    if usage is not None:
        choice["usage"] = usage
    return {
        "id": rid,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "choices": [choice],
    }


def openai_usage_chunk(rid: str, model: str, usage: Json) -> Json:
    """The trailing usage-only chunk (empty `choices`)."""
    return {
        "id": rid,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "choices": [],
        "usage": usage,
    }


# --- Messages --------------------------------------------------------------------------------


def anthropic_usage_counts(
    input_tokens: int, output: int, thinking: int, *, read: int = 0, write: int = 0
) -> Json:
    """Messages usage: `input_tokens` counts only the input not served from the cache (what
    that means for cache writes depends on the model's document: see `wire.anthropic_usage`)."""
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "output_tokens": output,
        "output_tokens_details": {"thinking_tokens": thinking},
    }


def start_usage(usage: Json) -> Json:
    """`message_start`'s usage: the input counts (and the TTL split) with `output_tokens: 1`."""
    keep = (
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "cache_creation",
    )
    return {**{k: usage[k] for k in keep if k in usage}, "output_tokens": 1}


def anthropic_message(
    mid: str,
    model: str,
    content: list[Json],
    stop_reason: str | None,
    usage: Json,
    stop_sequence: str | None = None,
) -> Json:
    """A whole `message`."""
    return {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": usage,
    }


def message_start(mid: str, model: str, usage: Json) -> Json:
    return {"type": "message_start", "message": anthropic_message(mid, model, [], None, usage)}


def block_start(index: int, block: Json) -> Json:
    return {"type": "content_block_start", "index": index, "content_block": block}


def block_delta(index: int, delta: Json) -> Json:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def block_stop(index: int) -> Json:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str, usage: Json, stop_sequence: str | None = None) -> Json:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
        "usage": usage,
    }


PING = {"type": "ping"}
MESSAGE_STOP = {"type": "message_stop"}
