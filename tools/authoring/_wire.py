"""How the authored cassettes stream a whole reply, and the placeholder of foreign turns.

The pieces (usage objects, completions, chunks, messages, stream events, SSE framing) are the
fake gateway's, `langchain_kimi.testing.frames`: one writer of Kimi replies for the package,
the tests, the authoring and the benchmarks. Nothing here builds a request body: the authoring
modules write every request body out by hand.

What this module keeps of its own, against the fake's streams (`langchain_kimi.testing.wire`
`anthropic_sse` / `openai_sse`):
- granularity: every text, thinking text and tool-call argument string in two deltas (`halves`);
  the fake sends a few words per delta and each call's arguments in one delta;
- `message_start`: built from `frames.message_start`, so `stop_reason` and `stop_sequence` are
  null (the fake copies the message's `stop_sequence` there);
- `message_delta`: its usage is exactly `output_tokens` and `output_tokens_details` (the fake
  sends every key not about input or cache, `server_tool_use` included), and its
  `stop_sequence` is always null;
- block kinds: thinking, text, and any other block streamed as a `tool_use` (the streams this
  module writes, `tools.py`'s, have no `server_tool_use` / `web_search_tool_result` block;
  `web_search.py` streams its rounds itself, with `halves` and the same pieces).
Why: the authored cassettes are committed and replayed as they are; rendering them with the
fake's streams would change the bytes of every authored stream cassette for no change in what
they test. A protocol fix to the pieces still lands once, in `frames.py`.
"""

from __future__ import annotations

import json

from langchain_kimi.testing import frames
from langchain_kimi.testing.frames import Json

FOREIGN_REASONING = "(reasoning not available)"
"""ChatKimi's documented placeholder (`langchain_kimi._contract`) for an assistant tool-call
turn that carries no reasoning: Kimi rejects such turns ("reasoning_content is missing in
assistant tool call message"). Chat Completions: `reasoning_content`; Messages: an unsigned
`thinking` block (both Messages schemas require only `type` and `thinking`)."""
FOREIGN_THINKING = {"type": "thinking", "thinking": FOREIGN_REASONING}


def halves(text: str) -> list[str]:
    """A text delivered in two stream deltas (one when it is a single character)."""
    if len(text) < 2:
        return [text] if text else []
    mid = len(text) // 2
    return [text[:mid], text[mid:]]


# --- whole responses as streams ------------------------------------------------------------


def stream_message(msg: Json) -> str:
    """The Messages stream of a whole message: every block's text in two deltas."""
    usage = msg["usage"]
    events = [frames.message_start(msg["id"], msg["model"], frames.start_usage(usage))]
    for i, block in enumerate(msg["content"]):
        kind = block["type"]
        if kind == "thinking":
            events.append(
                frames.block_start(i, {"type": "thinking", "thinking": "", "signature": ""})
            )
            events += [
                frames.block_delta(i, {"type": "thinking_delta", "thinking": p})
                for p in halves(block["thinking"])
            ]
            events.append(
                frames.block_delta(i, {"type": "signature_delta", "signature": block["signature"]})
            )
        elif kind == "text":
            events.append(frames.block_start(i, {"type": "text", "text": ""}))
            events += [
                frames.block_delta(i, {"type": "text_delta", "text": p})
                for p in halves(block["text"])
            ]
        else:
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            events.append(frames.block_start(i, head))
            # A tool call without input sends no input_json_delta at all.
            if block["input"]:
                text = json.dumps(block["input"], ensure_ascii=False)
                events += [
                    frames.block_delta(i, {"type": "input_json_delta", "partial_json": p})
                    for p in halves(text)
                ]
        events.append(frames.block_stop(i))
    final = {k: usage[k] for k in ("output_tokens", "output_tokens_details")}
    events += [frames.message_delta(msg["stop_reason"], final), frames.MESSAGE_STOP]
    return frames.frame_anthropic(events)


def stream_completion(resp: Json) -> str:
    """The Chat Completions stream of a whole completion: every text and argument in halves."""
    rid, model = resp["id"], resp["model"]
    msg = resp["choices"][0]["message"]
    chunks = [frames.openai_chunk(rid, model, {"role": "assistant", "content": ""})]
    chunks += [
        frames.openai_chunk(rid, model, {"reasoning_content": p})
        for p in halves(msg.get("reasoning_content") or "")
    ]
    chunks += [
        frames.openai_chunk(rid, model, {"content": p}) for p in halves(msg.get("content") or "")
    ]
    for i, call in enumerate(msg.get("tool_calls") or []):
        name = call["function"]["name"]
        head = {"index": i, "id": call["id"], "type": call["type"]}
        chunks.append(
            frames.openai_chunk(
                rid, model, {"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]}
            )
        )
        chunks += [
            frames.openai_chunk(
                rid, model, {"tool_calls": [{"index": i, "function": {"arguments": p}}]}
            )
            for p in halves(call["function"]["arguments"])
        ]
    chunks.append(frames.openai_chunk(rid, model, {}, resp["choices"][0]["finish_reason"]))
    chunks.append(frames.openai_usage_chunk(rid, model, resp["usage"]))
    return frames.frame_openai(chunks)
