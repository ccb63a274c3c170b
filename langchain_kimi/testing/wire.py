"""A scripted step as the gateway sends it: Chat Completions or Messages, JSON or event stream.

Shapes follow the published documents shipped in `spec/` (`ChatCompletionResponse`,
`MessageResponse`, `MessageUsage`, `ErrorResponse`) and their streams: Chat Completions chunks
ending in `data: [DONE]` with usage on a trailing chunk; Messages events `message_start` (input
usage) ... `message_delta` (output usage) `message_stop`. The pieces (usage objects, chunks,
events, framing) are `frames.py`'s, shared with the repository's cassette authoring.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from langchain_kimi.testing import frames
from langchain_kimi.testing.frames import CREATED as CREATED  # public here before frames.py
from langchain_kimi.testing.frames import Json
from langchain_kimi.testing.frames import compact as _compact
from langchain_kimi.testing.script import Error, Reply, ToolCall, Usage, WebSearch

Shape = Callable[[Json], Json]
"""A change applied to each stream chunk or event before framing (`minimal.py`'s cut)."""


@dataclass(frozen=True)
class Rendering:
    """What one rendering needs besides the step: the model, fresh ids, and how to sign."""

    model: str
    reply_id: str
    new_call_id: Callable[[], str]
    sign: Callable[[str], str]
    prompt_chars: int
    stop_sequence_reason: str = "end_turn"
    """The Messages `stop_reason` of a reply cut by a stop sequence (the `stop-sequence-reason`
    assumption: 000's enum has no `stop_sequence`)."""


def _pieces(text: str) -> list[str]:
    """Text as a stream delivers it: a few words per delta."""
    words = text.split(" ")
    groups = [" ".join(words[i : i + 3]) for i in range(0, len(words), 3)]
    return [g if i == 0 else " " + g for i, g in enumerate(groups)] if text else []


def _usage(reply: Reply, r: Rendering, text: str, reasoning: str) -> Usage:
    return Usage.of(reply.usage, prompt=r.prompt_chars, text=text, reasoning=reasoning)


# --- Chat Completions ------------------------------------------------------------------------


def search_arguments(search: WebSearch, search_id: str) -> str:
    return _compact({"query": search.query, "search_id": search_id})


def tool_arguments(call: ToolCall) -> str:
    """The arguments string a call carries: the scripted raw string, or its args as JSON."""
    return call.arguments if call.arguments is not None else _compact(call.args)


def tool_input(call: ToolCall) -> Json | None:
    """A call's Messages `input` object (000 `ToolUseBlock.input`); None when the raw arguments
    are not a JSON object (only a stream's `partial_json` can carry those)."""
    if call.arguments is None:
        return dict(call.args)
    try:
        value = json.loads(call.arguments)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def openai_search_round(searches: Sequence[WebSearch], r: Rendering) -> tuple[Json, str, Usage]:
    """One `$web_search` round: an assistant turn with one `builtin_function` call a search."""
    reasoning = " ".join(s.reasoning_text() for s in searches if s.reasoning != "")
    calls = []
    for search in searches:
        call_id = r.new_call_id()
        function = {"name": "$web_search", "arguments": search_arguments(search, call_id)}
        calls.append({"id": call_id, "type": "builtin_function", "function": function})
    message: Json = {
        "role": "assistant",
        "content": None,
        "reasoning_content": reasoning,
        "tool_calls": calls,
    }
    usage = Usage.of(searches[0].usage, prompt=r.prompt_chars, text="", reasoning=reasoning)
    return message, "tool_calls", usage


def openai_message(step: Reply | WebSearch, r: Rendering) -> tuple[Json, str, Usage]:
    """(assistant message, finish_reason, usage) of one Chat Completions round."""
    if isinstance(step, WebSearch):
        return openai_search_round([step], r)
    message: Json = {
        "role": "assistant",
        "content": step.text if step.text or not step.tool_calls else None,
        "reasoning_content": step.reasoning,
    }
    searches = openai_search_round(step.searches, r)[0]["tool_calls"] if step.searches else []
    if step.tool_calls or searches:
        message["tool_calls"] = searches + [
            {
                "id": r.new_call_id(),
                "type": "function",
                "function": {"name": c.name, "arguments": tool_arguments(c)},
            }
            for c in step.tool_calls
        ]
    finish = "tool_calls" if step.tool_calls or searches else "stop"
    if step.finish == "max_tokens":
        finish = "length"  # 004's finish_reason enum: stop, length, tool_calls
    return message, finish, _usage(step, r, step.text, step.reasoning)


def openai_usage(usage: Usage) -> Json:
    """`prompt_tokens` counts ALL input, cache reads and writes included (004)."""
    return frames.openai_usage_counts(
        usage.input_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
        cached=usage.cache_read,
        written=usage.cache_write,
    )


def openai_json(message: Json, finish: str, usage: Usage, r: Rendering) -> Json:
    return frames.openai_completion(r.reply_id, r.model, message, finish, openai_usage(usage))


def openai_sse(
    message: Json, finish: str, usage: Usage, r: Rendering, shape: Shape | None = None
) -> str:
    """Chunks: role, reasoning, answer, each tool call (head, then arguments), the finish, then
    a trailing chunk with empty `choices` and the usage; `data: [DONE]` ends the stream.
    `shape`: applied to every chunk before framing."""

    def delta(content: Json, finish_reason: str | None = None) -> Json:
        return frames.openai_chunk(r.reply_id, r.model, content, finish_reason)

    out = [delta({"role": "assistant", "content": ""})]
    out += [delta({"reasoning_content": p}) for p in _pieces(message["reasoning_content"])]
    out += [delta({"content": p}) for p in _pieces(message["content"] or "")]
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        head = {"index": index, "id": call["id"], "type": call["type"]}
        out.append(
            delta(
                {"tool_calls": [{**head, "function": {"name": function["name"], "arguments": ""}}]}
            )
        )
        arguments = {"index": index, "function": {"arguments": function["arguments"]}}
        out.append(delta({"tool_calls": [arguments]}))
    out.append(delta({}, finish))
    out.append(frames.openai_usage_chunk(r.reply_id, r.model, openai_usage(usage)))
    return frames.frame_openai([shape(c) for c in out] if shape else out)


# --- Messages --------------------------------------------------------------------------------


def anthropic_usage(usage: Usage, *, model: str, searches: int) -> Json:
    """K3.1 (000): plain input, cache reads and cache writes are disjoint ("Las tres categorías
    son excluyentes"), and a 1h write is split out in `cache_creation` ("Las dos categorías de
    escritura de cache_creation_input_tokens, facturadas según su TTL real"). kimi-k3 (001):
    `input_tokens` are those "no servidos desde caché", writes included."""
    plain = usage.input_tokens - usage.cache_read
    if model != "kimi-k3":
        plain -= usage.cache_write
    out = frames.anthropic_usage_counts(
        plain,
        usage.output_tokens,
        usage.reasoning_tokens,
        read=usage.cache_read,
        write=usage.cache_write,
    )
    if usage.cache_write_1h and model != "kimi-k3":
        out["cache_creation"] = {
            "ephemeral_5m_input_tokens": usage.cache_write - usage.cache_write_1h,
            "ephemeral_1h_input_tokens": usage.cache_write_1h,
        }
    if searches:
        out["server_tool_use"] = {"web_search_requests": searches}
    return out


def anthropic_content(reply: Reply, r: Rendering) -> list[Json]:
    content: list[Json] = [
        {"type": "thinking", "thinking": reply.reasoning, "signature": r.sign(reply.reasoning)}
    ]
    for search in reply.searches:
        use_id = r.new_call_id()
        content.append(
            {
                "type": "server_tool_use",
                "id": use_id,
                "name": "web_search",
                "input": {"query": search.query},
            }
        )
        results: Json | list[Json] = [
            {
                "type": "web_search_result",
                "title": result["title"],
                "url": result["url"],
                "encrypted_content": r.sign(result["url"]),
                "page_age": result.get("page_age"),
            }
            for result in search.results
        ]
        if search.error_code is not None:  # 000: "Objeto de error de búsqueda"
            results = {"type": "web_search_tool_result_error", "error_code": search.error_code}
        content.append(
            {"type": "web_search_tool_result", "tool_use_id": use_id, "content": results}
        )
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    content += [
        {"type": "tool_use", "id": r.new_call_id(), "name": c.name, "input": tool_input(c) or {}}
        for c in reply.tool_calls
    ]
    return content


def raw_inputs(reply: Reply, content: Sequence[Json]) -> dict[str, str]:
    """tool_use id -> the raw arguments a stream sends as `partial_json`, for scripted calls whose
    arguments are a raw string."""
    uses = [b for b in content if b["type"] == "tool_use"]
    return {
        block["id"]: call.arguments
        for block, call in zip(uses, reply.tool_calls, strict=True)
        if call.arguments is not None
    }


def anthropic_stop_reason(reply: Reply, r: Rendering) -> str:
    if reply.refusal:
        return "refusal"
    if reply.finish == "stop_sequence":
        return r.stop_sequence_reason
    if reply.finish == "max_tokens":
        return "max_tokens"
    return "tool_use" if reply.tool_calls else "end_turn"


def anthropic_json(reply: Reply, r: Rendering) -> Json:
    return frames.anthropic_message(
        r.reply_id,
        r.model,
        anthropic_content(reply, r),
        anthropic_stop_reason(reply, r),
        stop_sequence=reply.stop_sequence,
        usage=anthropic_usage(
            _usage(reply, r, reply.text, reply.reasoning),
            model=r.model,
            searches=len(reply.searches),
        ),
    )


def _block_events(index: int, block: Json, raw: Mapping[str, str]) -> Iterator[Json]:
    kind = block["type"]
    if kind == "thinking":
        yield _start(index, {"type": "thinking", "thinking": "", "signature": ""})
        for piece in _pieces(block["thinking"]):
            yield _delta(index, {"type": "thinking_delta", "thinking": piece})
        yield _delta(index, {"type": "signature_delta", "signature": block["signature"]})
    elif kind == "text":
        yield _start(index, {"type": "text", "text": ""})
        for piece in _pieces(block["text"]):
            yield _delta(index, {"type": "text_delta", "text": piece})
    elif kind in ("tool_use", "server_tool_use"):
        yield _start(index, {**block, "input": {}})
        partial = raw.get(block["id"], _compact(block["input"]) if block["input"] else "")
        if partial:  # a call without input sends no input_json_delta
            yield _delta(index, {"type": "input_json_delta", "partial_json": partial})
    else:  # web_search_tool_result arrives whole
        yield _start(index, block)
    yield frames.block_stop(index)


_start = frames.block_start
_delta = frames.block_delta


def anthropic_sse(
    message: Json, raw: Mapping[str, str] | None = None, shape: Shape | None = None
) -> str:
    """The event stream of a whole Messages reply (`anthropic_json`'s); `raw`: tool_use id ->
    the raw arguments its `input_json_delta` carries instead of the input object; `shape`:
    applied to every event before framing."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": frames.start_usage(usage)}
    events: list[Json] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        events += _block_events(index, block, raw or {})
    final = {k: v for k, v in usage.items() if not k.startswith(("input", "cache"))}
    events.append(frames.message_delta(message["stop_reason"], final, message.get("stop_sequence")))
    events.append(frames.MESSAGE_STOP)
    return frames.frame_anthropic([shape(e) for e in events] if shape else events)


# --- errors ----------------------------------------------------------------------------------


def error_body(error: Error, protocol: str, request_id: str) -> Json:
    """The documented error bodies: Messages `{"type": "error", "error": {...}, "request_id"}`,
    Chat Completions `{"error": {"message", "type", "code"}}`."""
    if protocol == "anthropic":
        return {
            "type": "error",
            "error": {"type": error.error_type, "message": error.message},
            "request_id": request_id,
        }
    return {"error": {"message": error.message, "type": error.error_type, "code": error.code}}
