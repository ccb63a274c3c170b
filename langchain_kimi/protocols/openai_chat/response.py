"""A non-streaming Chat Completions body -> `AIMessage` (see docs/internals.md for the keys)."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, InvalidToolCall, ToolCall
from langchain_core.messages.ai import InputTokenDetails, OutputTokenDetails, UsageMetadata
from langchain_core.messages.tool import invalid_tool_call, tool_call

from langchain_kimi import _json as fast_json
from langchain_kimi._contract import PROVIDER, RAW_TOOL_CALLS, REASONING, TOKEN_USAGE
from langchain_kimi._errors import KimiAPIError
from langchain_kimi._json import MAX_DEPTH
from langchain_kimi._request.profiles import cache_writes_billed_as_input

PROTOCOL = "openai"

# The schema documents stop / length / tool_calls, already the common vocabulary; OpenAI-style
# services may also say `content_filter`.
_FINISH_REASONS = {"content_filter": "refusal", "function_call": "tool_calls"}


def normalize_finish_reason(raw: str) -> str:
    return _FINISH_REASONS.get(raw, raw)


def usage_from_openai(
    usage: dict[str, Any], *, model: Any = None, requested_model: str | None = None
) -> UsageMetadata:
    """`prompt_tokens` is ALL input (plain + cache reads + cache writes): no re-adding.

    `cache_write_tokens` becomes `cache_creation` only where it is billed as such: 004 says
    "`kimi-k3` no los distingue y los factura como entrada normal" (raw figures stay in
    `response_metadata["token_usage"]`).
    """
    input_tokens = int(usage.get("prompt_tokens") or 0)
    output_tokens = int(usage.get("completion_tokens") or 0)
    total = usage.get("total_tokens")
    result = UsageMetadata(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=int(total) if total is not None else input_tokens + output_tokens,
    )
    prompt_details = usage.get("prompt_tokens_details") or {}
    input_details = InputTokenDetails()
    if prompt_details.get("cached_tokens") is not None:
        input_details["cache_read"] = int(prompt_details["cached_tokens"])
    writes_apart = not cache_writes_billed_as_input(model, requested_model)
    if prompt_details.get("cache_write_tokens") is not None and writes_apart:
        input_details["cache_creation"] = int(prompt_details["cache_write_tokens"])
    if input_details:
        result["input_token_details"] = input_details
    reasoning = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
    if reasoning is not None:
        result["output_token_details"] = OutputTokenDetails(reasoning=int(reasoning))
    return result


def merge_usage(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any] | None:
    """Field-by-field merge of two raw usage objects; `new` wins (nested details too)."""
    if not new:
        return old
    if not old:
        return dict(new)
    merged = dict(old)
    for key, value in new.items():
        if value is None:
            continue
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **{k: v for k, v in value.items() if v is not None}}
        else:
            merged[key] = value
    return merged


def raw_usage(body: dict[str, Any]) -> dict[str, Any] | None:
    """Usage from the top level and/or (Moonshot-style) `choices[0].usage`; top level wins."""
    choices = body.get("choices") or []
    in_choice = choices[0].get("usage") if choices and isinstance(choices[0], dict) else None
    return merge_usage(in_choice, body.get("usage"))


def strip_index(call: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in call.items() if k != "index"}


def raw_assistant_message(body: dict[str, Any]) -> dict[str, Any]:
    """`choices[0].message` as the wire history needs it (tool call `index` keys removed);
    `{}` when the body has none (`parse_response` then raises the typed error)."""
    choices = body.get("choices") or [{}]
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    message = dict(message) if isinstance(message, dict) else {}
    if message.get("tool_calls"):
        message["tool_calls"] = [strip_index(c) for c in message["tool_calls"]]
    return message


def message_metadata(header: dict[str, Any]) -> dict[str, Any]:
    """The response_metadata known when the reply starts (a body, or a stream's first chunk)."""
    meta: dict[str, Any] = {
        "id": header.get("id"),
        "model_name": header.get("model"),
        "model_provider": PROVIDER,
        "protocol": PROTOCOL,
    }
    if header.get("created") is not None:
        meta["created"] = header["created"]
    return meta


def finish_metadata(raw_finish: str | None) -> dict[str, Any]:
    """The response_metadata known when the reply ends."""
    if raw_finish is None:
        return {}
    return {"finish_reason": normalize_finish_reason(raw_finish), "raw_finish_reason": raw_finish}


def parse_tool_calls(
    raw_calls: list[dict[str, Any]],
) -> tuple[list[ToolCall], list[InvalidToolCall]]:
    """Client calls (type `function` or no type) -> valid / invalid; builtin calls are skipped."""
    valid: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for call in raw_calls:
        if call.get("type", "function") != "function":
            continue
        function = call.get("function") or {}
        name = function.get("name")
        arguments = function.get("arguments")
        text = arguments if isinstance(arguments, str) else ""
        try:
            args = fast_json.loads(text, max_depth=MAX_DEPTH) if text.strip() else {}
            error = None if isinstance(args, dict) else "arguments are not a JSON object"
        except fast_json.TooDeepError as exc:
            error = f"arguments are {exc}, more than a request may carry back"
        except ValueError as exc:
            error = f"arguments are not valid JSON: {exc}"
        if error is None:
            valid.append(tool_call(name=name or "", args=args, id=call.get("id")))
        else:
            invalid.append(invalid_tool_call(name=name, args=text, id=call.get("id"), error=error))
    return valid, invalid


def parse_response(body: dict[str, Any], requested_model: str | None = None) -> AIMessage:
    """One `chat.completion` body -> AIMessage (never raises on odd tool-call arguments);
    `requested_model` decides the usage accounting when the reply names no known model."""
    choices = body.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        # A 200 without an answer must not pass for an empty reply.
        msg = f"the reply has no choices: {json.dumps(body)[:300]}"
        raise KimiAPIError(msg)
    choice: dict[str, Any] = choices[0]
    message: dict[str, Any] = choice.get("message") or {}
    additional_kwargs: dict[str, Any] = {}
    reasoning = message.get("reasoning_content")
    if reasoning:
        additional_kwargs[REASONING] = reasoning
    raw_calls = [strip_index(c) for c in message.get("tool_calls") or []]
    tool_calls, invalid_tool_calls = parse_tool_calls(raw_calls)
    if tool_calls or invalid_tool_calls:
        additional_kwargs[RAW_TOOL_CALLS] = raw_calls
    response_metadata = message_metadata(body)
    response_metadata.update(finish_metadata(choice.get("finish_reason")))
    usage = raw_usage(body)
    if usage:
        response_metadata[TOKEN_USAGE] = usage  # the service's own figures, as ChatOpenAI
    result = AIMessage(
        content=message.get("content") or "",
        id=body.get("id"),
        additional_kwargs=additional_kwargs,
        tool_calls=tool_calls,
        invalid_tool_calls=invalid_tool_calls,
        usage_metadata=(
            usage_from_openai(usage, model=body.get("model"), requested_model=requested_model)
            if usage
            else None
        ),
        response_metadata=response_metadata,
    )
    if raw_calls and not (tool_calls or invalid_tool_calls):
        # Only builtin calls: langchain-core would parse `additional_kwargs["tool_calls"]` into
        # tool_calls when none are given, turning `$web_search` into a client call. Set after.
        result.additional_kwargs[RAW_TOOL_CALLS] = raw_calls
    return result
