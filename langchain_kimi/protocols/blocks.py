"""Standard content blocks both protocols' translator halves build: text, tool calls, indices.

Protocol-neutral pieces of the ``"kimi"`` translator (`_langchain/content_blocks.py` registers
it); each ``protocols/<protocol>/content_blocks.py`` builds its blocks with these.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any, cast

from langchain_core.messages import AIMessage
from langchain_core.messages import content as types

# Streaming indices. String indices starting with "lc_" are merged by langchain-core when v1
# chunks are added together, and never collide with the integer indices of tool call chunks
# (anthropic content-block index / openai tool-call index).
REASONING_INDEX = "lc_rs_0"
TEXT_INDEX = "lc_txt_0"


def text_block(text: str) -> types.TextContentBlock:
    return {"type": "text", "text": text}


def tool_call_block(call: Any) -> types.ToolCall:
    return {"type": "tool_call", "name": call["name"], "args": call["args"], "id": call.get("id")}


def _invalid_tool_call_block(call: Any) -> types.InvalidToolCall:
    return {
        "type": "invalid_tool_call",
        "name": call.get("name"),
        "args": call.get("args"),
        "id": call.get("id"),
        "error": call.get("error"),
    }


def calls_blocks(message: AIMessage, skip: Collection[Any] = ()) -> Iterator[types.ContentBlock]:
    """The message's tool calls (but those whose id is in `skip`), then its invalid ones."""
    for call in message.tool_calls:
        if call.get("id") not in skip:
            yield tool_call_block(call)
    for invalid in message.invalid_tool_calls:
        yield _invalid_tool_call_block(invalid)


def with_index(block: types.ContentBlock, index: str) -> types.ContentBlock:
    indexed = cast("dict[str, Any]", dict(block))
    indexed["index"] = index
    return cast("types.ContentBlock", indexed)
