"""Deterministic replies served by the benchmark server, the same bytes for every client.

Per protocol: a ~1 KB JSON reply carrying reasoning (anthropic: a signed `thinking` block;
openai: `reasoning_content`) and a ~500-event SSE stream of reasoning deltas then text deltas,
shaped like the recorded traffic in `tests/fixtures/corpus/` (anthropic `ping` and
`signature_delta` events; openai `reasoning_content` / `content` deltas, usage on the last chunk,
`data: [DONE]`). The pieces are `langchain_kimi.testing.frames`' (the fake gateway's writer),
assembled here at the benchmark's own granularity: no judging, built once per process.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from langchain_kimi.testing import frames

MODEL = "kimi-k3.1-pro"
STREAM_EVENTS = 500
_MESSAGE_ID = "msg_bench_0001"
_COMPLETION_ID = "chatcmpl-bench-0001"

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


def anthropic_replies(events: int = STREAM_EVENTS, seed: int = 7) -> Replies:
    rng = random.Random(seed)
    reasoning = "".join(_pieces(rng, 30)).strip()
    answer = "".join(_pieces(rng, 18)).strip()
    signature = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789") for _ in range(96))
    usage = frames.anthropic_usage_counts(24, 180, 120)
    thinking = {"type": "thinking", "thinking": reasoning, "signature": signature}
    content = [thinking, {"type": "text", "text": answer}]
    message = frames.anthropic_message(_MESSAGE_ID, MODEL, content, "end_turn", usage)
    json_body = frames.compact(message).encode()

    # Fixed events: message_start, 2x(block start + stop), ping, signature_delta,
    # message_delta, message_stop = 9; the rest are deltas, split between thinking and text.
    deltas = max(2, events - 9)
    thinking_deltas = deltas // 2
    out = [
        frames.message_start(_MESSAGE_ID, MODEL, frames.start_usage(usage)),
        frames.block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        frames.PING,
    ]
    out += [
        frames.block_delta(0, {"type": "thinking_delta", "thinking": piece})
        for piece in _pieces(rng, thinking_deltas)
    ]
    out += [
        frames.block_delta(0, {"type": "signature_delta", "signature": signature}),
        frames.block_stop(0),
        frames.block_start(1, {"type": "text", "text": ""}),
    ]
    out += [
        frames.block_delta(1, {"type": "text_delta", "text": piece})
        for piece in _pieces(rng, deltas - thinking_deltas)
    ]
    out += [
        frames.block_stop(1),
        frames.message_delta("end_turn", {"output_tokens": 180 + deltas}),
        frames.MESSAGE_STOP,
    ]
    return Replies(json_body, frames.frame_anthropic(out).encode(), len(out))


def openai_replies(events: int = STREAM_EVENTS, seed: int = 7) -> Replies:
    rng = random.Random(seed)
    reasoning = "".join(_pieces(rng, 30)).strip()
    answer = "".join(_pieces(rng, 18)).strip()
    usage = frames.openai_usage_counts(24, 180, 120)
    message = {"role": "assistant", "content": answer, "reasoning_content": reasoning}
    completion = frames.openai_completion(_COMPLETION_ID, MODEL, message, "stop", usage)
    json_body = frames.compact(completion).encode()

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return frames.openai_chunk(_COMPLETION_ID, MODEL, delta, finish)

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
    out.append({**chunk({"content": ""}, "stop"), "usage": usage})  # usage on the finish chunk
    return Replies(json_body, frames.frame_openai(out).encode(), len(out) + 1)  # + [DONE]


def replies_for(protocol: str, events: int = STREAM_EVENTS) -> Replies:
    if protocol == "anthropic":
        return anthropic_replies(events)
    if protocol == "openai":
        return openai_replies(events)
    msg = f"unknown protocol {protocol!r}"
    raise ValueError(msg)
