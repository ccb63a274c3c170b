"""LangChain messages + `RequestOptions` -> a Chat Completions request body (pure, no I/O).

Only the top-level fields named by `spec/chat-completions.all-models.yaml` are produced. Never
sent: `stop` (not in the schema; ChatKimi truncates client-side, see `_stop.py`), `max_tokens`
(deprecated alias of `max_completion_tokens`), `stream_options` and `parallel_tool_calls`
(not in the schema).
"""

from __future__ import annotations

import json
import warnings
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

from langchain_kimi._foreign_turns import FOREIGN_TURN_REASONING
from langchain_kimi._options import RequestOptions, WebSearchToolSpec
from langchain_kimi._profiles import Capabilities

BUILTIN = "builtin_function"


def build_request(messages: Sequence[BaseMessage], options: RequestOptions) -> dict[str, Any]:
    """The JSON body for `POST /v1/chat/completions`; ValueError for anything the model refuses."""
    if not messages:
        msg = "messages must not be empty (the Chat Completions schema requires minItems: 1)"
        raise ValueError(msg)
    caps = options.caps
    body: dict[str, Any] = {"model": options.model, "messages": _wire_messages(messages, caps)}
    if options.max_tokens is not None:
        if not 1 <= options.max_tokens <= caps.max_tokens_limit:
            msg = f"max_tokens must be within 1..{caps.max_tokens_limit}, got {options.max_tokens}"
            raise ValueError(msg)
        body["max_completion_tokens"] = options.max_tokens
    if options.stream:
        body["stream"] = True
    if options.reasoning_effort is not None:
        if not caps.supports_effort(options.reasoning_effort):
            msg = (
                f"{caps.model} accepts reasoning_effort {', '.join(caps.efforts)} only, "
                f"got {options.reasoning_effort!r}"
            )
            raise ValueError(msg)
        body["reasoning_effort"] = options.reasoning_effort
    if options.cache_ttl is not None:
        _require(caps, caps.cache_ttl, "the cache TTL option (prompt_cache_options)")
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


def _require(caps: Capabilities, supported: bool, what: str) -> None:
    if caps.known and not supported:
        msg = f"{caps.model} does not support {what} on the Chat Completions protocol"
        raise ValueError(msg)


# --- tools, tool_choice, response_format ---------------------------------------------------


def _tool_fields(options: RequestOptions) -> dict[str, Any]:
    caps = options.caps
    if caps.max_tools is not None and len(options.tools) > caps.max_tools:
        msg = f"at most {caps.max_tools} tools may be sent, got {len(options.tools)}"
        raise ValueError(msg)
    tools: list[dict[str, Any]] = []
    function_names: list[str] = []
    for spec in options.tools:
        if isinstance(spec, WebSearchToolSpec):
            _require(caps, caps.web_search, "the built-in web search")
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
    _require(caps, choice.mode in caps.tool_choice_forms, f"tool_choice {choice.mode!r}")
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
    caps = options.caps
    assert fmt is not None
    if fmt.kind == "json_object":
        _require(caps, caps.json_mode, "JSON mode (response_format json_object)")
        return {"type": "json_object"}
    _require(caps, caps.native_structured_output, "structured output (json_schema)")
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
        if isinstance(message, AIMessage):
            replay = _assistant_messages(message)
            wire.extend(replay)
            for item in replay:
                known_ids.update(c["id"] for c in item.get("tool_calls") or [])
            wire.extend(_builtin_answers(replay[-1], messages[position + 1 :]))
        elif isinstance(message, ToolMessage):
            if message.tool_call_id not in known_ids:
                msg = (
                    f"ToolMessage with tool_call_id {message.tool_call_id!r} answers no tool call "
                    "of a preceding AIMessage"
                )
                raise ValueError(msg)
            wire.append(_tool_message(message, caps))
        elif isinstance(message, SystemMessage) or (
            isinstance(message, ChatMessage) and message.role in ("system", "developer")
        ):
            wire.append({"role": "system", "content": _plain_text(message.content, "system")})
        elif isinstance(message, HumanMessage) or (
            isinstance(message, ChatMessage) and message.role == "user"
        ):
            wire.append({"role": "user", "content": _user_content(message.content, caps)})
        else:
            msg = f"unsupported message type {type(message).__name__} for Chat Completions"
            raise ValueError(msg)
    return wire


def _builtin_answers(
    assistant: dict[str, Any], following: Sequence[BaseMessage]
) -> list[dict[str, Any]]:
    """The mixed case: a reply with client calls and `$web_search` calls.

    The spec answers each builtin call with a `tool` message whose content is the call's own
    `arguments`; the caller's ToolMessages only answer the client calls, so the builtin answers
    are inserted here, right after the assistant message.
    """
    builtin = [c for c in assistant.get("tool_calls") or [] if c.get("type") == BUILTIN]
    if not builtin or not following or not isinstance(following[0], ToolMessage):
        return []
    answered = set()
    for message in following:
        if not isinstance(message, ToolMessage):
            break
        answered.add(message.tool_call_id)
    return [
        {"role": "tool", "tool_call_id": c["id"], "content": c["function"]["arguments"]}
        for c in builtin
        if c["id"] not in answered
    ]


