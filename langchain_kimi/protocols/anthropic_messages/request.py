"""LangChain messages + `RequestOptions` -> `POST /v1/messages` body. Pure; validates input.

What the model refuses was refused by `_request/resolve.py` already (from the capability row);
this module rejects only shapes the Messages wire cannot express, and reads the row to choose a
form (system blocks, tool_choice fallbacks, effort on the wire).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langchain_kimi._request.options import (
    FunctionToolSpec,
    RequestOptions,
    ToolChoice,
    WebSearchToolSpec,
)
from langchain_kimi._request.profiles import Capabilities
from langchain_kimi._warn import warn
from langchain_kimi.protocols.anthropic_messages.content import (
    Block,
    assistant_replay,
    tool_results,
    user_content,
)
from langchain_kimi.protocols.anthropic_messages.outgoing import check_turns

DEFAULT_MAX_TOKENS = 131_072
"""`max_tokens` is required on Messages; this mirrors the documented Chat Completions default."""

# 000 and 001 name one request header, `Authorization: Bearer` ("Todas las interfaces requieren
# autenticación mediante Bearer Token"), and neither requires nor forbids `anthropic-version`.
# Every Anthropic client sends it and an Anthropic-compatible backend behind the gateway may
# require it, so ChatKimi sends it too: 2023-06-01, the version the Messages request shape of
# 000 / 001 was published under and every compatible backend knows (anthropic 2.x sends a newer
# date). An assumption: the live question `anthropic-version` (tools/live/questions.py) asks
# whether the gateway needs it; `default_headers` may set another value.
HEADERS = {"anthropic-version": "2023-06-01"}
"""Headers every Messages request carries besides the transport's own."""

_ROLE_ALIASES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant"}


def build_request(messages: Sequence[BaseMessage], options: RequestOptions) -> dict[str, Any]:
    """The JSON body for one Messages request; `ValueError` for anything the row refuses."""
    caps = options.caps
    if not messages:
        msg = "messages must not be empty"
        raise ValueError(msg)
    system, turns = _convert_messages(messages, caps)
    if not turns:
        msg = "at least one user or assistant message is required besides system messages"
        raise ValueError(msg)
    check_turns(turns, caps)
    body: dict[str, Any] = {
        "model": options.model,
        "max_tokens": _max_tokens(options),
        "messages": turns,
    }
    if system is not None:
        body["system"] = system
    if options.stream:
        body["stream"] = True
    stop = _stop_sequences(options)
    if stop:
        body["stop_sequences"] = stop
    output_config = _output_config(options)
    if output_config:
        body["output_config"] = output_config
    if options.cache_ttl is not None:
        body["cache_control"] = _cache_control(options)
    body.update(_tools_and_choice(options, _tool_use_names(turns)))
    body.update(options.extra_body)
    return body


# --- messages ----------------------------------------------------------------------------


def _role_of(message: BaseMessage) -> str:
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, ToolMessage):
        return "tool"
    if isinstance(message, ChatMessage):
        if message.role == "system":
            return "system"
        if message.role in _ROLE_ALIASES:
            return _ROLE_ALIASES[message.role]
    msg = f"unsupported message type {type(message).__name__} for the anthropic protocol"
    raise ValueError(msg)


