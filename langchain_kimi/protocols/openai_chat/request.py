"""LangChain messages + `RequestOptions` -> a Chat Completions request body (pure, no I/O).

Only the top-level fields named by `spec/chat-completions.all-models.yaml` are produced. Never
sent: `stop` (not in the schema; ChatKimi truncates client-side, see `_call/stop.py`), `max_tokens`
(deprecated alias of `max_completion_tokens`), `stream_options` and `parallel_tool_calls`
(not in the schema).
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

from langchain_kimi._request.options import RequestOptions, WebSearchToolSpec
from langchain_kimi._request.profiles import Capabilities
from langchain_kimi._warn import warn
from langchain_kimi.protocols.openai_chat.builtin import builtin_answers, is_builtin
from langchain_kimi.protocols.openai_chat.content import (
    assistant_replay,
    plain_text,
    tool_result,
    user_content,
)


def build_request(messages: Sequence[BaseMessage], options: RequestOptions) -> dict[str, Any]:
    """The JSON body for `POST /v1/chat/completions`; ValueError for a shape the wire cannot
    express (what the model refuses was refused by `_request/resolve.py` already)."""
    if not messages:
        msg = "messages must not be empty (the Chat Completions schema requires minItems: 1)"
        raise ValueError(msg)
    caps = options.caps
    body: dict[str, Any] = {"model": options.model, "messages": _wire_messages(messages, caps)}
    if options.max_tokens is not None:
        body["max_completion_tokens"] = options.max_tokens
    if options.stream:
        body["stream"] = True
    if options.reasoning_effort is not None:
        body["reasoning_effort"] = options.reasoning_effort
    if options.cache_ttl is not None:
        body["prompt_cache_options"] = {"mode": "implicit", "ttl": options.cache_ttl}
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.top_p is not None:
        body["top_p"] = options.top_p
    body.update(_tool_fields(options))
    if options.output_format is not None:
        body["response_format"] = _response_format(options)
    body.update(options.extra_body)
    return body


# --- tools, tool_choice, response_format ---------------------------------------------------


def _tool_fields(options: RequestOptions) -> dict[str, Any]:
    tools: list[dict[str, Any]] = []
    function_names: list[str] = []
    for spec in options.tools:
        if isinstance(spec, WebSearchToolSpec):
            # `max_uses` has no Chat Completions form; the service decides how often to search.
            tools.append({"type": "web_search"})
            continue
        function: dict[str, Any] = {"name": spec.name}
        if spec.description:
            function["description"] = spec.description
        function["parameters"] = spec.parameters
        if spec.strict is not None:
            function["strict"] = spec.strict
        tools.append({"type": "function", "function": function})
        function_names.append(spec.name)
    fields: dict[str, Any] = {"tools": tools} if tools else {}
    choice = options.tool_choice
    if choice is None:
        return fields
    if not tools:
        if choice.mode in ("any", "named"):
            msg = f"tool_choice {choice.mode!r} needs at least one tool"
            raise ValueError(msg)
        return fields  # "auto"/"none" without tools mean nothing on the wire
    if choice.mode == "named":
        if choice.name not in function_names:
            msg = f"tool_choice names {choice.name!r}, not a function tool ({function_names})"
            raise ValueError(msg)
        fields["tool_choice"] = {"type": "function", "function": {"name": choice.name}}
    else:
        fields["tool_choice"] = {"auto": "auto", "any": "required", "none": "none"}[choice.mode]
    return fields


def _response_format(options: RequestOptions) -> dict[str, Any]:
    fmt = options.output_format
    assert fmt is not None
    if fmt.kind == "json_object":
        return {"type": "json_object"}
    if fmt.schema is None:
        msg = "output_format json_schema needs a schema"
        raise ValueError(msg)
    schema: dict[str, Any] = {"name": fmt.name}
    if fmt.strict is not None:
        schema["strict"] = fmt.strict
    schema["schema"] = fmt.schema
    return {"type": "json_schema", "json_schema": schema}


# --- messages ------------------------------------------------------------------------------


def _wire_messages(messages: Sequence[BaseMessage], caps: Capabilities) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    known_ids: set[str] = set()
    for position, message in enumerate(messages):
        if message.name and not isinstance(message, ToolMessage):
            _say_names_are_not_sent()
        if isinstance(message, AIMessage):
            replay = assistant_replay(message)
            wire.extend(replay)
            for item in replay:
                known_ids.update(c["id"] for c in item.get("tool_calls") or [])
            wire.extend(_builtin_answers(replay[-1], messages, position + 1))
        elif isinstance(message, ToolMessage):
            if message.tool_call_id not in known_ids:
                msg = (
                    f"ToolMessage with tool_call_id {message.tool_call_id!r} answers no tool call "
                    "of a preceding AIMessage"
                )
                raise ValueError(msg)
            wire.append(tool_result(message, caps))
        elif isinstance(message, SystemMessage) or (
            isinstance(message, ChatMessage) and message.role in ("system", "developer")
        ):
            wire.append({"role": "system", "content": plain_text(message.content, "system")})
        elif isinstance(message, HumanMessage) or (
            isinstance(message, ChatMessage) and message.role == "user"
        ):
            wire.append({"role": "user", "content": user_content(message.content, caps)})
        else:
            msg = f"unsupported message type {type(message).__name__} for Chat Completions"
            raise ValueError(msg)
    return wire


_names_warned = False


def _say_names_are_not_sent() -> None:
    """004's ChatMessage names role, content, reasoning_content, tool_calls and tool_call_id,
    no `name`: a speaker's name is not sent, said once per process. (A ToolMessage's name is
    its tool's, which its `tool_call_id` already tells.)"""
    global _names_warned
    if _names_warned:
        return
    _names_warned = True
    warn(
        "Chat Completions messages have no `name` (004's ChatMessage has role, content, "
        "reasoning_content, tool_calls and tool_call_id only): the names of messages are not "
        "sent; put a speaker's name in the content if the model should see it"
    )


def _builtin_answers(
    assistant: dict[str, Any], messages: Sequence[BaseMessage], start: int
) -> list[dict[str, Any]]:
    """The mixed case: a reply with client calls and `$web_search` calls.

    The caller's ToolMessages (the run from `messages[start]`) only answer the client calls, so
    the builtin answers (see `builtin.py`) are inserted here, right after the assistant message.
    The run is read in place: copying the rest of the history per assistant message made a
    long history cost its length squared.
    """
    calls = assistant.get("tool_calls") or []
    if not any(is_builtin(c) for c in calls):
        return []
    answered: set[str] = set()
    for end in range(start, len(messages)):
        following = messages[end]
        if not isinstance(following, ToolMessage):
            break
        answered.add(following.tool_call_id)
    if not answered:
        return []  # no ToolMessage follows: a history that stops after the reply
    return builtin_answers(calls, answered)
