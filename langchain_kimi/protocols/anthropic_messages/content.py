"""LangChain message content -> Anthropic Messages content blocks (user parts, tool results,
assistant replay). Pure functions; `request.py` assembles the turns.

Accepted input shapes: plain strings, LangChain v1 standard blocks, OpenAI-style parts
(`image_url`) and Anthropic-native blocks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from typing import Any, TypeGuard

from langchain_core.messages import AIMessage, ToolMessage

from langchain_kimi._contract import (
    ANTHROPIC_BLOCKS,
    FOREIGN_TURN_REASONING,
    REASONING,
    THINKING_BLOCKS,
    content_text,
    raw_unchanged,
)
from langchain_kimi._request.profiles import Capabilities
from langchain_kimi.protocols.foreign_content import readable_content

Block = dict[str, Any]

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
SERVER_BLOCK_TYPES = frozenset({"server_tool_use", "web_search_tool_result"})
_NATIVE_ASSISTANT_TYPES = frozenset({"text", "tool_use", *THINKING_TYPES, *SERVER_BLOCK_TYPES})
# Keys LangChain adds to blocks (stream merging, v1 views) that are not part of the wire format.
# `cache_control` on a block is allowed by the schema but only the top-level `cache_control`
# sets the cache TTL on Kimi (spec: CreateMessageRequest.cache_control), so block-level marks are
# stripped to keep one source of truth and requests that never break on them.
_LOCAL_KEYS = frozenset({"index", "cache_control", "partial_json"})
_DATA_URL = re.compile(r"^data:(?P<mime>[^;,]*)(?P<params>(;[^;,]*)*);base64,(?P<data>.*)$", re.S)
_VIDEO_TYPES = frozenset({"video", "video_url", "input_video"})


def _clean(block: Block) -> Block:
    return {k: v for k, v in block.items() if k not in _LOCAL_KEYS}


def thinking_text(blocks: Iterable[Block]) -> str:
    """Reasoning text of thinking blocks, joined (redacted thinking carries no text)."""
    return "".join(str(b.get("thinking") or "") for b in blocks if b.get("type") == "thinking")


# --- images -------------------------------------------------------------------------------


def _source_from_url(url: Any) -> Block:
    if not isinstance(url, str) or not url:
        msg = "image part has no url"
        raise ValueError(msg)
    if url.startswith("data:"):
        match = _DATA_URL.match(url)
        if match is None:
            msg = "image data URLs must be base64-encoded (data:<media type>;base64,<data>)"
            raise ValueError(msg)
        return {"type": "base64", "media_type": match["mime"], "data": match["data"]}
    return {"type": "url", "url": url}


def _image_source(part: Block) -> Block:
    kind = part.get("type")
    if kind == "image_url":
        image_url = part.get("image_url")
        url = image_url.get("url") if isinstance(image_url, dict) else image_url
        return _source_from_url(url)
    source = part.get("source")
    if isinstance(source, dict):  # Anthropic-native
        return _clean(source)
    # LangChain v1 (`base64` / `url` / `file_id`) and v0 (`source_type` + `data`) image blocks.
    data = part.get("base64") or (part.get("data") if part.get("source_type") == "base64" else None)
    if data:
        media_type = part.get("mime_type") or part.get("media_type") or ""
        return {"type": "base64", "media_type": media_type, "data": data}
    if part.get("url"):
        return _source_from_url(part["url"])
    msg = "image block needs base64 data or a url (file ids are not supported on this protocol)"
    raise ValueError(msg)


def image_block(part: Block, caps: Capabilities, *, in_tool_result: bool = False) -> Block:
    """An Anthropic `image` block from any supported image part; checks the capability row."""
    if caps.known and not caps.image_inputs:
        msg = f"image input is not supported by {caps.model} on the anthropic protocol"
        raise ValueError(msg)
    if caps.known and in_tool_result and not caps.image_tool_message:
        msg = f"images in tool results are not supported by {caps.model} on the anthropic protocol"
        raise ValueError(msg)
    source = _image_source(part)
    if caps.known and source.get("type") == "url" and not caps.image_url_inputs:
        msg = f"image URLs are not supported by {caps.model} on the anthropic protocol"
        raise ValueError(msg)
    if source.get("type") == "base64" and caps.known and caps.image_media_types is not None:
        media_type = source.get("media_type")
        if media_type not in caps.image_media_types:
            allowed = ", ".join(caps.image_media_types)
            msg = (
                f"image media type {media_type!r} is not accepted by {caps.model} on the "
                f"anthropic protocol (allowed: {allowed})"
            )
            raise ValueError(msg)
    return {"type": "image", "source": source}


def _is_image(part: Block) -> bool:
    return part.get("type") in ("image", "image_url")


def _is_video(part: Block) -> bool:
    kind = part.get("type")
    mime = str(part.get("mime_type") or "")
    return kind in _VIDEO_TYPES or (kind == "file" and mime.startswith("video/"))


def _reject_video() -> None:
    msg = "video input needs protocol='openai' (the Messages protocol has no video blocks)"
    raise ValueError(msg)


# --- user content ------------------------------------------------------------------------


def user_content(content: str | list[Any], caps: Capabilities) -> list[Block]:
    """Content blocks of one Human message (empty text dropped: the API rejects empty blocks)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[Block] = []
    for part in content:
        if isinstance(part, str):
            if part:
                blocks.append({"type": "text", "text": part})
            continue
        if not isinstance(part, dict):
            msg = f"unsupported content part {part!r} in a user message"
            raise ValueError(msg)
        kind = part.get("type")
        if kind == "text":
            if part.get("text"):
                blocks.append({"type": "text", "text": str(part["text"])})
        elif _is_video(part):
            _reject_video()
        elif _is_image(part):
            blocks.append(image_block(part, caps))
        elif kind == "tool_result":  # Anthropic-native history passed through
            blocks.append(_clean(part))
        else:
            msg = f"unsupported content block type {kind!r} in a user message (anthropic protocol)"
            raise ValueError(msg)
    return blocks