def _assistant_messages(message: AIMessage) -> list[dict[str, Any]]:
    """`builtin_rounds` verbatim, then the assistant message (raw parts kept when unchanged)."""
    rounds = [dict(m) for m in message.additional_kwargs.get("builtin_rounds") or []]
    reasoning = reasoning_of(message)
    prefix = "".join(
        m.get("reasoning_content") or "" for m in rounds if m.get("role") == "assistant"
    )
    if prefix and reasoning.startswith(prefix):
        reasoning = reasoning[len(prefix) :]
    text = _ai_text(message.content)
    tool_calls = _replay_tool_calls(message)
    wire: dict[str, Any] = {"role": "assistant", "content": text or (None if tool_calls else "")}
    if reasoning:
        wire["reasoning_content"] = reasoning
    elif tool_calls:
        # A tool-call turn from elsewhere: Kimi rejects it without reasoning (see the module).
        wire["reasoning_content"] = FOREIGN_TURN_REASONING
    if tool_calls:
        wire["tool_calls"] = tool_calls
    return [*rounds, wire]


def reasoning_of(message: AIMessage) -> str:
    """The message's reasoning: openai `reasoning_content`, anthropic thinking, or v1 blocks."""
    reasoning = message.additional_kwargs.get("reasoning_content")
    if isinstance(reasoning, str):
        return reasoning
    blocks = message.additional_kwargs.get("thinking_blocks")
    if not isinstance(blocks, list):
        blocks = message.content if isinstance(message.content, list) else []
    parts = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "thinking":
            parts.append(str(block.get("thinking") or ""))
        elif isinstance(block, dict) and block.get("type") == "reasoning":
            parts.append(str(block.get("reasoning") or ""))
    return "".join(parts)


def _ai_text(content: str | list[Any]) -> str:
    # Anthropic server blocks (server_tool_use, web_search_tool_result) and thinking have no
    # Chat Completions form: only the answer text is kept.
    if isinstance(content, str):
        return content
    return "".join(
        b if isinstance(b, str) else str(b.get("text") or "")
        for b in content
        if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
    )


def _calls_from_content(content: str | list[Any]) -> list[dict[str, Any]]:
    """v1 `tool_call` and anthropic `tool_use` blocks, for messages whose tool_calls are empty."""
    calls: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_call":
            calls.append({"id": block.get("id"), "name": block["name"], "args": block["args"]})
        elif isinstance(block, dict) and block.get("type") == "tool_use":
            calls.append({"id": block.get("id"), "name": block["name"], "args": block["input"]})
    return calls


def _replay_tool_calls(message: AIMessage) -> list[dict[str, Any]]:
    raw = [c for c in message.additional_kwargs.get("tool_calls") or [] if isinstance(c, dict)]
    calls: list[dict[str, Any]] = [dict(c) for c in message.tool_calls] or _calls_from_content(
        message.content
    )
    current = {c["id"]: c for c in calls if c.get("id")}
    invalid = {c["id"]: c for c in message.invalid_tool_calls if c.get("id")}
    out: list[dict[str, Any]] = []
    sent: set[str] = set()
    for entry in raw:
        call_id = entry.get("id")
        if entry.get("type") == BUILTIN:
            out.append(_clean_raw(entry))
        elif call_id in current:
            same = _raw_matches(entry, current[call_id])
            out.append(_clean_raw(entry) if same else _rebuild(current[call_id]))
        elif call_id in invalid:
            out.append(_clean_raw(entry))
        else:
            continue  # the caller removed this call from the message
        sent.add(str(call_id))
    for call in calls:
        if call.get("id") not in sent:
            out.append(_rebuild(call))
    for bad in message.invalid_tool_calls:
        if bad.get("id") not in sent:
            out.append(_rebuild(dict(bad), arguments=bad.get("args") or ""))
    return out


def _clean_raw(entry: dict[str, Any]) -> dict[str, Any]:
    cleaned = {k: v for k, v in entry.items() if k != "index"}
    cleaned.setdefault("type", "function")  # the schema requires it; some services omit it
    return cleaned


def _raw_matches(entry: dict[str, Any], call: dict[str, Any]) -> bool:
    function = entry.get("function") or {}
    if function.get("name") != call.get("name"):
        return False
    arguments = function.get("arguments") or "{}"
    try:
        return bool(json.loads(arguments) == call.get("args"))
    except (TypeError, ValueError):
        return False


