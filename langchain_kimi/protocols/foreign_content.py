"""Assistant content other integrations wrote, in the forms both request builders read.

A history carried over from another integration holds blocks no Kimi reply has:

- ChatAnthropic's streamed tool calls: a `tool_use` block whose arguments are only in
  `partial_json` (`input: {}`): the arguments are parsed back into `input`;
- langchain-anthropic's legacy `{"type": "tool_use", "tool_input": {...}, "text": None}`: its
  `tool_input` becomes the `input` both Messages documents require;
- ChatOpenAI's Responses API items (its default form for reasoning models, output version
  "responses/v1"): a `function_call` becomes a `tool_call` (its `call_id` is what the
  ToolMessages answer), a `reasoning` item one `reasoning` block per summary part, as
  langchain-core's own v1 view of the message has them. What Kimi cannot take is left out with
  one warning per kind and process: OpenAI's encrypted reasoning and the items of its built-in
  tools (searches, code runs, MCP calls, ...), which ran on OpenAI's side, in either form
  (Responses items, or the server tool blocks of a v1 message ChatOpenAI made).

Everything else is returned unchanged, for the protocol to map or refuse.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage

from langchain_kimi._warn import warn

Block = dict[str, Any]

# OpenAI's Responses API output items that ChatOpenAI keeps in an AIMessage's content and that
# no Kimi protocol can carry: its built-in tools' calls and results, and its own refusal item.
RESPONSES_ONLY_ITEMS = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "computer_call",
        "code_interpreter_call",
        "image_generation_call",
        "local_shell_call",
        "shell_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "custom_tool_call",
        "tool_search_call",
        "tool_search_output",
        "apply_patch_call",
        "apply_patch_call_output",
        "compaction",
        "refusal",
    }
)
ENCRYPTED_REASONING = "encrypted reasoning (encrypted_content)"
# The same built-in tool items in langchain-core's v1 view of a ChatOpenAI message (its
# `output_version="v1"`): in a message ChatOpenAI made, they are OpenAI's, not Kimi's searches.
_SERVER_TOOL_BLOCKS = frozenset(
    {"server_tool_call", "server_tool_call_chunk", "server_tool_result"}
)

_warned: set[str] = set()
"""The kinds of content already warned about (one warning per kind and process)."""


def readable_content(message: AIMessage) -> str | list[Any]:
    """The message's content, the other integrations' blocks above in the forms the builders
    read."""
    content = message.content
    if isinstance(content, str):
        return content
    from_openai = message.response_metadata.get("model_provider") == "openai"
    out: list[Any] = []
    left_out: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            out.append(block)
            continue
        kind = block.get("type")
        if kind == "tool_use":
            out.append(_tool_use(block))
        elif kind == "function_call":
            out.append(_function_call(block))
        elif kind == "reasoning":
            if _encrypted(block):
                left_out.append(ENCRYPTED_REASONING)
            out.extend(_reasoning(block))
        elif kind in RESPONSES_ONLY_ITEMS or (from_openai and kind in _SERVER_TOOL_BLOCKS):
            left_out.append(str(kind))
        else:
            out.append(block)
    _warn_left_out(left_out)
    return out


def _tool_use(block: Block) -> Block:
    """A `tool_use` block with its arguments in `input`, from `partial_json` or `tool_input`."""
    arguments = block.get("input")
    if not arguments and isinstance(block.get("partial_json"), str):
        arguments = _object(block["partial_json"])
    elif "input" not in block and "tool_input" in block:
        arguments = block["tool_input"]
    else:
        return block
    return {
        "type": "tool_use",
        "id": block.get("id"),
        "name": block.get("name"),
        "input": arguments if isinstance(arguments, dict) else {},
    }


def _object(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return None


def _function_call(block: Block) -> Block:
    """A Responses `function_call` as a standard tool call (invalid when its arguments are not
    a JSON object)."""
    call_id = block.get("call_id") or block.get("id")
    arguments = block.get("arguments")
    parsed = _object(arguments) if isinstance(arguments, str) else arguments
    if isinstance(parsed, dict):
        return {"type": "tool_call", "id": call_id, "name": block.get("name"), "args": parsed}
    return {
        "type": "invalid_tool_call",
        "id": call_id,
        "name": block.get("name"),
        "args": arguments if isinstance(arguments, str) else None,
        "error": "function_call arguments are not a JSON object",
    }


def _encrypted(block: Block) -> bool:
    extras = block.get("extras")
    return "encrypted_content" in block or (
        isinstance(extras, dict) and "encrypted_content" in extras
    )


def _reasoning(block: Block) -> list[Block]:
    """A Responses reasoning item as its summary's reasoning blocks (none when it has no
    summary text); a standard reasoning block unchanged but for OpenAI's encrypted content."""
    summary = block.get("summary")
    if "reasoning" in block or not isinstance(summary, list):
        return [{k: v for k, v in block.items() if k != "encrypted_content"}]
    texts = [part.get("text") for part in summary if isinstance(part, dict)]
    return [{"type": "reasoning", "reasoning": text} for text in texts if text]


def _warn_left_out(kinds: list[str]) -> None:
    new = sorted(set(kinds) - _warned)
    if not new:
        return
    _warned.update(new)
    warn(
        "a ChatOpenAI (Responses API) history holds what Kimi cannot take; not sent: "
        f"{', '.join(new)}. Its function calls and reasoning summaries are sent as tool calls "
        "and reasoning (this warning is given once per kind)"
    )
