"""Every captured exchange checked against `spec/`: reported as findings, not only asserted.

A finding is one way a response differs from what the published documents say: a body that
fails its schema, a field the documents do not name, a stream whose events come in an
undocumented order, usage numbers that do not add up, or an unexpected HTTP error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import jsonschema

from tools.live.exchanges import Exchange
from tools.schema_validation import (
    component_properties,
    validate_error,
    validate_request,
    validate_response,
)
from tools.sse_text import parse_sse

QUESTION_PREFIX = "question:"


@dataclass(frozen=True)
class Finding:
    kind: str
    protocol: str
    model: str
    detail: str
    test: str = ""


def sse_events(text: str) -> list[tuple[str, str]]:
    return parse_sse([text.encode()], default_event="message")


def stream_payloads(exchange: Exchange) -> list[tuple[str, Any]]:
    """(event name, parsed data) of a streamed body; `[DONE]` stays a string."""
    payloads: list[tuple[str, Any]] = []
    for name, data in sse_events(exchange.response_body):
        try:
            payloads.append((name, json.loads(data)))
        except ValueError:
            payloads.append((name, data.strip()))
    return payloads


def check_all(exchanges: Iterable[Exchange]) -> list[Finding]:
    findings: list[Finding] = []
    for exchange in exchanges:
        if exchange.protocol is not None:
            findings.extend(check(exchange))
    return findings


def check(exchange: Exchange) -> list[Finding]:
    protocol, model = str(exchange.protocol), exchange.model or "kimi-k3.1-pro"
    notes: list[tuple[str, str]] = []
    probe = exchange.test.startswith(QUESTION_PREFIX)
    request = exchange.request_json
    if isinstance(request, dict) and not probe:
        # Probes send undocumented or invalid requests on purpose; everything else must not.
        notes += _schema_note("request-schema", validate_request, request, protocol, model)
    if exchange.status >= 400:
        notes += _error_notes(exchange, protocol, model, expected=probe)
    elif exchange.is_stream:
        notes += (_anthropic_stream if protocol == "anthropic" else _openai_stream)(exchange, model)
    else:
        notes += _body_notes(exchange, protocol, model)
    return [Finding(kind, protocol, model, detail, exchange.test) for kind, detail in notes]


def _schema_note(kind: str, validate: Any, body: Any, protocol: str, model: str) -> list[Any]:
    try:
        validate(body, protocol, model)
    except (jsonschema.ValidationError, AssertionError) as exc:
        message = exc.message if isinstance(exc, jsonschema.ValidationError) else str(exc)
        return [(kind, message[:200])]
    return []


def _undocumented(
    body: Any, protocol: str, model: str, component: str, where: str
) -> list[tuple[str, str]]:
    if not isinstance(body, dict):
        return []
    extra = sorted(set(body) - component_properties(protocol, model, component))
    return [("undocumented-field", f"{where}.{name}") for name in extra]


def _object(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else `{}`: a reply of the wrong shape is a schema finding,
    never a crash of the checks that read inside it."""
    return value if isinstance(value, dict) else {}


