"""The openai half of the `"kimi"` content-block translator: reasoning, the `$web_search` rounds
(`builtin_rounds`) as server tool call / result pairs, then the answer and the tool calls."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages import content as types

from langchain_kimi import _json as fast_json
from langchain_kimi._contract import BUILTIN_ROUNDS, content_text, dicts, reasoning_text
from langchain_kimi._json import MAX_DEPTH
from langchain_kimi.protocols.blocks import calls_blocks, text_block, with_index


def _parse_arguments(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = (
            fast_json.loads(arguments, max_depth=MAX_DEPTH)
            if isinstance(arguments, str) and arguments
            else {}
        )
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _builtin_rounds(rounds: list[dict[str, Any]]) -> Iterator[types.ContentBlock]:
    """`$web_search` rounds as server tool call / result pairs, in wire order."""
    results = {m.get("tool_call_id"): m for m in rounds if m.get("role") == "tool"}
    for raw in rounds:
        if raw.get("role") != "assistant":
            continue
        for call in dicts(raw.get("tool_calls")):
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


def message_blocks(message: AIMessage) -> Iterator[types.ContentBlock]:
    """A complete message: reasoning, search rounds, text, tool calls."""
    if reasoning := reasoning_text(message):
        yield {"type": "reasoning", "reasoning": reasoning}
    yield from _builtin_rounds(dicts(message.additional_kwargs.get(BUILTIN_ROUNDS)))
    if text := content_text(message.content):
        yield text_block(text)
    yield from calls_blocks(message)


def chunk_blocks(chunk: AIMessageChunk) -> Iterator[types.ContentBlock]:
    """The search rounds a streamed chunk carries (emitted once, after each pure-search round)."""
    for round_block in _builtin_rounds(dicts(chunk.additional_kwargs.get(BUILTIN_ROUNDS))):
        raw = cast("dict[str, Any]", round_block)
        if raw["type"] == "server_tool_call":
            yield with_index(round_block, f"lc_stc_{raw.get('id')}")
        else:
            yield with_index(round_block, f"lc_str_{raw.get('tool_call_id')}")