def tool_results(message: ToolMessage, caps: Capabilities) -> list[Block]:
    """The `tool_result` blocks of a ToolMessage: one for its content, or the blocks themselves
    when its content already is `tool_result` blocks (a form ChatAnthropic accepts)."""
    content = message.content
    given = [p for p in content if _is_tool_result(p)] if isinstance(content, list) else []
    if given and len(given) == len(content):
        return [
            _tool_result(p.get("tool_use_id"), p.get("content", ""), caps, p.get("is_error"))
            for p in given
        ]
    return [_tool_result(message.tool_call_id, content, caps, message.status == "error")]


def _is_tool_result(part: Any) -> TypeGuard[Block]:
    return isinstance(part, dict) and part.get("type") == "tool_result"


def _tool_result(tool_use_id: Any, content: Any, caps: Capabilities, is_error: Any) -> Block:
    """A `tool_result` block; list content is kept as blocks only where the row allows it."""
    payload: str | list[Block]
    if isinstance(content, str):
        payload = content
    elif not isinstance(content, list):
        got = type(content).__name__
        msg = f"a tool_result's content is a string or a list of blocks, got a {got}"
        raise ValueError(msg)
    else:
        parts: list[Block] = []
        for part in content:
            if isinstance(part, str):
                parts.append({"type": "text", "text": part})
            elif isinstance(part, dict) and part.get("type") == "text":
                parts.append({"type": "text", "text": str(part.get("text") or "")})
            elif isinstance(part, dict) and _is_video(part):
                _reject_video()
            elif isinstance(part, dict) and _is_image(part):
                if not caps.tool_result_blocks:
                    msg = (
                        f"images in tool results are not supported by {caps.model} on the "
                        "anthropic protocol (tool_result content is a string there)"
                    )
                    raise ValueError(msg)
                parts.append(image_block(part, caps, in_tool_result=True))
            else:
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                msg = f"unsupported content block type {kind!r} in a tool message"
                raise ValueError(msg)
        # kimi-k3's tool_result.content is a string only (images were refused above).
        payload = parts if caps.tool_result_blocks and parts else "".join(p["text"] for p in parts)
    block: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": payload}
    if is_error is True:
        block["is_error"] = True
    return block


