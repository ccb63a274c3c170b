"""The fake's answer to a cassette's request, next to the cassette's own (Build 7, no drift).

Every 200 interaction of `cassettes/`: the recorded reply is parsed by ChatKimi's parsers into an
`AIMessage`; a script is built from that message (its text, reasoning, tool calls with their raw
arguments, usage, searches); the fake answers the cassette's request body with it; the fake's
reply is validated against the same document and parsed by the same parsers. "Same" is then
what the script carries: content, reasoning, tool calls (names and arguments), the usage counts
and the finish reason; ids, signatures and timestamps are the fake's own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from langchain_core.messages import AIMessage

from langchain_kimi.protocols import adapter
from langchain_kimi.testing import FakeKimiGateway
from tools import cassette_format
from tools.paths import CASSETTE_ROOT
from tools.sse_text import parse_sse

PROTOCOLS = {"/v1/messages": "anthropic", "/v1/chat/completions": "openai"}


@dataclass(frozen=True)
class Exchange:
    cassette: Path
    index: int
    protocol: str
    body: dict[str, Any]
    reply: str
    stream: bool

    @property
    def name(self) -> str:
        return f"{self.cassette.relative_to(CASSETTE_ROOT)}#{self.index}"


def exchanges() -> Iterator[Exchange]:
    for path in sorted(CASSETTE_ROOT.rglob("*.yaml")):
        for index, interaction in enumerate(cassette_format.load_interactions(str(path))):
            request, response = interaction["request"], interaction["response"]
            protocol = PROTOCOLS.get(urlsplit(request["uri"]).path)
            if protocol is None or response["status"]["code"] != 200:
                continue
            body = json.loads(cassette_format._unpack_body(request["body"]) or "null")
            text = cassette_format._unpack_body(response["body"]) or ""
            yield Exchange(path, index, protocol, body, text, bool(body.get("stream")))


def as_json(protocol: str, text: str, stream: bool) -> dict[str, Any]:
    """A reply body as JSON: a stream decoded by ChatKimi's own decoder (`reply()`)."""
    if not stream:
        body: dict[str, Any] = json.loads(text)
        return body
    decoder = adapter(protocol).new_decoder()  # type: ignore[arg-type]
    for event, data in parse_sse([text.encode()], default_event="message"):
        decoder.feed(event, data)
    decoder.finish()
    return decoder.reply()


def parse(protocol: str, body: dict[str, Any], model: str) -> AIMessage:
    return adapter(protocol).parse_response(body, model)  # type: ignore[arg-type]


def script_from(gw: FakeKimiGateway, protocol: str, reply: dict[str, Any], model: str) -> None:
    """The steps that make the fake answer what `reply` says."""
    if protocol == "anthropic":
        _anthropic_steps(gw, reply, model)
    else:
        _openai_steps(gw, reply)


def _anthropic_steps(gw: FakeKimiGateway, reply: dict[str, Any], model: str) -> None:
    blocks = reply.get("content") or []
    results = {
        b["tool_use_id"]: b["content"] for b in blocks if b["type"] == "web_search_tool_result"
    }
    for block in blocks:
        if block["type"] == "server_tool_use":
            found = results.get(block["id"])
            if isinstance(found, dict):
                gw.add_web_search(block["input"]["query"], error_code=found.get("error_code"))
            else:
                pages = [{"title": r["title"], "url": r["url"]} for r in found or []]
                gw.add_web_search(block["input"]["query"], results=pages)
    usage = reply.get("usage") or {}
    writes = usage.get("cache_creation_input_tokens") or 0
    reads = usage.get("cache_read_input_tokens") or 0
    counts = {
        "input_tokens": usage.get("input_tokens", 0)
        + reads
        + (0 if model == "kimi-k3" else writes),
        "output_tokens": usage.get("output_tokens", 0),
        "reasoning_tokens": (usage.get("output_tokens_details") or {}).get("thinking_tokens", 0),
        "cache_read": reads,
        "cache_write": writes,
    }
    split = usage.get("cache_creation") or {}
    if split.get("ephemeral_1h_input_tokens"):
        counts["cache_write_1h"] = split["ephemeral_1h_input_tokens"]
    gw.add_reply(
        text="".join(b["text"] for b in blocks if b["type"] == "text"),
        reasoning="".join(b["thinking"] for b in blocks if b["type"] == "thinking"),
        tool_calls=[
            {"name": b["name"], "args": b["input"]} for b in blocks if b["type"] == "tool_use"
        ],
        usage=counts,
        refusal=reply.get("stop_reason") == "refusal",
        truncated=reply.get("stop_reason") == "max_tokens",
    )


def _openai_steps(gw: FakeKimiGateway, reply: dict[str, Any]) -> None:
    message = reply["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    usage = reply.get("usage") or {}
    prompt = usage.get("prompt_tokens_details") or {}
    counts = {
        "input_tokens": usage.get("prompt_tokens", 0),
        "output_tokens": usage.get("completion_tokens", 0),
        "reasoning_tokens": (usage.get("completion_tokens_details") or {}).get(
            "reasoning_tokens", 0
        ),
        "cache_read": prompt.get("cached_tokens") or 0,
        "cache_write": prompt.get("cache_write_tokens") or 0,
    }
    searches = [c for c in calls if c["type"] == "builtin_function"]
    for position, call in enumerate(searches):
        query = json.loads(call["function"]["arguments"]).get("query", "")
        first = position == 0
        gw.add_web_search(
            query,
            same_round=not first,
            reasoning=(message.get("reasoning_content") or "") if first else "",
            usage=counts if first else None,
        )
    functions = [c for c in calls if c["type"] == "function"]
    if searches and not functions:
        return
    gw.add_reply(
        same_round=bool(searches),
        truncated=reply["choices"][0].get("finish_reason") == "length",
        text=message.get("content") or "",
        reasoning=message.get("reasoning_content") or "",
        tool_calls=[
            {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
            for c in functions
        ],
        usage=counts,
    )