def _convert_messages(
    messages: Sequence[BaseMessage], caps: Capabilities
) -> tuple[str | list[Block] | None, list[dict[str, Any]]]:
    system_parts: list[str | list[Any]] = []
    turns: list[dict[str, Any]] = []
    known_call_ids: set[str] = set()

    def push(role: str, blocks: list[Block]) -> None:
        # The protocol alternates roles: consecutive same-role turns are merged into one. A
        # user turn of one plain text is sent as a string, and kept as one while the body is
        # built: a list per turn held until the end made a long history pay for the collector
        # (see tests/unit_tests/protocols/test_request_building_is_linear.py).
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            last = turns[-1]
            if isinstance(last["content"], str):
                last["content"] = [{"type": "text", "text": last["content"]}]
            last["content"].extend(blocks)
        elif role == "user" and len(blocks) == 1 and _plain_text(blocks[0]):
            turns.append({"role": role, "content": blocks[0]["text"]})
        else:
            turns.append({"role": role, "content": blocks})

    for message in messages:
        role = _role_of(message)
        if role == "system":
            system_parts.append(message.content)
        elif role == "user":
            push("user", user_content(message.content, caps))
        elif role == "assistant":
            ai = message if isinstance(message, AIMessage) else AIMessage(content=message.content)
            blocks = assistant_replay(ai, caps)
            known_call_ids.update(str(b.get("id")) for b in blocks if b.get("type") == "tool_use")
            known_call_ids.update(str(tc["id"]) for tc in ai.tool_calls)
            # An empty assistant turn is dropped: the API rejects empty text blocks and an empty
            # content array carries nothing.
            push("assistant", blocks)
        else:
            assert isinstance(message, ToolMessage)
            results = tool_results(message, caps)
            for answered in [message.tool_call_id, *(b["tool_use_id"] for b in results)]:
                if answered not in known_call_ids:
                    msg = (
                        f"ToolMessage tool_call_id {answered!r} matches no tool call in the "
                        "preceding AI messages"
                    )
                    raise ValueError(msg)
            push("user", results)

    return _system(system_parts, caps), turns


def _plain_text(block: Block) -> bool:
    """A text block with nothing but its text (no citations or other extras)."""
    return block.get("type") == "text" and set(block) == {"type", "text"}


def _system(parts: list[str | list[Any]], caps: Capabilities) -> str | list[Block] | None:
    """One `system` value from every System message.

    A plain string unless a caller gave content blocks and the row accepts system blocks (K3.1);
    kimi-k3 takes a string only, so blocks are joined there.
    """
    blocks: list[Block] = []
    gave_blocks = False
    for content in parts:
        if isinstance(content, str):
            if content:
                blocks.append({"type": "text", "text": content})
            continue
        for part in content:
            if isinstance(part, str):
                text = part
            elif isinstance(part, dict) and part.get("type") == "text":
                gave_blocks = True
                text = str(part.get("text") or "")
            else:
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                msg = f"system messages may only hold text on the anthropic protocol, got {kind!r}"
                raise ValueError(msg)
            if text:
                blocks.append({"type": "text", "text": text})
    if not blocks:
        return None
    if gave_blocks and caps.system_blocks:
        return blocks
    return "\n\n".join(b["text"] for b in blocks)


# --- top-level options -------------------------------------------------------------------


def _max_tokens(options: RequestOptions) -> int:
    return options.max_tokens if options.max_tokens is not None else DEFAULT_MAX_TOKENS


def _stop_sequences(options: RequestOptions) -> list[str]:
    if not options.native_stop:
        # No native stop sequences on this row: ChatKimi truncates client-side instead.
        return []
    return [s for s in options.stop if s]


def _output_config(options: RequestOptions) -> dict[str, Any]:
    caps = options.caps
    config: dict[str, Any] = {}
    effort = options.reasoning_effort
    # kimi-k3 on Messages has no output_config: its only effort (max) is the default anyway.
    if effort is not None and caps.effort_on_wire:
        config["effort"] = effort
    fmt = options.output_format
    if fmt is not None:
        if fmt.kind != "json_schema":
            msg = "JSON mode (json_object) is not available on the anthropic protocol"
            raise ValueError(msg)
        if fmt.schema is None:
            msg = "a json_schema output format needs a schema"
            raise ValueError(msg)
        config["format"] = {"type": "json_schema", "schema": fmt.schema}
    return config


def _cache_control(options: RequestOptions) -> dict[str, Any]:
    return {"type": "ephemeral", "ttl": options.cache_ttl}


def _web_search_tool(spec: WebSearchToolSpec) -> dict[str, Any]:
    if spec.raw is not None:
        return dict(spec.raw)
    tool: dict[str, Any] = {"type": "web_search_20250305", "name": "web_search"}
    if spec.max_uses is not None:
        tool["max_uses"] = spec.max_uses
    return tool


def _function_tool(spec: FunctionToolSpec) -> dict[str, Any]:
    # No `strict`: the Messages Tool schema names only name / description / input_schema.
    tool: dict[str, Any] = {"name": spec.name}
    if spec.description:
        tool["description"] = spec.description
    tool["input_schema"] = spec.parameters
    return tool