# --- assistant replay --------------------------------------------------------------------


def _tool_use(call_id: Any, name: Any, args: Any) -> Block:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def _invalid_tool_uses(message: AIMessage, skip: Collection[Any] = ()) -> list[Block]:
    """`tool_use` blocks for calls whose arguments were not a JSON object.

    The Messages wire needs an object `input`; `{}` keeps the call (and the `tool_result` that
    answers it) in the history, while the raw arguments stay in `invalid_tool_calls`.
    """
    return [
        _tool_use(call["id"], call.get("name") or "", {})
        for call in message.invalid_tool_calls
        if call.get("id") and call["id"] not in skip
    ]


def _is_unchanged(message: AIMessage, stored: list[Any]) -> bool:
    """Whether `stored` (anthropic_blocks) still says what the message's current fields say:
    the contract's rule for text and reasoning, and the same tool calls."""
    if not all(isinstance(b, dict) for b in stored):
        return False
    if not raw_unchanged(
        message, raw_text=content_text(stored), raw_reasoning=thinking_text(stored)
    ):
        return False
    uses = [b for b in stored if b.get("type") == "tool_use"]
    calls = [
        (b.get("id"), b.get("name"), b.get("input"))
        for b in uses
        if isinstance(b.get("input"), dict)
    ]
    if calls != [(tc["id"], tc["name"], tc["args"]) for tc in message.tool_calls]:
        return False
    # Non-object inputs were parsed into invalid_tool_calls (raw JSON kept there).
    bad_ids = [b.get("id") for b in uses if not isinstance(b.get("input"), dict)]
    return bad_ids == [tc["id"] for tc in message.invalid_tool_calls]


def _thinking_from_kwargs(message: AIMessage) -> list[Block]:
    kwargs = message.additional_kwargs
    reasoning = kwargs.get(REASONING)
    stored = kwargs.get(THINKING_BLOCKS)
    if (
        isinstance(stored, list)
        and stored
        and all(isinstance(b, dict) and str(b.get("type")) in THINKING_TYPES for b in stored)
        and (reasoning is None or thinking_text(stored) == reasoning)
    ):
        return [dict(b) for b in stored]
    if isinstance(reasoning, str) and reasoning:
        # Edited, or produced on the openai protocol: no signature to send (optional in both
        # Kimi Messages schemas).
        return [{"type": "thinking", "thinking": reasoning}]
    return []


def _json_arguments(kind: str, text: str) -> Any:
    """A streamed block's argument text, parsed (blank: no arguments)."""
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        msg = f"the args of a {kind} block must be JSON text, got {text!r:.60}"
        raise ValueError(msg) from None


def _from_v1_or_native(block: Block) -> Block | None:
    kind = block.get("type")
    if kind == "non_standard" and isinstance(block.get("value"), dict):
        return _from_v1_or_native(block["value"])
    if kind == "text":
        text = str(block.get("text") or "")
        if not text:
            return None
        out: Block = {"type": "text", "text": text}
        if isinstance(block.get("citations"), list):  # native citations; v1 annotations dropped
            out["citations"] = block["citations"]
        return out
    if kind == "reasoning":
        thinking: Block = {"type": "thinking", "thinking": str(block.get("reasoning") or "")}
        extras = block.get("extras")
        if isinstance(extras, dict) and extras.get("signature"):
            thinking["signature"] = extras["signature"]
        return _said(thinking)
    if kind == "thinking":
        return _said(_clean(block))
    if kind == "invalid_tool_call":
        # Not a JSON object: see `_invalid_tool_uses`.
        return _tool_use(block.get("id"), block.get("name") or "", {})
    if kind in ("tool_call", "tool_call_chunk", "server_tool_call", "server_tool_call_chunk"):
        args = block.get("args")
        if isinstance(args, str):
            args = _json_arguments(kind, args)
        wire = "server_tool_use" if kind.startswith("server") else "tool_use"
        return {"type": wire, "id": block.get("id"), "name": block.get("name"), "input": args or {}}
    if kind == "server_tool_result":
        extras = block.get("extras")
        extras = extras if isinstance(extras, dict) else {}
        return {
            "type": extras.get("block_type", "web_search_tool_result"),
            "tool_use_id": block.get("tool_call_id"),
            "content": block.get("output", []),
        }
    if kind in _NATIVE_ASSISTANT_TYPES:
        return _clean(block)
    msg = f"unsupported content block type {kind!r} in an assistant message (anthropic protocol)"
    raise ValueError(msg)


