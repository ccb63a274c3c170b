"""Standard content blocks (``message.content_blocks``) for messages produced by ChatKimi.

Registered for ``response_metadata["model_provider"] == "kimi"``. The input is an AIMessage
shaped as ``docs/internals.md`` describes (text in ``content``, reasoning in
``additional_kwargs["reasoning_content"]``, raw protocol data written by each adapter). This module
registers the translator and picks each protocol's half (``protocols/<protocol>/content_blocks.py``,
built with the shared pieces of ``protocols/blocks.py``), which turns its own raw data into blocks,
in the order the model produced them.
"""

from __future__ import annotations

from collections.abc import Iterator

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages import content as types
from langchain_core.messages.block_translators import get_translator, register_translator

from langchain_kimi._contract import ANTHROPIC_BLOCKS, PROVIDER, content_text, reasoning_text
from langchain_kimi._request.profiles import PROTOCOLS, Protocol
from langchain_kimi.protocols import adapter
from langchain_kimi.protocols.blocks import REASONING_INDEX, TEXT_INDEX, with_index


def _protocol_of(message: AIMessage) -> Protocol:
    protocol = message.response_metadata.get("protocol")
    if protocol is None:  # a message built by hand: its raw data tells
        return "anthropic" if ANTHROPIC_BLOCKS in message.additional_kwargs else "openai"
    return "anthropic" if protocol == "anthropic" else "openai"


# --- streaming chunks ------------------------------------------------------------------------


def _index_whole(blocks: list[types.ContentBlock]) -> list[types.ContentBlock]:
    """Give a whole-message translation the indices the delta translation uses."""
    out: list[types.ContentBlock] = []
    for position, block in enumerate(blocks):
        kind = block["type"]
        if kind == "reasoning":
            out.append(with_index(block, REASONING_INDEX))
        elif kind == "text":
            out.append(with_index(block, TEXT_INDEX))
        else:
            out.append(with_index(block, f"lc_{kind}_{position}"))
    return out


def _iter_chunk_deltas(chunk: AIMessageChunk) -> Iterator[types.ContentBlock]:
    """One streamed delta. Text and reasoning come from the deltas; the complete raw data that
    the decoders emit once only adds what no delta carries (each protocol's half says what)."""
    if reasoning := reasoning_text(chunk):
        yield {"type": "reasoning", "reasoning": reasoning, "index": REASONING_INDEX}
    for protocol in PROTOCOLS:
        yield from adapter(protocol).chunk_blocks(chunk)
    if text := content_text(chunk.content):
        yield {"type": "text", "text": text, "index": TEXT_INDEX}
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
    return list(adapter(_protocol_of(message)).message_blocks(message))


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
