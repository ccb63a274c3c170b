"""The kit behind every authored cassette: replies, interactions and cassette text.

Request bodies are NOT produced here: every authoring module writes each body out by hand. This
module turns what the authored service answers (a `Reply`, or a response written out with the
pieces of `_wire`) into the wire forms the specs document, wraps request and response into a
vcrpy interaction, and renders the readable YAML through `tools.cassette_format`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_kimi.testing import frames
from tools import cassette_format
from tools.paths import CASSETTE_ROOT

Cassettes = dict[str, str]
"""A group's output: file path relative to `cassettes/` -> the cassette's YAML text."""

BASE_URL = "https://direct.evolink.ai"
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
SHARED_PROVENANCE = [cassette_format.AUTHORED]
"""One list object for every Reply-rendered interaction: PyYAML writes a value it meets twice
once with an anchor (`&id001`) and aliases it afterwards (`*id001`). The standard, runnables
and examples cassettes were written that way; sharing it keeps regeneration byte-identical."""


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


def signature(reply_id: str) -> str:
    """A stable, obviously authored signature for an anthropic thinking block."""
    digest = hashlib.sha256(reply_id.encode()).digest() * 3
    return base64.b64encode(b"kimi-authored-from-spec:" + digest).decode()


def _pieces(text: str, size: int = 3) -> list[str]:
    """Split text into word groups, as a stream would deliver it."""
    words = text.split(" ")
    out = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    return [p if i == 0 else " " + p for i, p in enumerate(out)] if text else []


# --- Reply -> Chat Completions ---------------------------------------------------------------


def _args_text(call: Call) -> str:
    return json.dumps(call.args, ensure_ascii=False)


def _openai_usage(reply: Reply) -> frames.Json:
    prompt = reply.plain_input + reply.cache_read + reply.cache_write
    return frames.openai_usage_counts(
        prompt,
        reply.output,
        reply.reasoning_tokens,
        cached=reply.cache_read,
        written=reply.cache_write,
    )


def openai_json(reply: Reply) -> frames.Json:
    message: frames.Json = {
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
    finish = "tool_calls" if reply.calls else "stop"
    return frames.openai_completion(reply.id, reply.model, message, finish, _openai_usage(reply))


def openai_sse(reply: Reply) -> str:
    def chunk(delta: frames.Json, finish: str | None = None) -> frames.Json:
        return frames.openai_chunk(reply.id, reply.model, delta, finish)

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
    out.append(frames.openai_usage_chunk(reply.id, reply.model, _openai_usage(reply)))
    return frames.frame_openai(out)


# --- Reply -> Messages -----------------------------------------------------------------------


def _anthropic_usage(reply: Reply) -> frames.Json:
    usage = frames.anthropic_usage_counts(
        reply.plain_input,
        reply.output,
        reply.reasoning_tokens,
        read=reply.cache_read,
        write=reply.cache_write,
    )
    return {**usage, **reply.extra_usage}


def _anthropic_blocks(reply: Reply) -> list[frames.Json]:
    blocks: list[frames.Json] = []
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


def anthropic_json(reply: Reply) -> frames.Json:
    return frames.anthropic_message(
        reply.id,
        reply.model,
        _anthropic_blocks(reply),
        _anthropic_stop(reply),
        _anthropic_usage(reply),
        reply.stop_sequence,
    )


def anthropic_sse(reply: Reply) -> str:
    usage = _anthropic_usage(reply)
    out = [frames.message_start(reply.id, reply.model, frames.start_usage(usage))]
    for index, block in enumerate(_anthropic_blocks(reply)):
        kind = block["type"]
        if kind == "thinking":
            out.append(
                frames.block_start(index, {"type": "thinking", "thinking": "", "signature": ""})
            )
            out += [
                frames.block_delta(index, {"type": "thinking_delta", "thinking": piece})
                for piece in _pieces(block["thinking"])
            ]
            out.append(
                frames.block_delta(
                    index, {"type": "signature_delta", "signature": block["signature"]}
                )
            )
        elif kind == "text":
            out.append(frames.block_start(index, {"type": "text", "text": ""}))
            out += [
                frames.block_delta(index, {"type": "text_delta", "text": piece})
                for piece in _pieces(block["text"])
            ]
        else:
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            out.append(frames.block_start(index, head))
            text = json.dumps(block["input"], ensure_ascii=False)
            out += [
                frames.block_delta(
                    index, {"type": "input_json_delta", "partial_json": text[start : start + 12]}
                )
                for start in range(0, len(text), 12)
            ]
        out.append(frames.block_stop(index))
    final_usage = {
        "output_tokens": reply.output,
        "output_tokens_details": {"thinking_tokens": reply.reasoning_tokens},
    }
    out.append(frames.message_delta(_anthropic_stop(reply), final_usage, reply.stop_sequence))
    out.append(frames.MESSAGE_STOP)
    return frames.frame_anthropic(out)


# --- interactions ----------------------------------------------------------------------------


def exchange(
    protocol: str,
    body: frames.Json,
    response: frames.Json | str,
    status: tuple[int, str] = (200, "OK"),
    *,
    shared_provenance: bool = False,
) -> frames.Json:
    """One request/response pair: a str response is an SSE body, a dict a JSON body."""
    sse = isinstance(response, str)
    provenance = SHARED_PROVENANCE if shared_provenance else [cassette_format.AUTHORED]
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
            "status": {"code": status[0], "message": status[1]},
            "headers": {
                "content-type": ["text/event-stream" if sse else "application/json"],
                cassette_format.PROVENANCE_HEADER: provenance,
            },
            "body": {"string": response if sse else json.dumps(response, ensure_ascii=False)},
        },
    }


def interaction(protocol: str, body: frames.Json, reply: Reply) -> frames.Json:
    """A `Reply` answering a hand-written body; streaming is decided by the body's `stream`."""
    response: frames.Json | str
    if body.get("stream"):
        response = openai_sse(reply) if protocol == "openai" else anthropic_sse(reply)
    else:
        response = openai_json(reply) if protocol == "openai" else anthropic_json(reply)
    return exchange(protocol, body, response, shared_provenance=True)


def body_first(item: frames.Json) -> frames.Json:
    """The same interaction with the request body written before the request headers.

    The features and web_search cassettes were first written in this order; regenerating
    them byte for byte keeps it (vcrpy and the json_body matcher ignore key order).
    """
    request = dict(item["request"])
    headers = request.pop("headers")
    request.pop("body")
    request["body"] = item["request"]["body"]
    request["headers"] = headers
    return {**item, "request": request}


# --- cassette text and files -----------------------------------------------------------------


def render(interactions: list[frames.Json], note: str = "") -> str:
    """The kimiyaml text; `note` lines become comments after the authored-from-spec header."""
    text = cassette_format.serialize({"version": 1, "interactions": interactions})
    note = note.strip()
    if not note:
        return text
    comment = "".join(f"# {line}\n" if line else "#\n" for line in note.splitlines())
    head = cassette_format.AUTHORED_COMMENT
    assert text.startswith(head), "authored cassettes carry the provenance header"
    return head + comment + text[len(head) :]


def write_files(files: Cassettes, root: Path = CASSETTE_ROOT) -> list[Path]:
    written = []
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(files: Cassettes) -> None:
    """`python -m tools.authoring.<group>`: write that group's cassettes into cassettes/."""
    paths = write_files(files)
    print(f"wrote {len(paths)} cassettes under {CASSETTE_ROOT}")
