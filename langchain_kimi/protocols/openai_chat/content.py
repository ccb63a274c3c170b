"""What one LangChain message becomes on Chat Completions: user `content` parts (text, image,
video), a `tool` message, and the replay of an assistant turn with its raw tool calls and search
rounds. `request.py` puts the messages in order. Parts may come as plain strings, v1 standard
blocks, OpenAI-style parts or Anthropic-native blocks.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from langchain_kimi import _json as fast_json
from langchain_kimi._contract import (
    BUILTIN_ROUNDS,
    FOREIGN_TURN_REASONING,
    RAW_TOOL_CALLS,
    REASONING,
    THINKING_BLOCKS,
    content_text,
)
from langchain_kimi._json import MAX_DEPTH, dumps_text
from langchain_kimi._request.profiles import Capabilities
from langchain_kimi._warn import warn
from langchain_kimi.protocols.foreign_content import readable_content
from langchain_kimi.protocols.openai_chat.builtin import is_builtin


def require(caps: Capabilities, supported: bool, what: str) -> None:
    if caps.known and not supported:
        msg = f"{caps.model} does not support {what} on the Chat Completions protocol"
        raise ValueError(msg)


def assistant_replay(message: AIMessage) -> list[dict[str, Any]]:
    """`builtin_rounds` verbatim, then the assistant message (raw parts kept when unchanged)."""
    rounds = [dict(m) for m in _stored_list(message, BUILTIN_ROUNDS)]
    if any(m.get("role") not in ("assistant", "tool") for m in rounds):
        msg = (
            f"additional_kwargs[{BUILTIN_ROUNDS!r}] of an AIMessage holds a message without the "
            "role 'assistant' or 'tool' (not a search round ChatKimi stored): remove the key"
        )
        raise ValueError(msg)
    content = readable_content(message)
    reasoning = reasoning_of(message, content)
    prefix = "".join(
        m.get("reasoning_content") or "" for m in rounds if m.get("role") == "assistant"
    )
    if prefix and reasoning.startswith(prefix):
        reasoning = reasoning[len(prefix) :]
    # Anthropic server blocks (server_tool_use, web_search_tool_result) and thinking have no
    # Chat Completions form: only the answer text is kept.
    text = content_text(content)
    tool_calls = _replay_tool_calls(message, content)
    wire: dict[str, Any] = {"role": "assistant", "content": text or (None if tool_calls else "")}
    if reasoning:
        wire["reasoning_content"] = reasoning
    elif tool_calls:
        # A tool-call turn from elsewhere: assumed rejected without reasoning (see the constant).
        wire["reasoning_content"] = FOREIGN_TURN_REASONING
    if tool_calls:
        wire["tool_calls"] = tool_calls
    return [*rounds, wire]


def _stored_list(message: AIMessage, key: str) -> list[dict[str, Any]]:
    """A list of raw wire dicts ChatKimi keeps in `additional_kwargs` (absent: empty)."""
    stored = message.additional_kwargs.get(key) or []
    if not isinstance(stored, list) or not all(isinstance(item, dict) for item in stored):
        msg = (
            f"additional_kwargs[{key!r}] of an AIMessage must be a list of dicts (the raw "
            f"messages ChatKimi stored), got {stored!r:.80}: restore it or remove the key"
        )
        raise ValueError(msg)
    return stored


def reasoning_of(message: AIMessage, content: str | list[Any]) -> str:
    """The message's reasoning: openai `reasoning_content`, anthropic thinking, or the v1
    blocks of its `content` (as `readable_content` gives them)."""
    reasoning = message.additional_kwargs.get(REASONING)
    if isinstance(reasoning, str):
        return reasoning
    blocks = message.additional_kwargs.get(THINKING_BLOCKS)
    if not isinstance(blocks, list):
        blocks = content if isinstance(content, list) else []
    parts = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "thinking":
            parts.append(str(block.get("thinking") or ""))
        elif isinstance(block, dict) and block.get("type") == "reasoning":
            parts.append(str(block.get("reasoning") or ""))
    return "".join(parts)


_CALL_BLOCK_ARGS = {"tool_call": "args", "tool_use": "input"}
"""v1 and Anthropic tool-call blocks, and the key holding each one's arguments."""