def _objects(value: Any) -> list[dict[str, Any]]:
    """The JSON objects of a list (nothing if `value` is not a list)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _error_notes(
    exchange: Exchange, protocol: str, model: str, *, expected: bool
) -> list[tuple[str, str]]:
    body = _json(exchange.response_body)
    notes = [] if expected else [("http-error", f"HTTP {exchange.status}")]
    if body is None:
        return [*notes, ("error-schema", f"HTTP {exchange.status} body is not JSON")]
    return notes + _schema_note("error-schema", validate_error, body, protocol, model)


def _body_notes(exchange: Exchange, protocol: str, model: str) -> list[tuple[str, str]]:
    body = _json(exchange.response_body)
    if not isinstance(body, dict):
        return [("response-schema", "response body is not a JSON object")]
    notes = _schema_note("response-schema", validate_response, body, protocol, model)
    if protocol == "anthropic":
        notes += _undocumented(body, protocol, model, "MessageResponse", "body")
        notes += _undocumented(body.get("usage"), protocol, model, "MessageUsage", "usage")
        return notes + _anthropic_usage(body.get("usage"))
    notes += _undocumented(body, protocol, model, "ChatCompletionResponse", "body")
    notes += _undocumented(body.get("usage"), protocol, model, "ChatUsage", "usage")
    for choice in _objects(body.get("choices")):
        notes += _undocumented(choice.get("message"), protocol, model, "ChatMessage", "message")
    return notes + _openai_usage(body.get("usage"))


def _anthropic_usage(usage: Any) -> list[tuple[str, str]]:
    if not isinstance(usage, dict):
        return []
    thinking = _object(usage.get("output_tokens_details")).get("thinking_tokens")
    output = usage.get("output_tokens")
    if isinstance(thinking, int) and isinstance(output, int) and thinking > output:
        return [("usage-arithmetic", f"thinking_tokens {thinking} > output_tokens {output}")]
    return []


def _openai_usage(usage: Any) -> list[tuple[str, str]]:
    if not isinstance(usage, dict):
        return []
    prompt, completion, total = (
        usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")
    )
    notes = []
    if (
        all(isinstance(n, int) for n in (prompt, completion, total))
        and total != prompt + completion
    ):
        notes.append(
            (
                "usage-arithmetic",
                f"total_tokens {total} != {prompt} prompt + {completion} completion",
            )
        )
    reasoning = _object(usage.get("completion_tokens_details")).get("reasoning_tokens")
    if isinstance(reasoning, int) and isinstance(completion, int) and reasoning > completion:
        notes.append(
            ("usage-arithmetic", f"reasoning_tokens {reasoning} > completion {completion}")
        )
    return notes


def _anthropic_stream(exchange: Exchange, model: str) -> list[tuple[str, str]]:
    events = stream_payloads(exchange)
    names = [name for name, _ in events]
    notes: list[tuple[str, str]] = []
    for name, payload in events:
        if not isinstance(payload, dict) or payload.get("type") != name:
            notes.append(("stream-order", f"event {name!r} carries data {str(payload)[:60]!r}"))
        elif name == "message_start":
            message = payload.get("message")
            notes += _undocumented(message, "anthropic", model, "MessageResponse", "message_start")
            usage = _object(message).get("usage")
            notes += _undocumented(usage, "anthropic", model, "MessageUsage", "message_start.usage")
        elif name == "message_delta":
            usage = payload.get("usage")
            notes += _undocumented(usage, "anthropic", model, "MessageUsage", "message_delta.usage")
            notes += _anthropic_usage(usage)
    if "error" in names:
        return notes
    if not names or names[0] != "message_start":
        notes.append(("stream-order", f"first event is {names[:1]}, not message_start"))
    if "message_delta" not in names:
        notes.append(("stream-order", "no message_delta event"))
    if not names or (names[-1] != "message_stop" and not _stopped_by_delta(events)):
        notes.append(("stream-end", f"stream ends with {names[-1:]}, not message_stop"))
    return notes


def _stopped_by_delta(events: list[tuple[str, Any]]) -> bool:
    """000 / 001: the events "suele incluir" (usually include) `message_stop`: a stream whose last
    event is a `message_delta` with a `stop_reason` is complete (the open question
    `messages-stream-end` reports how often it happens)."""
    name, payload = events[-1]
    delta = payload.get("delta") if isinstance(payload, dict) else None
    return (
        name == "message_delta" and isinstance(delta, dict) and delta.get("stop_reason") is not None
    )


def _openai_stream(exchange: Exchange, model: str) -> list[tuple[str, str]]:
    events = stream_payloads(exchange)
    notes: list[tuple[str, str]] = []
    if not events or events[-1][1] != "[DONE]":
        notes.append(("stream-end", "stream does not end with data: [DONE]"))
    for _, payload in events:
        if not isinstance(payload, dict) or "error" in payload:
            continue
        if payload.get("object") != "chat.completion.chunk":
            notes.append(("stream-order", f"chunk object {payload.get('object')!r}"))
        notes += _undocumented(payload, "openai", model, "ChatCompletionResponse", "chunk")
        notes += _undocumented(payload.get("usage"), "openai", model, "ChatUsage", "chunk.usage")
        notes += _openai_usage(payload.get("usage"))
        for choice in _objects(payload.get("choices")):
            notes += _undocumented(choice.get("delta"), "openai", model, "ChatMessage", "delta")
            notes += _undocumented(
                choice.get("usage"), "openai", model, "ChatUsage", "choice.usage"
            )
            notes += _openai_usage(choice.get("usage"))
    return notes
