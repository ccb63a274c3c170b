"""A step as the HTTP response the gateway sends: a reply (JSON or event stream) or an error
with the documented body, `Retry-After` and the request id."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import httpx

from langchain_kimi.testing import minimal, rules, wire
from langchain_kimi.testing.script import Error, Reply, WebSearch


def reply_response(
    step: Reply | tuple[WebSearch, ...],
    protocol: str,
    body: dict[str, Any],
    request_id: str,
    rendering: wire.Rendering,
    issued: rules.Issued,
    *,
    optional_fields: bool = True,
) -> httpx.Response:
    """`step` rendered for the request's protocol and `stream` flag; what it signs and the call
    ids it issues are remembered in `issued` (the next requests replay them).
    `optional_fields=False`: the reply cut to what the documents promise (`minimal.py`)."""
    stream = bool(body.get("stream"))
    headers = {"x-request-id": request_id}
    model = rendering.model
    if isinstance(step, tuple):
        assistant, finish, usage = wire.openai_search_round(step, rendering)
    elif protocol == "anthropic":
        message = wire.anthropic_json(step, rendering)
        issued.remember_anthropic(message["content"])
        if stream:
            raw = wire.raw_inputs(step, message["content"])
            event = None if optional_fields else lambda e: minimal.anthropic_event(e, model)
            return event_stream(wire.anthropic_sse(message, raw, shape=event), headers)
        if not optional_fields:
            message = minimal.reply(message, protocol, model)
        return httpx.Response(200, json=message, headers=headers)
    else:
        assistant, finish, usage = wire.openai_message(step, rendering)
    issued.remember_openai(assistant)
    if stream:
        chunk = None if optional_fields else lambda c: minimal.openai_chunk(c, model)
        return event_stream(
            wire.openai_sse(assistant, finish, usage, rendering, shape=chunk), headers
        )
    completion = wire.openai_json(assistant, finish, usage, rendering)
    if not optional_fields:
        completion = minimal.reply(completion, protocol, model)
    return httpx.Response(200, json=completion, headers=headers)


def rendering(
    body: dict[str, Any],
    protocol: str,
    request_id: str,
    call_numbers: itertools.count[int],
    stop_sequence_reason: str = "end_turn",
) -> wire.Rendering:
    """What rendering a reply to `body` needs: the requested model, the reply id (from the
    request id), fresh tool-call ids, the fake's signatures."""
    return wire.Rendering(
        model=str(body.get("model")),
        reply_id=f"{'msg' if protocol == 'anthropic' else 'chatcmpl'}_fake_{request_id[-4:]}",
        new_call_id=lambda: (
            f"{'toolu' if protocol == 'anthropic' else 'call'}_fake_{next(call_numbers):04d}"
        ),
        sign=rules.sign,
        prompt_chars=len(json.dumps(body.get("messages"))),
        stop_sequence_reason=stop_sequence_reason,
    )


def unjudged_reply(
    step: Reply, protocol: str, body: dict[str, Any], request_id: str
) -> httpx.Response:
    """`step` rendered as `FakeKimiGateway` renders it, without judging the request or the step
    (for a server that judges by its own rules, as the live tools' loopback gateway does)."""
    render = rendering(body, protocol, request_id, itertools.count(1))
    return reply_response(step, protocol, body, request_id, render, rules.Issued())


def error_response(error: Error, protocol: str, request_id: str) -> httpx.Response:
    """The documented error body of `protocol`; `retry_after` as `Retry-After` (whole seconds,
    rounded up) and `retry-after-ms`."""
    headers = {"x-request-id": request_id, **error.headers}
    if error.retry_after is not None:
        headers["retry-after"] = str(math.ceil(max(0.0, error.retry_after)))
        headers["retry-after-ms"] = str(round(error.retry_after * 1000))
    return httpx.Response(
        error.status, json=wire.error_body(error, protocol, request_id), headers=headers
    )


def event_stream(text: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.Response(
        200, content=text.encode("utf-8"), headers={**headers, "content-type": "text/event-stream"}
    )