def _rebuild(call: dict[str, Any], arguments: str | None = None) -> dict[str, Any]:
    if not call.get("id"):
        msg = f"tool call {call.get('name')!r} has no id; Chat Completions needs one to replay it"
        raise ValueError(msg)
    if arguments is None:
        arguments = json.dumps(call.get("args") or {}, ensure_ascii=False)
    return {
        "id": call["id"],
        "type": "function",
        "function": {"name": call.get("name") or "", "arguments": arguments},
    }


def _tool_message(message: ToolMessage, caps: Capabilities) -> dict[str, Any]:
    content: str | list[dict[str, Any]]
    if isinstance(message.content, str):
        content = message.content
    else:
        parts = _parts(message.content, caps)
        if all(p["type"] == "text" for p in parts):
            content = "".join(p["text"] for p in parts)
        else:
            _require(caps, caps.image_tool_message, "images in tool results")
            content = parts
    return {"role": "tool", "tool_call_id": message.tool_call_id, "content": content}


def _plain_text(content: str | list[Any], role: str) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            texts.append(str(block.get("text") or ""))
        else:
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__
            msg = f"a {role} message may hold text only, got a {kind!r} block"
            raise ValueError(msg)
    return "\n\n".join(texts)


def _user_content(content: str | list[Any], caps: Capabilities) -> str | list[dict[str, Any]]:
    return content if isinstance(content, str) else _parts(content, caps)


def _parts(content: list[Any], caps: Capabilities) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, str):
            parts.append({"type": "text", "text": block})
            continue
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            # Block-level extras such as anthropic `cache_control` have no form here: dropped.
            parts.append({"type": "text", "text": str(block.get("text") or "")})
        elif kind in ("image", "image_url"):
            _require(caps, caps.image_inputs, "image inputs")
            parts.append({"type": "image_url", "image_url": _media(block, "image", caps)})
        elif kind in ("video", "video_url"):
            _require(caps, caps.video_inputs, "video inputs")
            parts.append({"type": "video_url", "video_url": _media(block, "video", caps)})
        else:
            msg = f"unsupported content block type {kind!r} (text, image and video only)"
            raise ValueError(msg)
    return parts


_DOCUMENTED_MEDIA = {
    "image": "Contenido de imagen como URL data Base64 (data:image/png;base64,...)",
    "video": "Contenido de video como URL data Base64 (data:video/mp4;base64,...)",
}
_warned_media_urls: set[str] = set()
"""Media families already warned about a web URL (one warning per process)."""


def _url_media(url: Any, family: str) -> Any:
    """A URL part as the schema has it (`{url}`; a bare string stays a string). 004 documents
    base64 data URLs only: a web URL is sent unchanged (the service may fetch it) with a warning."""
    text = url.get("url") if isinstance(url, dict) else url
    web = isinstance(text, str) and text.startswith(("http://", "https://"))
    if web and family not in _warned_media_urls:
        _warned_media_urls.add(family)
        warnings.warn(
            f"Chat Completions documents {family}s as base64 data URLs only "
            f'("{_DOCUMENTED_MEDIA[family]}"); sending the {family} URL {str(text)[:80]!r} as is, '
            "the service may not fetch it",
            UserWarning,
            stacklevel=2,
        )
    # Undocumented keys such as `detail` are dropped: the schema's object has `url` only.
    return {"url": text} if isinstance(url, dict) else url


def _media(block: dict[str, Any], family: str, caps: Capabilities) -> Any:
    """The `image_url` / `video_url` value for one LangChain, OpenAI or Anthropic block."""
    passthrough = block.get(f"{family}_url")
    if block.get("type") == f"{family}_url":
        return _url_media(passthrough, family)  # OpenAI form: a string or `{url, ...}`
    source = block.get("source")
    if isinstance(source, dict):  # anthropic-native
        if source.get("type") == "url":
            return _url_media({"url": source["url"]}, family)
        data, mime = source.get("data"), source.get("media_type")
    elif "base64" in block or block.get("source_type") == "base64":  # v1 (and legacy v0)
        data, mime = block.get("base64") or block.get("data"), block.get("mime_type")
    elif "url" in block:
        return _url_media({"url": block["url"]}, family)
    else:
        msg = f"{family} block needs base64 data or a url, got keys {sorted(block)}"
        raise ValueError(msg)
    if not isinstance(mime, str) or not mime.startswith(f"{family}/"):
        msg = f"unsupported {family} type {mime!r}: a base64 {family} needs an {family}/* type"
        raise ValueError(msg)
    allowed = caps.image_media_types if family == "image" else None
    if caps.known and allowed is not None and mime not in allowed:
        msg = f"unsupported image type {mime!r} for {caps.model}: allowed {', '.join(allowed)}"
        raise ValueError(msg)
    return {"url": f"data:{mime};base64,{data}"}
