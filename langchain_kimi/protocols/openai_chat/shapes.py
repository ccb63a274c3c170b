"""The documented shapes of Chat Completions replies and stream chunks, for naming the field
of a reply the parser could not read (see `langchain_kimi.protocols.reply_shape`)."""

from __future__ import annotations

from typing import Any

from langchain_kimi.protocols.reply_shape import mismatch

_USAGE = {
    "prompt_tokens": int,
    "completion_tokens": int,
    "total_tokens": int,
    "prompt_tokens_details": {"cached_tokens": int, "cache_write_tokens": int},
    "completion_tokens_details": {"reasoning_tokens": int},
}
_TOOL_CALL = {
    "id": str,
    "type": str,
    "index": int,
    "function": {"name": str, "arguments": str},
}
_CONTENT = {"content": (str, [dict]), "reasoning_content": str, "tool_calls": [_TOOL_CALL]}
_HEAD = {"id": str, "model": str, "created": int, "usage": _USAGE}
REPLY = {**_HEAD, "choices": [{"message": _CONTENT, "finish_reason": str, "usage": _USAGE}]}
CHUNK = {**_HEAD, "choices": [{"delta": _CONTENT, "finish_reason": str, "usage": _USAGE}]}


def bad_field(event: str | None, payload: Any) -> str | None:
    """The first field of a reply (`event` None) or of a stream event that has the wrong shape."""
    return mismatch(payload, REPLY if event is None else CHUNK)
