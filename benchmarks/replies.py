"""Deterministic replies served by the benchmark server, the same bytes for every client.

Per protocol: a ~1 KB JSON reply carrying reasoning (anthropic: a signed `thinking` block;
openai: `reasoning_content`) and a ~500-event SSE stream of reasoning deltas then text deltas,
shaped like the recorded traffic in `tests/fixtures/corpus/` (anthropic `ping` and
`signature_delta` events; openai `reasoning_content` / `content` deltas, usage on the last chunk,
`data: [DONE]`).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

MODEL = "kimi-k3.1-pro"
STREAM_EVENTS = 500

_WORDS = (
    *("the", "user", "asks", "about", "tokens", "streams", "latency", "memory", "budget"),
    *("context", "window", "cache", "reasoning", "answer", "careful", "check", "protocol"),
    *("message", "block", "signature", "delta", "model", "reply", "a", "an", "of", "to", "in"),
    *("for", "with", "because", "therefore", "consider", "first", "second", "finally", "short"),
)


def _words(rng: random.Random, count: int) -> list[str]:
    return [rng.choice(_WORDS) for _ in range(count)]


def _pieces(rng: random.Random, count: int) -> list[str]:
    """`count` small deltas (1-3 words each), like a tokenizer's output."""
    return [" " + " ".join(_words(rng, rng.randint(1, 3))) for _ in range(count)]


@dataclass(frozen=True)
class Replies:
    """Pre-encoded response bodies for one protocol."""

    json_body: bytes
    sse_body: bytes
    sse_events: int


def _sse(event: str | None, payload: dict[str, Any] | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n"


def anthropic_replies(events: int = STREAM_EVENTS, seed: int = 7) -> Replies:
    rng = random.Random(seed)
    reasoning = "".join(_pieces(rng, 30)).strip()
    answer = "".join(_pieces(rng, 18)).strip()
    signature = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789") for _ in range(96))
    usage = {
        "input_tokens": 24,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 180,
    }
    message = {
        "id": "msg_bench_0001",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [
            {"type": "thinking", "thinking": reasoning, "signature": signature},
            {"type": "text", "text": answer},
        ],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }
    json_body = json.dumps(message).encode()

    # Fixed events: message_start, 2x(block start + stop), ping, signature_delta,
    # message_delta, message_stop = 9; the rest are deltas, split between thinking and text.
    deltas = max(2, events - 9)
    thinking_deltas = deltas // 2
    text_deltas = deltas - thinking_deltas
    start_usage = {**usage, "output_tokens": 1}
    start_message = {**message, "content": [], "stop_reason": None, "usage": start_usage}
    out = [
        _sse("message_start", {"type": "message_start", "message": start_message}),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
        ),
        _sse("ping", {"type": "ping"}),
    ]
    for piece in _pieces(rng, thinking_deltas):
        delta = {"type": "thinking_delta", "thinking": piece}
        out.append(
            _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": delta},
            )
        )
    signature_delta = {"type": "signature_delta", "signature": signature}
    out += [
        _sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": signature_delta},
        ),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    for piece in _pieces(rng, text_deltas):
        delta = {"type": "text_delta", "text": piece}
        out.append(
            _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": 1, "delta": delta},
            )
        )
    out += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 1}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 180 + deltas},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    return Replies(json_body, "".join(out).encode(), len(out))


def openai_replies(events: int = STREAM_EVENTS, seed: int = 7) -> Replies:
    rng = random.Random(seed)
    reasoning = "".join(_pieces(rng, 30)).strip()
    answer = "".join(_pieces(rng, 18)).strip()
    usage = {
        "prompt_tokens": 24,
        "completion_tokens": 180,
        "total_tokens": 204,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 120},
    }
    head = {"id": "chatcmpl-bench-0001", "created": 1760000000, "model": MODEL}
    completion = {
        **head,
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer, "reasoning_content": reasoning},
                "finish_reason": "stop",
            }
        ],
        "usage": usage,
    }
    json_body = json.dumps(completion).encode()

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        body = {
            **head,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return _sse(None, body)

    # Fixed events: the role chunk, the finish chunk (with usage) and [DONE] = 3.
    deltas = max(2, events - 3)
    reasoning_deltas = deltas // 2
    out = [chunk({"role": "assistant", "content": None, "reasoning_content": ""})]
    out += [
        chunk({"content": None, "reasoning_content": piece})
        for piece in _pieces(rng, reasoning_deltas)
    ]
    out += [
        chunk({"content": piece, "reasoning_content": None})
        for piece in _pieces(rng, deltas - reasoning_deltas)
    ]
    out.append(chunk({"content": ""}, "stop", usage=usage))
    out.append(_sse(None, "[DONE]"))
    return Replies(json_body, "".join(out).encode(), len(out))


def replies_for(protocol: str, events: int = STREAM_EVENTS) -> Replies:
    if protocol == "anthropic":
        return anthropic_replies(events)
    if protocol == "openai":
        return openai_replies(events)
    msg = f"unknown protocol {protocol!r}"
    raise ValueError(msg)
