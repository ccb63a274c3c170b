"""The anthropic half of the `"kimi"` content-block translator: `anthropic_blocks` (and
`thinking_blocks`) as standard blocks, in the order the model produced them.

Choices that mirror langchain-core's own ``anthropic`` translator, so a v1 history moves freely
between ChatKimi and ChatAnthropic: ``redacted_thinking`` becomes a ``non_standard`` block holding
the raw block, ``web_search_tool_result`` carries ``extras["block_type"]``, citations become
annotations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages import content as types

from langchain_kimi._contract import (
    ANTHROPIC_BLOCKS,
    THINKING_BLOCKS,
    content_text,
    dicts,
    raw_unchanged,
    reasoning_text,
)
from langchain_kimi.protocols.anthropic_messages.content import THINKING_TYPES, thinking_text
from langchain_kimi.protocols.blocks import (
    REASONING_INDEX,
    calls_blocks,
    text_block,
    tool_call_block,
    with_index,
)


def _core_citation_converter() -> Callable[[dict[str, Any]], types.Annotation] | None:
    """langchain-core's (private) Anthropic citation converter, reused so citations match
    ChatAnthropic's exactly. Should a release rename or move it, only citation translation
    degrades (the raw citation is kept as a `non_standard_annotation`)."""
    try:
        from langchain_core.messages.block_translators import anthropic
    except ImportError:  # the module moved
        return None
    converter = getattr(anthropic, "_convert_citation_to_v1", None)
    return converter if callable(converter) else None


_core_citation_to_v1 = _core_citation_converter()


def _citation_to_v1(citation: dict[str, Any]) -> types.Annotation:
    if _core_citation_to_v1 is None:
        return {"type": "non_standard_annotation", "value": citation}
    return _core_citation_to_v1(citation)


def _thinking_block(block: dict[str, Any]) -> types.ContentBlock:
    if block.get("type") == "redacted_thinking":
        # Same as langchain-core's anthropic translator: the opaque block travels as-is.
        return {"type": "non_standard", "value": dict(block)}
    reasoning: types.ReasoningContentBlock = {
        "type": "reasoning",
        "reasoning": str(block.get("thinking", "")),
    }
    extras = {k: v for k, v in block.items() if k not in ("type", "thinking")}
    if extras:
        reasoning["extras"] = extras
    return reasoning


def _cited_text_block(raw: dict[str, Any]) -> types.TextContentBlock:
    block = text_block(str(raw.get("text", "")))
    citations = raw.get("citations")
    if isinstance(citations, list) and citations:
        block["annotations"] = [_citation_to_v1(c) for c in dicts(citations)]
    extras = {k: v for k, v in raw.items() if k not in ("type", "text", "citations")}
    if extras:
        block["extras"] = extras
    return block


def _server_tool_call(block: dict[str, Any]) -> types.ServerToolCall:
    args = block.get("input")
    server_call: types.ServerToolCall = {
        "type": "server_tool_call",
        "name": str(block.get("name", "")),
        "args": args if isinstance(args, dict) else {},
        "id": str(block.get("id", "")),
    }
    extras = {k: v for k, v in block.items() if k not in ("type", "name", "input", "id")}
    if extras:
        server_call["extras"] = extras
    return server_call


def _server_tool_result(block: dict[str, Any]) -> types.ServerToolResult:
    output = block.get("content")
    # An error is an object `{"type": "web_search_tool_result_error", "error_code": ...}`
    # instead of the array of results.
    failed = isinstance(output, dict) and output.get("type") == "web_search_tool_result_error"
    result: types.ServerToolResult = {
        "type": "server_tool_result",
        "tool_call_id": str(block.get("tool_use_id", "")),
        "status": "error" if failed else "success",
        "output": output,
        "extras": {"block_type": block.get("type")},
    }
    for key, value in block.items():
        if key not in ("type", "tool_use_id", "content"):
            result["extras"][key] = value
    return result


def message_blocks(message: AIMessage) -> Iterator[types.ContentBlock]:
    """A complete message: its raw blocks in order while they still say what the message says."""
    blocks = dicts(message.additional_kwargs.get(ANTHROPIC_BLOCKS))
    unchanged = raw_unchanged(
        message,
        raw_text=content_text(blocks),
        raw_reasoning=thinking_text(blocks),
    )
    if not blocks or not unchanged:
        yield from _rebuilt(message)
        return
    calls = {call.get("id"): call for call in message.tool_calls}
    shown: set[Any] = set()
    for block in blocks:
        kind = block.get("type")
        if kind in THINKING_TYPES:
            yield _thinking_block(block)
        elif kind == "text":
            yield _cited_text_block(block)
        elif kind == "tool_use":
            # Taken from `tool_calls` so that edits to the message's calls show; a call the
            # user removed is not shown.
            call = calls.get(block.get("id"))
            if call is not None:
                shown.add(block.get("id"))
                yield tool_call_block(call)
        elif kind == "server_tool_use":
            yield _server_tool_call(block)
        elif kind == "web_search_tool_result":
            yield _server_tool_result(block)
        else:
            yield {"type": "non_standard", "value": dict(block)}
    yield from calls_blocks(message, skip=shown)


def _rebuilt(message: AIMessage) -> Iterator[types.ContentBlock]:
    """An edited (or block-less) message: reasoning, then text, then tool calls."""
    reasoning = reasoning_text(message)
    thinking = dicts(message.additional_kwargs.get(THINKING_BLOCKS))
    if thinking and thinking_text(thinking) == reasoning:
        for block in thinking:
            yield _thinking_block(block)
    elif reasoning:
        yield {"type": "reasoning", "reasoning": reasoning}
    if text := content_text(message.content):
        yield text_block(text)
    yield from calls_blocks(message)


def chunk_blocks(chunk: AIMessageChunk) -> Iterator[types.ContentBlock]:
    """What the complete raw blocks of a streamed chunk add beyond the text and reasoning deltas:
    thinking signatures, redacted thinking and server search blocks."""
    for block in dicts(chunk.additional_kwargs.get(ANTHROPIC_BLOCKS)):
        kind = block.get("type")
        if kind == "thinking" and block.get("signature"):
            yield {
                "type": "reasoning",
                "reasoning": "",
                "extras": {"signature": block["signature"]},
                "index": REASONING_INDEX,
            }
        elif kind == "redacted_thinking":
            yield with_index(_thinking_block(block), f"lc_rt_{str(block.get('data', ''))[:16]}")
        elif kind == "server_tool_use":
            yield with_index(_server_tool_call(block), f"lc_stc_{block.get('id', '')}")
        elif kind == "web_search_tool_result":
            yield with_index(_server_tool_result(block), f"lc_str_{block.get('tool_use_id', '')}")