def _tool_use_names(turns: list[dict[str, Any]]) -> set[str] | None:
    """The tool names the history's `tool_use` blocks call; None when it holds no tool block
    (`tool_use` or `tool_result`) at all."""
    names: set[str] = set()
    found = False
    for turn in turns:
        for block in turn["content"] if isinstance(turn["content"], list) else ():
            if block.get("type") in ("tool_use", "tool_result"):
                found = True
            if block.get("type") == "tool_use":
                names.add(str(block.get("name")))
    return names if found else None


_none_kept_tools_warned = False


def _forbid_by_omission(
    model: str, tools: list[dict[str, Any]], history: set[str] | None
) -> dict[str, Any]:
    """kimi-k3's `tool_choice="none"`: 001's ToolChoice enum is auto / any / tool ("auto deja
    decidir al modelo, any exige una herramienta y tool exige la herramienta indicada"), so the
    call is kept from tools by sending none. A history holding tool blocks needs its tools (the
    Anthropic form refuses tool blocks without `tools`): then the tools stay, with a one-time
    warning that the model may call one."""
    global _none_kept_tools_warned
    if history is None:
        return {}
    if not _none_kept_tools_warned:
        _none_kept_tools_warned = True
        warn(
            f"{model} on the Messages protocol cannot forbid tool calls (its tool_choice is "
            '"auto", "any" or "tool"); the tools are sent anyway because the history holds '
            "tool_use / tool_result blocks, so the model may still call one"
        )
    return {"tools": tools}


def _tools_and_choice(options: RequestOptions, history: set[str] | None) -> dict[str, Any]:
    """`tools` / `tool_choice`; `history`: the tool names the history's tool blocks call (None:
    it holds none), which must keep their tools."""
    caps = options.caps
    named: list[tuple[str | None, dict[str, Any]]] = []
    for spec in options.tools:
        if isinstance(spec, FunctionToolSpec):
            named.append((spec.name, _function_tool(spec)))
        else:
            named.append((None, _web_search_tool(spec)))
    tools = [tool for _, tool in named]
    choice = options.tool_choice
    if choice is None:
        return {"tools": tools} if tools else {}
    if choice.mode == "named":
        return _named_choice(choice, named, caps, history or set())
    if not tools:
        if choice.mode == "any":
            msg = "tool_choice 'any' needs at least one tool"
            raise ValueError(msg)
        return {}
    if choice.mode not in caps.tool_choice_forms:
        if choice.mode == "none":
            return _forbid_by_omission(caps.model, tools, history)
        if caps.known:
            msg = f"tool_choice {choice.mode!r} is not supported by {caps.model} on anthropic"
            raise ValueError(msg)
    return {"tools": tools, "tool_choice": {"type": choice.mode}}


def _named_choice(
    choice: ToolChoice,
    named: list[tuple[str | None, dict[str, Any]]],
    caps: Capabilities,
    history: set[str],
) -> dict[str, Any]:
    matching = [tool for name, tool in named if name is not None and name == choice.name]
    if not matching:
        msg = f"tool_choice names {choice.name!r}, which is not among the tools"
        raise ValueError(msg)
    if "named" in caps.tool_choice_forms:
        return {
            "tools": [tool for _, tool in named],
            "tool_choice": {"type": "tool", "name": choice.name},
        }
    if "any" in caps.tool_choice_forms or not caps.known:
        # K3.1 documents no named form: offering only that tool with `any` forces it -- unless
        # the history calls other bound tools, which would be sent without their tools.
        dropped = sorted(history & {name for name, _ in named if name and name != choice.name})
        if dropped:
            msg = (
                f"tool_choice {choice.name!r} on {caps.model} (Messages) is sent as 'any' with "
                f"only that tool, but the history calls {dropped}, whose tools would then be "
                "missing; use tool_choice='any', or protocol='openai' (which names the tool)"
            )
            raise ValueError(msg)
        return {"tools": matching[:1], "tool_choice": {"type": "any"}}
    msg = f"forcing a named tool is not supported by {caps.model} on anthropic"
    raise ValueError(msg)
