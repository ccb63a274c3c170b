"""Wire pieces of authored responses, in the key order the committed cassettes have.

Usage objects, Chat Completions completions and chunks, Messages messages and stream events,
and the SSE framing of both protocols, as the specs (spec/*.yaml) document them. Nothing here
builds a request body: the authoring modules write every request body out by hand.
"""

from __future__ import annotations

import json
from typing import Any

Json = dict[str, Any]
CREATED = 1767225600
FOREIGN_REASONING = "(reasoning not available)"
"""ChatKimi's documented placeholder (`langchain_kimi._contract`) for an assistant tool-call
turn that carries no reasoning: Kimi rejects such turns ("reasoning_content is missing in
assistant tool call message"). Chat Completions: `reasoning_content`; Messages: an unsigned
`thinking` block (both Messages schemas require only `type` and `thinking`)."""
FOREIGN_THINKING = {"type": "thinking", "thinking": FOREIGN_REASONING}
"""The `created` timestamp of every authored Chat Completions response (2026-01-01)."""


def halves(text: str) -> list[str]:
    """A text delivered in two stream deltas (one when it is a single character)."""
    if len(text) < 2:
        return [text] if text else []
    mid = len(text) // 2
    return [text[:mid], text[mid:]]


def compact(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


# --- SSE framing -----------------------------------------------------------------------------


def frame_openai(chunks: list[Json]) -> str:
    """Chat Completions stream: one `data:` line per chunk, then the `[DONE]` sentinel."""
    return "".join(f"data: {compact(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def frame_anthropic(events: list[Json]) -> str:
    """Messages stream: every event names its `type` in the SSE `event:` line as well."""
    return "".join(f"event: {e['type']}\ndata: {compact(e)}\n\n" for e in events)


# --- Chat Completions pieces -----------------------------------------------------------------


def openai_usage(
    prompt: int, completion: int, reasoning: int, *, cached: int = 0, written: int = 0
) -> Json:
    """Chat Completions usage: `prompt_tokens` already includes cache reads and writes."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def openai_completion(rid: str, model: str, message: Json, finish: str, usage: Json) -> Json:
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
    """One stream chunk; `usage` here is the choices[0].usage variant on the finish chunk."""
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


# --- Messages pieces -------------------------------------------------------------------------


def anthropic_usage(
    input_tokens: int, output: int, thinking: int, *, read: int = 0, write: int = 0
) -> Json:
    """Messages usage: `input_tokens` counts only the uncached input."""
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "output_tokens": output,
        "output_tokens_details": {"thinking_tokens": thinking},
    }


def start_usage(usage: Json) -> Json:
    """message_start usage: the input counts (and TTL split) with `output_tokens: 1`."""
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
    return {
        "type": "message_start",
        "message": anthropic_message(mid, model, [], None, usage),
    }


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


# --- whole responses as streams ------------------------------------------------------------


def stream_message(msg: Json) -> str:
    """The Messages stream of a whole message: every block's text in two deltas."""
    usage = msg["usage"]
    events = [message_start(msg["id"], msg["model"], start_usage(usage))]
    for i, block in enumerate(msg["content"]):
        kind = block["type"]
        if kind == "thinking":
            events.append(block_start(i, {"type": "thinking", "thinking": "", "signature": ""}))
            events += [
                block_delta(i, {"type": "thinking_delta", "thinking": p})
                for p in halves(block["thinking"])
            ]
            events.append(
                block_delta(i, {"type": "signature_delta", "signature": block["signature"]})
            )
        elif kind == "text":
            events.append(block_start(i, {"type": "text", "text": ""}))
            events += [
                block_delta(i, {"type": "text_delta", "text": p}) for p in halves(block["text"])
            ]
        else:
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            events.append(block_start(i, head))
            # A tool call without input sends no input_json_delta at all.
            if block["input"]:
                text = json.dumps(block["input"], ensure_ascii=False)
                events += [
                    block_delta(i, {"type": "input_json_delta", "partial_json": p})
                    for p in halves(text)
                ]
        events.append(block_stop(i))
    final = {k: usage[k] for k in ("output_tokens", "output_tokens_details")}
    events += [message_delta(msg["stop_reason"], final), MESSAGE_STOP]
    return frame_anthropic(events)


def stream_completion(resp: Json) -> str:
    """The Chat Completions stream of a whole completion: every text and argument in halves."""
    rid, model = resp["id"], resp["model"]
    msg = resp["choices"][0]["message"]
    chunks = [openai_chunk(rid, model, {"role": "assistant", "content": ""})]
    chunks += [
        openai_chunk(rid, model, {"reasoning_content": p})
        for p in halves(msg.get("reasoning_content") or "")
    ]
    chunks += [openai_chunk(rid, model, {"content": p}) for p in halves(msg.get("content") or "")]
    for i, call in enumerate(msg.get("tool_calls") or []):
        name = call["function"]["name"]
        head = {"index": i, "id": call["id"], "type": call["type"]}
        chunks.append(
            openai_chunk(
                rid, model, {"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]}
            )
        )
        chunks += [
            openai_chunk(rid, model, {"tool_calls": [{"index": i, "function": {"arguments": p}}]})
            for p in halves(call["function"]["arguments"])
        ]
    chunks.append(openai_chunk(rid, model, {}, resp["choices"][0]["finish_reason"]))
    chunks.append(openai_usage_chunk(rid, model, resp["usage"]))
    return frame_openai(chunks)
