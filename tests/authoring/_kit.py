"""Boilerplate for authored cassettes: reply rendering (JSON and SSE framing) and file writing.

Request bodies are NOT produced here: every authoring module writes each body out by hand. This
module only turns a `Reply` (what the authored service answers) into the wire forms the spec
documents for each protocol, and writes the readable YAML through `tests.cassette_format`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests import cassette_format

BASE_URL = "https://direct.evolink.ai"
CASSETTE_ROOT = Path(__file__).resolve().parent.parent.parent / "cassettes"
CREATED = 1767225600
PROVENANCE = {"x-cassette-provenance": ["authored-from-spec"]}


@dataclass(frozen=True)
class Call:
    """One tool call of an authored reply."""

    id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """An authored assistant reply; usage numbers are the protocol-neutral parts."""

    id: str
    text: str = ""
    reasoning: str = ""
    calls: tuple[Call, ...] = ()
    model: str = "kimi-k3.1-pro"
    plain_input: int = 12
    cache_read: int = 0
    cache_write: int = 0
    output: int = 24
    reasoning_tokens: int = 16
    stop_sequence: str | None = None
    """Anthropic only: the reply stopped at this native stop sequence."""
    extra_usage: dict[str, Any] = field(default_factory=dict)


def _pieces(text: str, size: int = 3) -> list[str]:
    """Split text into word groups, as a stream would deliver it."""
    words = text.split(" ")
    out = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    return [p if i == 0 else " " + p for i, p in enumerate(out)] if text else []


def _args_text(call: Call) -> str:
    return json.dumps(call.args, ensure_ascii=False)


def signature(reply_id: str) -> str:
    """A stable, obviously authored signature for an anthropic thinking block."""
    digest = hashlib.sha256(reply_id.encode()).digest() * 3
    return base64.b64encode(b"kimi-authored-from-spec:" + digest).decode()


# --- Chat Completions ----------------------------------------------------------------------


def _openai_usage(reply: Reply) -> dict[str, Any]:
    prompt = reply.plain_input + reply.cache_read + reply.cache_write
    return {
        "prompt_tokens": prompt,
        "completion_tokens": reply.output,
        "total_tokens": prompt + reply.output,
        "prompt_tokens_details": {
            "cached_tokens": reply.cache_read,
            "cache_write_tokens": reply.cache_write,
        },
        "completion_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
    }


def openai_json(reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.text or None,
        "reasoning_content": reply.reasoning,
    }
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": _args_text(c)},
            }
            for c in reply.calls
        ]
    return {
        "id": reply.id,
        "object": "chat.completion",
        "created": CREATED,
        "model": reply.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.calls else "stop",
            }
        ],
        "usage": _openai_usage(reply),
    }


def openai_sse(reply: Reply) -> str:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        payload = {
            "id": reply.id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": reply.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return "data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n\n"

    out = [chunk({"role": "assistant", "content": "", "reasoning_content": ""})]
    out += [chunk({"reasoning_content": p}) for p in _pieces(reply.reasoning)]
    out += [chunk({"content": p}) for p in _pieces(reply.text)]
    for index, call in enumerate(reply.calls):
        head = {"index": index, "id": call.id, "type": "function"}
        out.append(
            chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        )
        text = _args_text(call)
        for start in range(0, len(text), 12):
            piece = {"index": index, "function": {"arguments": text[start : start + 12]}}
            out.append(chunk({"tool_calls": [piece]}))
    out.append(chunk({}, "tool_calls" if reply.calls else "stop"))
    usage_only = {
        "id": reply.id,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": reply.model,
        "choices": [],
        "usage": _openai_usage(reply),
    }
    out.append("data: " + json.dumps(usage_only, separators=(",", ":")) + "\n\n")
    out.append("data: [DONE]\n\n")
    return "".join(out)


# --- Messages ------------------------------------------------------------------------------


def _anthropic_usage(reply: Reply) -> dict[str, Any]:
    return {
        "input_tokens": reply.plain_input,
        "cache_creation_input_tokens": reply.cache_write,
        "cache_read_input_tokens": reply.cache_read,
        "output_tokens": reply.output,
        "output_tokens_details": {"thinking_tokens": reply.reasoning_tokens},
        **reply.extra_usage,
    }


def _anthropic_blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.reasoning:
        blocks.append(
            {"type": "thinking", "thinking": reply.reasoning, "signature": signature(reply.id)}
        )
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    blocks += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.args} for c in reply.calls
    ]
    return blocks


def _anthropic_stop(reply: Reply) -> str:
    if reply.calls:
        return "tool_use"
    # The Kimi Messages schemas list no `stop_sequence` stop_reason (end_turn, max_tokens,
    # tool_use, refusal): a native stop ends the turn and names the match in `stop_sequence`.
    return "end_turn"


def anthropic_json(reply: Reply) -> dict[str, Any]:
    return {
        "id": reply.id,
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": _anthropic_blocks(reply),
        "stop_reason": _anthropic_stop(reply),
        "stop_sequence": reply.stop_sequence,
        "usage": _anthropic_usage(reply),
    }


def anthropic_sse(reply: Reply) -> str:
    def event(name: str, payload: dict[str, Any]) -> str:
        data = json.dumps({"type": name, **payload}, ensure_ascii=False, separators=(",", ":"))
        return f"event: {name}\ndata: {data}\n\n"

    start_usage = {
        "input_tokens": reply.plain_input,
        "cache_creation_input_tokens": reply.cache_write,
        "cache_read_input_tokens": reply.cache_read,
        "output_tokens": 1,
    }
    message: dict[str, Any] = {
        "id": reply.id,
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    out = [event("message_start", {"message": message})]
    for index, block in enumerate(_anthropic_blocks(reply)):
        kind = block["type"]
        if kind == "thinking":
            out.append(
                event(
                    "content_block_start",
                    {
                        "index": index,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    },
                )
            )
            for piece in _pieces(block["thinking"]):
                out.append(
                    event(
                        "content_block_delta",
                        {"index": index, "delta": {"type": "thinking_delta", "thinking": piece}},
                    )
                )
            out.append(
                event(
                    "content_block_delta",
                    {
                        "index": index,
                        "delta": {"type": "signature_delta", "signature": block["signature"]},
                    },
                )
            )
        elif kind == "text":
            out.append(
                event(
                    "content_block_start",
                    {"index": index, "content_block": {"type": "text", "text": ""}},
                )
            )
            for piece in _pieces(block["text"]):
                out.append(
                    event(
                        "content_block_delta",
                        {"index": index, "delta": {"type": "text_delta", "text": piece}},
                    )
                )
        else:
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            out.append(event("content_block_start", {"index": index, "content_block": head}))
            text = json.dumps(block["input"], ensure_ascii=False)
            for start in range(0, len(text), 12):
                delta = {"type": "input_json_delta", "partial_json": text[start : start + 12]}
                out.append(event("content_block_delta", {"index": index, "delta": delta}))
        out.append(event("content_block_stop", {"index": index}))
    final_usage = {
        "output_tokens": reply.output,
        "output_tokens_details": {"thinking_tokens": reply.reasoning_tokens},
    }
    stop: dict[str, Any] = {
        "stop_reason": _anthropic_stop(reply),
        "stop_sequence": reply.stop_sequence,
    }
    out.append(event("message_delta", {"delta": stop, "usage": final_usage}))
    out.append(event("message_stop", {}))
    return "".join(out)


# --- cassette files ------------------------------------------------------------------------

PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


def interaction(protocol: str, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """One request/response pair; streaming is decided by the hand-written body's `stream`."""
    stream = bool(body.get("stream"))
    if stream:
        text = openai_sse(reply) if protocol == "openai" else anthropic_sse(reply)
        content_type = "text/event-stream"
    else:
        wire = openai_json(reply) if protocol == "openai" else anthropic_json(reply)
        text = json.dumps(wire, ensure_ascii=False)
        content_type = "application/json"
    return {
        "request": {
            "method": "POST",
            "uri": BASE_URL + PATHS[protocol],
            "headers": {
                "authorization": ["Bearer <EVOLINK_API_KEY>"],
                "content-type": ["application/json"],
            },
            "body": json.dumps(body, ensure_ascii=False),
        },
        "response": {
            "status": {"code": 200, "message": "OK"},
            "headers": {"content-type": [content_type], **PROVENANCE},
            "body": {"string": text},
        },
    }


def write(path: Path, interactions: list[dict[str, Any]], note: str = "") -> None:
    text = cassette_format.serialize({"version": 1, "interactions": interactions})
    if note:
        head, rest = text.split("\n", 2)[:2], text.split("\n", 2)[2]
        comment = "".join(f"# {line}\n" if line else "#\n" for line in note.splitlines())
        text = "\n".join(head) + "\n" + comment + rest
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_all(
    directory: Path,
    protocol: str,
    table: dict[str, list[tuple[dict[str, Any], Reply]]],
    notes: dict[str, str] | None = None,
) -> int:
    for name, pairs in table.items():
        items = [interaction(protocol, body, reply) for body, reply in pairs]
        write(directory / f"{name}.yaml", items, (notes or {}).get(name, ""))
    return len(table)