def _said(thinking: Block) -> Block | None:
    """A thinking block, or None when it says nothing: no text and no signature (an empty
    reasoning counts as none, docs/reasoning.md)."""
    return thinking if thinking.get("thinking") or thinking.get("signature") else None


def _from_content_list(message: AIMessage, content: list[Any]) -> list[Block]:
    blocks: list[Block] = []
    for part in content:
        if isinstance(part, str):
            if part:
                blocks.append({"type": "text", "text": part})
        elif isinstance(part, dict):
            mapped = _from_v1_or_native(part)
            if mapped is not None:
                blocks.append(mapped)
    if not any(b["type"] in THINKING_TYPES for b in blocks):
        blocks[:0] = _thinking_from_kwargs(message)
    # Current tool_calls win over stale block inputs; calls missing from the content are added.
    calls = {tc["id"]: tc for tc in message.tool_calls}
    seen: set[Any] = set()
    for block in blocks:
        if (
            block["type"] == "tool_use"
            and isinstance(block.get("id"), str)
            and block["id"] in calls
        ):
            block["input"] = calls[block["id"]]["args"]
            block["name"] = calls[block["id"]]["name"]
            seen.add(block["id"])
    blocks.extend(
        _tool_use(tc["id"], tc["name"], tc["args"])
        for tc in message.tool_calls
        if tc["id"] not in seen
    )
    present = {b["id"] for b in blocks if b["type"] == "tool_use" and isinstance(b.get("id"), str)}
    blocks.extend(_invalid_tool_uses(message, skip=present))
    return blocks


def assistant_replay(message: AIMessage, caps: Capabilities) -> list[Block]:
    """The content blocks to send for an AIMessage (see docs/internals.md, "Replay")."""
    stored = message.additional_kwargs.get(ANTHROPIC_BLOCKS)
    if isinstance(stored, list) and stored and _is_unchanged(message, stored):
        has_server = any(str(b.get("type")) in SERVER_BLOCK_TYPES for b in stored)
        if caps.server_tool_blocks or not has_server:
            return _sendable([dict(b) for b in stored])
    content = readable_content(message)
    if isinstance(content, list):
        blocks = _from_content_list(message, content)
    else:
        blocks = _thinking_from_kwargs(message)
        if content:
            blocks.append({"type": "text", "text": content})
        blocks.extend(_tool_use(tc["id"], tc["name"], tc["args"]) for tc in message.tool_calls)
        blocks.extend(_invalid_tool_uses(message))
    if not caps.server_tool_blocks:
        # kimi-k3's schema has no server search blocks: they cannot be replayed there.
        blocks = [b for b in blocks if b["type"] not in SERVER_BLOCK_TYPES]
    return _sendable(blocks)


def _sendable(blocks: list[Block]) -> list[Block]:
    """The blocks the documents let us send. `redacted_thinking` (another provider's encrypted
    reasoning, e.g. Claude's in a langchain-anthropic history) is dropped: 000 / 001
    `ContentBlock` has no such type, so the gateway refuses it. A tool-call turn from elsewhere
    has no thinking block, which the gateway is assumed to reject (see
    `FOREIGN_TURN_REASONING`): it gets an unsigned one with the placeholder (no signature can
    be made for it)."""
    blocks = [b for b in blocks if b.get("type") != "redacted_thinking"]
    has_tool_use = any(b.get("type") == "tool_use" for b in blocks)
    if has_tool_use and not any(str(b.get("type")) in THINKING_TYPES for b in blocks):
        return [{"type": "thinking", "thinking": FOREIGN_TURN_REASONING}, *blocks]
    return blocks
