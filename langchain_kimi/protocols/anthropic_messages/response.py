"""Messages response body -> `AIMessage` (see docs/internals.md for the contract)."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, InvalidToolCall, ToolCall
from langchain_core.messages.ai import InputTokenDetails, OutputTokenDetails, UsageMetadata
from langchain_core.messages.tool import invalid_tool_call, tool_call

from langchain_kimi._contract import (
    ANTHROPIC_BLOCKS,
    PROVIDER,
    RAW_USAGE,
    REASONING,
    THINKING_BLOCKS,
    content_text,
)
from langchain_kimi._json import MAX_DEPTH, depth
from langchain_kimi._request.profiles import cache_writes_billed_as_input
from langchain_kimi.protocols.anthropic_messages.content import THINKING_TYPES, thinking_text

_FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "refusal",
}
_SPLIT_KEYS = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def usage_from_anthropic(
    usage: dict[str, Any], *, model: Any = None, requested_model: str | None = None
) -> UsageMetadata:
    """LangChain usage from a Messages `usage` object (non-streaming and streaming alike).

    K3.1 reports plain input, cache reads and cache writes as three disjoint counts (000: "Las
    tres categorías son excluyentes"), so `input_tokens` is their sum. kimi-k3's `input_tokens`
    are those "no servidos desde caché" (001), writes included, which it bills as plain input
    (004): there `input_tokens` is plain + reads, and no `cache_creation` detail is reported
    (LangChain would price those tokens at the cache-write rate); the raw figures stay in
    `response_metadata["usage"]`. When the writes are split by TTL (`cache_creation` with
    `ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`), the split goes into
    `input_token_details` under those names and `cache_creation` keeps only the part the split
    does not cover (0 when it covers all), so the details count each write once.
    langchain-anthropic makes the same choice in spirit (it zeroes `cache_creation` when a split
    is present); ours also keeps any uncovered remainder.
    """
    folded = cache_writes_billed_as_input(model, requested_model)
    plain = _int(usage.get("input_tokens"))
    reads = _int(usage.get("cache_read_input_tokens"))
    writes = 0 if folded else _int(usage.get("cache_creation_input_tokens"))
    details: dict[str, int] = {}
    if usage.get("cache_read_input_tokens") is not None:
        details["cache_read"] = reads
    split = None if folded else usage.get("cache_creation")
    split_total = 0
    if isinstance(split, dict) and any(split.get(k) is not None for k in _SPLIT_KEYS):
        for key in _SPLIT_KEYS:
            if split.get(key) is not None:
                details[key] = _int(split[key])
                split_total += details[key]
        writes = max(writes, split_total)
        details["cache_creation"] = writes - split_total
    elif usage.get("cache_creation_input_tokens") is not None and not folded:
        details["cache_creation"] = writes
    input_tokens = plain + reads + writes
    output_tokens = _int(usage.get("output_tokens"))
    result = UsageMetadata(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )
    if details:
        result["input_token_details"] = InputTokenDetails(**details)  # type: ignore[typeddict-item]
    output_details = usage.get("output_tokens_details")
    if isinstance(output_details, dict) and output_details.get("thinking_tokens") is not None:
        result["output_token_details"] = OutputTokenDetails(
            reasoning=_int(output_details["thinking_tokens"])
        )
    return result


def message_metadata(message_id: Any, model: Any) -> dict[str, Any]:
    """The response_metadata known when the reply starts. The model goes under both names
    ChatAnthropic's replies use: `model` (the Messages field) and `model_name`."""
    meta: dict[str, Any] = {"model_provider": PROVIDER, "protocol": "anthropic"}
    if message_id is not None:
        meta["id"] = message_id
    if model is not None:
        meta["model"] = model
        meta["model_name"] = model
    return meta


def finish_metadata(
    stop_reason: Any, stop_sequence: Any, usage: dict[str, Any] | None
) -> dict[str, Any]:
    """The response_metadata known when the reply ends.

    `stop_reason` and `stop_sequence` (None included) as ChatAnthropic gives them, so code
    written for it reads them, beside the normalised `finish_reason`. Unknown stop reasons (a
    future value) are passed through as the finish reason unchanged.
    """
    meta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": stop_sequence}
    if stop_reason is not None:
        meta["finish_reason"] = _FINISH_REASONS.get(stop_reason, stop_reason)
        meta["raw_finish_reason"] = stop_reason
    server_tool_use = (usage or {}).get("server_tool_use")
    if isinstance(server_tool_use, dict):
        meta["server_tool_use"] = server_tool_use
    if usage:
        meta[RAW_USAGE] = usage  # the service's own figures, where ChatAnthropic keeps them
    return meta


def parse_tool_calls(
    blocks: list[dict[str, Any]],
) -> tuple[list[ToolCall], list[InvalidToolCall]]:
    """Client `tool_use` blocks -> tool calls; server blocks never become tool calls."""
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for block in blocks:
        if block.get("type") != "tool_use":
            continue
        args = block.get("input")
        if args is None:
            args = {}
        if isinstance(args, dict) and depth(args) <= MAX_DEPTH:
            calls.append(tool_call(name=block.get("name", ""), args=args, id=block.get("id")))
        else:
            error = "tool input is not a JSON object"
            if isinstance(args, dict):
                error = (
                    f"tool input is nested deeper than {MAX_DEPTH} levels, more than a request"
                    " may carry back"
                )
            invalid.append(
                invalid_tool_call(
                    name=block.get("name"), args=json.dumps(args), id=block.get("id"), error=error
                )
            )
    return calls, invalid


def parse_response(body: dict[str, Any], requested_model: str | None = None) -> AIMessage:
    """A non-streaming Messages reply as an `AIMessage` (`requested_model`: the model the
    request named, which decides the usage accounting when the reply names no known model)."""
    content = body.get("content") or []
    if isinstance(content, str):  # the text itself instead of a list of blocks: it is the answer
        content = [{"type": "text", "text": content}]
    blocks = [b for b in content if isinstance(b, dict)]
    text = content_text(blocks)
    additional: dict[str, Any] = {}
    reasoning = thinking_text(blocks)
    if reasoning:
        additional[REASONING] = reasoning
    thinking = [b for b in blocks if b.get("type") in THINKING_TYPES]
    if thinking:
        additional[THINKING_BLOCKS] = thinking
    if blocks:
        additional[ANTHROPIC_BLOCKS] = blocks
    calls, invalid = parse_tool_calls(blocks)
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
    metadata = message_metadata(body.get("id"), body.get("model"))
    metadata.update(finish_metadata(body.get("stop_reason"), body.get("stop_sequence"), usage))
    model = body.get("model")
    usage_metadata = (
        usage_from_anthropic(usage, model=model, requested_model=requested_model)
        if usage is not None
        else None
    )
    return AIMessage(
        content=text,
        additional_kwargs=additional,
        tool_calls=calls,
        invalid_tool_calls=invalid,
        usage_metadata=usage_metadata,
        response_metadata=metadata,
        id=body.get("id"),
    )