def _calls_from_content(content: str | list[Any]) -> list[dict[str, Any]]:
    """v1 `tool_call` and anthropic `tool_use` blocks, for messages whose tool_calls are empty."""
    calls: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind in _CALL_BLOCK_ARGS:
            assert isinstance(block, dict)
            name, args = block.get("name"), block.get(_CALL_BLOCK_ARGS[kind])
            if not isinstance(name, str) or not name or not isinstance(args, dict):
                msg = (
                    f"a {kind} block of an AIMessage needs a 'name' (a string) and "
                    f"{_CALL_BLOCK_ARGS[kind]!r} (an object), got keys {sorted(block)}"
                )
                raise ValueError(msg)
            calls.append({"id": block.get("id"), "name": name, "args": args})
    return calls


def _replay_tool_calls(message: AIMessage, content: str | list[Any]) -> list[dict[str, Any]]:
    raw = [c for c in message.additional_kwargs.get(RAW_TOOL_CALLS) or [] if isinstance(c, dict)]
    calls: list[dict[str, Any]] = [dict(c) for c in message.tool_calls] or _calls_from_content(
        content
    )
    current = {c["id"]: c for c in calls if c.get("id")}
    invalid = {c["id"]: c for c in message.invalid_tool_calls if c.get("id")}
    out: list[dict[str, Any]] = []
    sent: set[str] = set()
    for entry in raw:
        call_id = entry.get("id")
        if is_builtin(entry):
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
    function = entry.get("function")
    if not (
        isinstance(entry.get("id"), str)
        and isinstance(function, dict)
        and isinstance(function.get("name"), str)
        and isinstance(function.get("arguments"), str)
    ):
        msg = (
            f"additional_kwargs['tool_calls'] of an AIMessage holds {entry!r:.80}, not a Chat "
            "Completions tool call (id, function.name, function.arguments strings): restore "
            "it, or remove the key to send the message's tool_calls instead"
        )
        raise ValueError(msg)
    cleaned = {k: v for k, v in entry.items() if k != "index"}
    cleaned.setdefault("type", "function")  # the schema requires it; some services omit it
    return cleaned


def _raw_matches(entry: dict[str, Any], call: dict[str, Any]) -> bool:
    function = entry.get("function")
    if not isinstance(function, dict) or function.get("name") != call.get("name"):
        return False
    arguments = function.get("arguments") or "{}"
    try:
        return bool(fast_json.loads(arguments, max_depth=MAX_DEPTH) == call.get("args"))
    except (TypeError, ValueError):
        return False


def _rebuild(call: dict[str, Any], arguments: str | None = None) -> dict[str, Any]:
    if not call.get("id"):
        msg = f"tool call {call.get('name')!r} has no id; Chat Completions needs one to replay it"
        raise ValueError(msg)
    if arguments is None:
        what = f"the arguments of tool call {call.get('name')!r}"
        arguments = dumps_text(call.get("args") or {}, what=what)  # NaN as null, as the body
    return {
        "id": call["id"],
        "type": "function",
        "function": {"name": call.get("name") or "", "arguments": arguments},
    }


def tool_result(message: ToolMessage, caps: Capabilities) -> dict[str, Any]:
    content: str | list[dict[str, Any]]
    if isinstance(message.content, str):
        content = message.content
    else:
        parts = _parts(message.content, caps)
        if all(p["type"] == "text" for p in parts):
            content = "".join(p["text"] for p in parts)
        else:
            require(caps, caps.image_tool_message, "images in tool results")
            content = parts
    return {"role": "tool", "tool_call_id": message.tool_call_id, "content": content}


def plain_text(content: str | list[Any], role: str) -> str:
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


def user_content(content: str | list[Any], caps: Capabilities) -> str | list[dict[str, Any]]:
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
            require(caps, caps.image_inputs, "image inputs")
            parts.append({"type": "image_url", "image_url": _media(block, "image", caps)})
        elif kind in ("video", "video_url"):
            require(caps, caps.video_inputs, "video inputs")
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
    if not isinstance(text, str) or not text:
        msg = f"a {family}_url part needs a url (a string), got {text!r:.60}"
        raise ValueError(msg)
    web = text.startswith(("http://", "https://"))
    if web and family not in _warned_media_urls:
        _warned_media_urls.add(family)
        warn(
            f"Chat Completions documents {family}s as base64 data URLs only "
            f'("{_DOCUMENTED_MEDIA[family]}"); sending the {family} URL {str(text)[:80]!r} as is, '
            "the service may not fetch it"
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
            return _url_media({"url": source.get("url")}, family)
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
