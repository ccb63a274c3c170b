"""Quota 429s, Chat `error.code`, and typed errors inside a Chat Completions stream (issue 11
items 4 and 6), at the ChatKimi boundary with a fake transport.

000 / 001 / 004 document 429 as "Límite de solicitudes superado o cuota insuficiente": a rate
limit is worth retrying, an exhausted quota is not.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import httpx
import pytest

import langchain_kimi
from langchain_kimi import (
    ChatKimi,
    KimiAuthenticationError,
    KimiInvalidRequestError,
    KimiQuotaExceededError,
    KimiRateLimitError,
)

QUOTA_BODIES = {
    "messages-shape": {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "Your credit balance is too low"},
        "request_id": "req_quota",
    },
    "chat-shape-type": {
        "error": {
            "message": "You exceeded your current quota, please check your plan and billing.",
            "type": "insufficient_quota",
            "code": "insufficient_quota",
        }
    },
    "chat-shape-code-only": {
        "error": {
            "message": "Request refused",
            "type": "rate_limit_error",
            "code": "quota_exceeded",
        }
    },
}
RATE_BODIES = {
    "messages-shape": {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "Too many requests, slow down"},
        "request_id": "req_rate",
    },
    "chat-shape": {
        "error": {
            "message": "Rate limit reached for requests",
            "type": "rate_limit_error",
            "code": "rate_limit_exceeded",
        }
    },
}


def chat_for(protocol: str, handler: Any, max_retries: int = 2) -> ChatKimi:
    return ChatKimi(
        model="kimi-k3.1-pro",
        protocol=protocol,
        max_retries=max_retries,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )


def counting(status: int, body: dict[str, Any]) -> tuple[Any, list[int]]:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(status, json=body, headers={"retry-after": "0"})

    return handler, calls


def test_quota_class_is_exported_and_a_rate_limit_error() -> None:
    assert "KimiQuotaExceededError" in langchain_kimi.__all__
    assert issubclass(KimiQuotaExceededError, KimiRateLimitError)


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("name", sorted(QUOTA_BODIES))
def test_quota_429_is_not_retried(protocol: str, name: str) -> None:
    handler, calls = counting(429, QUOTA_BODIES[name])
    with pytest.raises(KimiQuotaExceededError) as caught:
        chat_for(protocol, handler).invoke("hi")
    assert len(calls) == 1
    assert caught.value.status_code == 429
    assert isinstance(caught.value, KimiRateLimitError)  # existing handlers still catch it


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("name", sorted(RATE_BODIES))
def test_plain_429_keeps_its_retries(protocol: str, name: str) -> None:
    handler, calls = counting(429, RATE_BODIES[name])
    with pytest.raises(KimiRateLimitError) as caught:
        chat_for(protocol, handler).invoke("hi")
    assert len(calls) == 3
    assert not isinstance(caught.value, KimiQuotaExceededError)


def test_chat_error_code_is_kept_next_to_type() -> None:
    body = {
        "error": {
            "message": "Invalid model",
            "type": "invalid_request_error",
            "code": "model_not_found",
        }
    }
    handler, _ = counting(400, body)
    with pytest.raises(KimiInvalidRequestError) as caught:
        chat_for("openai", handler).invoke("hi")
    assert caught.value.error_type == "invalid_request_error"
    assert caught.value.code == "model_not_found"
    assert pickle.loads(pickle.dumps(caught.value)).code == "model_not_found"


def stream_with_error(error: dict[str, Any]) -> Any:
    head = {
        "id": "chatcmpl-e",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "kimi-k3.1-pro",
    }
    first = {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]}
    text = f"data: {json.dumps(first)}\n\ndata: {json.dumps({'error': error})}\n\n"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, content=text.encode(), headers={"content-type": "text/event-stream"}
        )

    return handler


@pytest.mark.parametrize(
    ("error", "cls", "status"),
    [
        (
            {"message": "slow down", "type": "rate_limit_error", "code": "rate_limit_exceeded"},
            KimiRateLimitError,
            429,
        ),
        (
            {"message": "quota", "type": "insufficient_quota", "code": "insufficient_quota"},
            KimiQuotaExceededError,
            429,
        ),
        (
            {"message": "bad key", "type": "invalid_authentication_error", "code": None},
            KimiAuthenticationError,
            401,
        ),
        (
            {"message": "bad args", "type": "invalid_request_error", "code": "bad_param"},
            KimiInvalidRequestError,
            400,
        ),
        ({"message": "slow down", "type": "requests", "code": "429"}, KimiRateLimitError, 429),
    ],
)
def test_chat_stream_error_types_map_like_http_errors(
    error: dict[str, Any], cls: type[Exception], status: int
) -> None:
    chat = chat_for("openai", stream_with_error(error))
    with pytest.raises(cls) as caught:
        list(chat.stream("hi"))
    assert getattr(caught.value, "status_code", None) == status
    assert getattr(caught.value, "code", None) == error["code"]
    assert caught.value.partial.content == "Hel"  # type: ignore[attr-defined]
