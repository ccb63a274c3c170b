"""Standard content blocks (``message.content_blocks``) for messages produced by ChatKimi.

Registered for ``response_metadata["model_provider"] == "kimi"``. The input is an AIMessage
shaped as ``docs/internals.md`` describes (text in ``content``, reasoning in
``additional_kwargs["reasoning_content"]``, raw protocol data in ``anthropic_blocks`` /
``thinking_blocks`` / ``builtin_rounds``). Blocks come out in the order the model produced them.

Choices that mirror langchain-core's own ``anthropic`` translator, so a v1 history moves freely
between ChatKimi and ChatAnthropic: ``redacted_thinking`` becomes a ``non_standard`` block holding
the raw block, ``web_search_tool_result`` carries ``extras["block_type"]``, citations become
annotations.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, cast

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages import content as types
from langchain_core.messages.block_translators import get_translator, register_translator


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

PROVIDER = "kimi"

# Streaming indices. String indices starting with "lc_" are merged by langchain-core when v1
# chunks are added together, and never collide with the integer indices of tool call chunks
# (anthropic content-block index / openai tool-call index).
_REASONING_INDEX = "lc_rs_0"
_TEXT_INDEX = "lc_txt_0"


def _is_anthropic(message: AIMessage) -> bool:
    protocol = message.response_metadata.get("protocol")
    if protocol is not None:
        return bool(protocol == "anthropic")
    return "anthropic_blocks" in message.additional_kwargs


def _content_text(message: AIMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    parts: list[str] = []
    for item in message.content:
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, dict) and item.get("type") == "text":
            parts.append(str(item.get("text", "")))
    return "".join(parts)


def _dicts(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def _reasoning_text(message: AIMessage) -> str:
    value = message.additional_kwargs.get("reasoning_content")
    return value if isinstance(value, str) else ""


# --- building blocks -------------------------------------------------------------------------


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


def _text_block(text: str, raw: dict[str, Any] | None = None) -> types.TextContentBlock:
    block: types.TextContentBlock = {"type": "text", "text": text}
    if raw is None:
        return block
    citations = raw.get("citations")
    if isinstance(citations, list) and citations:
        block["annotations"] = [_citation_to_v1(c) for c in _dicts(citations)]
    extras = {k: v for k, v in raw.items() if k not in ("type", "text", "citations")}
    if extras:
        block["extras"] = extras
    return block


def _citation_to_v1(citation: dict[str, Any]) -> types.Annotation:
    if _core_citation_to_v1 is None:
        return {"type": "non_standard_annotation", "value": citation}
    return _core_citation_to_v1(citation)


def _tool_call_block(call: Any) -> types.ToolCall:
    return {"type": "tool_call", "name": call["name"], "args": call["args"], "id": call.get("id")}


def _invalid_tool_call_block(call: Any) -> types.InvalidToolCall:
    return {
        "type": "invalid_tool_call",
        "name": call.get("name"),
        "args": call.get("args"),
        "id": call.get("id"),
        "error": call.get("error"),
    }


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


# --- anthropic protocol ----------------------------------------------------------------------


def _anthropic_blocks_unchanged(message: AIMessage, blocks: list[dict[str, Any]]) -> bool:
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    if text != _content_text(message):
        return False
    reasoning = "".join(str(b.get("thinking", "")) for b in blocks if b.get("type") == "thinking")
    stored = message.additional_kwargs.get("reasoning_content")
    return stored is None or stored == reasoning


def _iter_anthropic(message: AIMessage) -> Iterator[types.ContentBlock]:
    blocks = _dicts(message.additional_kwargs.get("anthropic_blocks"))
    if not blocks or not _anthropic_blocks_unchanged(message, blocks):
        yield from _iter_rebuilt(message)
        return
    calls = {call.get("id"): call for call in message.tool_calls}
    shown: set[Any] = set()
    for block in blocks:
        kind = block.get("type")
        if kind in ("thinking", "redacted_thinking"):
            yield _thinking_block(block)
        elif kind == "text":
            yield _text_block(str(block.get("text", "")), block)
        elif kind == "tool_use":
            # Taken from `tool_calls` so that edits to the message's calls show; a call the
            # user removed is not shown.
            call = calls.get(block.get("id"))
            if call is not None:
                shown.add(block.get("id"))
                yield _tool_call_block(call)
        elif kind == "server_tool_use":
            yield _server_tool_call(block)
        elif kind == "web_search_tool_result":
            yield _server_tool_result(block)
        else:
            yield {"type": "non_standard", "value": dict(block)}
    for call in message.tool_calls:
        if call.get("id") not in shown:
            yield _tool_call_block(call)
    for invalid in message.invalid_tool_calls:
        yield _invalid_tool_call_block(invalid)


def _iter_rebuilt(message: AIMessage) -> Iterator[types.ContentBlock]:
    """An edited (or block-less) message: reasoning, then text, then tool calls."""
    reasoning = _reasoning_text(message)
    thinking = _dicts(message.additional_kwargs.get("thinking_blocks"))
    stored = "".join(str(b.get("thinking", "")) for b in thinking if b.get("type") == "thinking")
    if thinking and stored == reasoning:
        for block in thinking:
            yield _thinking_block(block)
    elif reasoning:
        yield {"type": "reasoning", "reasoning": reasoning}
    if text := _content_text(message):
        yield _text_block(text)
    for call in message.tool_calls:
        yield _tool_call_block(call)
    for invalid in message.invalid_tool_calls:
        yield _invalid_tool_call_block(invalid)


# --- openai protocol -------------------------------------------------------------------------


def _parse_arguments(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) and arguments else {}
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _iter_builtin_rounds(rounds: list[dict[str, Any]]) -> Iterator[types.ContentBlock]:
    """`$web_search` rounds as server tool call / result pairs, in wire order."""
    results = {m.get("tool_call_id"): m for m in rounds if m.get("role") == "tool"}
    for raw in rounds:
        if raw.get("role") != "assistant":
            continue
        for call in _dicts(raw.get("tool_calls")):
            raw_function = call.get("function")
            function: dict[str, Any] = raw_function if isinstance(raw_function, dict) else {}
            arguments = function.get("arguments", "")
            call_id = str(call.get("id", ""))
            server_call: types.ServerToolCall = {
                "type": "server_tool_call",
                "name": "web_search",
                "args": _parse_arguments(arguments),
                "id": call_id,
                # The exact wire name and argument string, for a verbatim replay.
                "extras": {"function_name": function.get("name"), "arguments": arguments},
            }
            yield server_call
            tool_message = results.get(call.get("id"))
            if tool_message is not None:
                yield {
                    "type": "server_tool_result",
                    "tool_call_id": call_id,
                    "status": "success",
                    "output": tool_message.get("content"),
                }


def _iter_openai(message: AIMessage) -> Iterator[types.ContentBlock]:
    if reasoning := _reasoning_text(message):
        yield {"type": "reasoning", "reasoning": reasoning}
    yield from _iter_builtin_rounds(_dicts(message.additional_kwargs.get("builtin_rounds")))
    if text := _content_text(message):
        yield _text_block(text)
    for call in message.tool_calls:
        yield _tool_call_block(call)
    for invalid in message.invalid_tool_calls:
        yield _invalid_tool_call_block(invalid)


# --- streaming chunks ------------------------------------------------------------------------


def _with_index(block: types.ContentBlock, index: str) -> types.ContentBlock:
    indexed = cast("dict[str, Any]", dict(block))
    indexed["index"] = index
    return cast("types.ContentBlock", indexed)


def _index_whole(blocks: list[types.ContentBlock]) -> list[types.ContentBlock]:
    """Give a whole-message translation the indices the delta translation uses."""
    out: list[types.ContentBlock] = []
    for position, block in enumerate(blocks):
        kind = block["type"]
        if kind == "reasoning":
            out.append(_with_index(block, _REASONING_INDEX))
        elif kind == "text":
            out.append(_with_index(block, _TEXT_INDEX))
        else:
            out.append(_with_index(block, f"lc_{kind}_{position}"))
    return out


def _iter_chunk_deltas(chunk: AIMessageChunk) -> Iterator[types.ContentBlock]:
    """One streamed delta. Text and reasoning come from the deltas; the complete raw blocks
    that the decoders emit once (at anthropic ``content_block_stop``) only add what no delta
    carries: thinking signatures, redacted thinking and server search blocks."""
    if reasoning := _reasoning_text(chunk):
        yield {"type": "reasoning", "reasoning": reasoning, "index": _REASONING_INDEX}
    for block in _dicts(chunk.additional_kwargs.get("anthropic_blocks")):
        kind = block.get("type")
        if kind == "thinking" and block.get("signature"):
            yield {
                "type": "reasoning",
                "reasoning": "",
                "extras": {"signature": block["signature"]},
                "index": _REASONING_INDEX,
            }
        elif kind == "redacted_thinking":
            yield _with_index(_thinking_block(block), f"lc_rt_{str(block.get('data', ''))[:16]}")
        elif kind == "server_tool_use":
            yield _with_index(_server_tool_call(block), f"lc_stc_{block.get('id', '')}")
        elif kind == "web_search_tool_result":
            yield _with_index(_server_tool_result(block), f"lc_str_{block.get('tool_use_id', '')}")
    rounds = _dicts(chunk.additional_kwargs.get("builtin_rounds"))
    for round_block in _iter_builtin_rounds(rounds):
        raw = cast("dict[str, Any]", round_block)
        if raw["type"] == "server_tool_call":
            yield _with_index(round_block, f"lc_stc_{raw.get('id')}")
        else:
            yield _with_index(round_block, f"lc_str_{raw.get('tool_call_id')}")
    if text := _content_text(chunk):
        yield {"type": "text", "text": text, "index": _TEXT_INDEX}
    for piece in chunk.tool_call_chunks:
        tool_chunk: types.ToolCallChunk = {
            "type": "tool_call_chunk",
            "id": piece.get("id"),
            "name": piece.get("name"),
            "args": piece.get("args"),
        }
        if (index := piece.get("index")) is not None:
            tool_chunk["index"] = index
        yield tool_chunk


# --- public ----------------------------------------------------------------------------------


def translate_content(message: AIMessage) -> list[types.ContentBlock]:
    """Standard blocks of a complete ChatKimi message, in the order the model produced them."""
    if _is_anthropic(message):
        return list(_iter_anthropic(message))
    return list(_iter_openai(message))


def translate_content_chunk(chunk: AIMessageChunk) -> list[types.ContentBlock]:
    """Standard blocks of a streamed chunk.

    A chunk with ``chunk_position="last"`` may be the aggregate of a whole stream, so it is
    translated like a complete message (tool calls rather than tool call chunks, as
    langchain-core's own translators do), with the streaming indices so it still merges.
    """
    # The openai decoder's own last delta carries only id-less, name-less marker pieces (see
    # its `_final_chunk`); an aggregate's pieces always have the id. Translated whole, the
    # marker would become a bogus nameless tool call next to the real one.
    pieces = chunk.tool_call_chunks
    final_delta = bool(pieces) and all(not p.get("id") and not p.get("name") for p in pieces)
    if chunk.chunk_position == "last" and not final_delta:
        return _index_whole(translate_content(chunk))
    return list(_iter_chunk_deltas(chunk))


def register() -> None:
    """Register the ``"kimi"`` translator with langchain-core (idempotent)."""
    current = get_translator(PROVIDER)
    if current is not None and current.get("translate_content") is translate_content:
        return
    register_translator(PROVIDER, translate_content, translate_content_chunk)
