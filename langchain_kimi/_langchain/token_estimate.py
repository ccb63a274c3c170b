"""Offline token estimate: the gateway has no token-counting endpoint.

The heuristic (documented in the docs' known-limits page): about four characters of ASCII text per
token, one token per non-ASCII character (CJK text tokenizes close to one token per character),
plus a fixed overhead per message for the role and separators. It is an estimate for budgeting
a 1,048,576-token context, not a billing figure: the `usage_metadata` of a reply is exact.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from langchain_kimi._contract import REASONING
from langchain_kimi._request.tools import spec_to_bindable, to_tool_spec

PER_MESSAGE_OVERHEAD = 4
ASCII_CHARS_PER_TOKEN = 4.0


def estimate_text_tokens(text: str) -> int:
    # Counted in C: encoding to ASCII with errors ignored keeps exactly the characters < 128.
    ascii_chars = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    other_chars = len(text) - ascii_chars
    return math.ceil(ascii_chars / ASCII_CHARS_PER_TOKEN) + other_chars


_REASONING_KEYS = ("thinking", "reasoning")


def _countable_text(content: Any) -> str:
    """Every text a block carries (answer, thinking, reasoning): all of it costs tokens."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            for key in ("text", *_REASONING_KEYS):
                value = block.get(key)
                if isinstance(value, str):
                    parts.append(value)
    return "\n".join(parts)


def _reasoning_in_content(content: Any) -> bool:
    """Whether the content's blocks carry the reasoning (v1 or Anthropic-style content), which
    `additional_kwargs` then repeats: it is sent once, so it counts once."""
    if isinstance(content, str):
        return False
    return any(
        isinstance(block, dict) and block.get("type") in _REASONING_KEYS for block in content
    )


def _tool_text(tool: Any) -> str:
    """A tool as a request carries it: its schema (a `BaseTool` or function as its JSON spec)."""
    try:
        return json.dumps(spec_to_bindable(to_tool_spec(tool)))
    except (ValueError, TypeError):
        return json.dumps(tool, default=str)  # what cannot be a spec is counted as given


def estimate_message_tokens(messages: Sequence[BaseMessage], tools: Sequence[Any] = ()) -> int:
    total = 0
    for message in messages:
        total += PER_MESSAGE_OVERHEAD + estimate_text_tokens(_countable_text(message.content))
        reasoning = message.additional_kwargs.get(REASONING)
        if isinstance(reasoning, str) and not _reasoning_in_content(message.content):
            total += estimate_text_tokens(reasoning)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                total += estimate_text_tokens(call["name"] + json.dumps(call["args"]))
    for tool in tools:
        total += estimate_text_tokens(_tool_text(tool))
    return total
