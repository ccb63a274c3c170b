"""The documented shapes of Messages replies and stream events, for naming the field of a reply
the parser could not read (see `langchain_kimi.protocols.reply_shape`)."""

from __future__ import annotations

from typing import Any

from langchain_kimi.protocols.reply_shape import mismatch

_USAGE = {
    "input_tokens": int,
    "output_tokens": int,
    "cache_read_input_tokens": int,
    "cache_creation_input_tokens": int,
    "cache_creation": {"ephemeral_5m_input_tokens": int, "ephemeral_1h_input_tokens": int},
    "output_tokens_details": {"thinking_tokens": int},
    "server_tool_use": dict,
}
_BLOCK = {"type": str, "text": str, "thinking": str, "signature": str, "id": str, "name": str}
REPLY = {
    "id": str,
    "model": str,
    "content": (str, [_BLOCK]),
    "stop_reason": str,
    "stop_sequence": str,
    "usage": _USAGE,
}
EVENTS = {
    "message_start": {"message": {"id": str, "model": str, "usage": _USAGE}},
    "content_block_start": {"index": int, "content_block": _BLOCK},
    "content_block_delta": {
        "index": int,
        "delta": {"type": str, "text": str, "thinking": str, "signature": str, "partial_json": str},
    },
    "content_block_stop": {"index": int},
    "message_delta": {"delta": {"stop_reason": str, "stop_sequence": str}, "usage": _USAGE},
}


def bad_field(event: str | None, payload: Any) -> str | None:
    """The first field of a reply (`event` None) or of a stream event that has the wrong shape."""
    if event is None:
        return mismatch(payload, REPLY)
    if event in ("", "message") and isinstance(payload, dict):
        event = str(payload.get("type") or "")  # no `event:` line: the type names it
    return mismatch(payload, EVENTS.get(event, dict))
