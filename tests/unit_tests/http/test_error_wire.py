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
from langchain_kimi._http.replies import failure_from_status
from tests.support.fake_clock import fake_waits


def messages_shape(err_type: str, message: str) -> dict[str, Any]:
    """000 / 001 ErrorResponse."""
    return {"type": "error", "error": {"type": err_type, "message": message}, "request_id": "r1"}


def chat_shape(message: str, err_type: str, code: str | None) -> dict[str, Any]:
    """004 ErrorResponse (`code` is a string or null)."""
    return {"error": {"message": message, "type": err_type, "code": code}}


QUOTA_BODIES = {
    "messages-shape": messages_shape("billing_error", "Your credit balance is too low"),
    "chat-shape-type": chat_shape(
        "You exceeded your current quota, please check your plan and billing.",
        "insufficient_quota",
        "insufficient_quota",
    ),
    "chat-shape-code-only": chat_shape("Request refused", "rate_limit_error", "quota_exceeded"),
}
RATE_BODIES = {
    "messages-shape": messages_shape("rate_limit_error", "Too many requests, slow down"),
    "chat-shape": chat_shape(
        "Rate limit reached for requests", "rate_limit_error", "rate_limit_exceeded"
    ),
    # Words near the quota vocabulary that are not about money: still a plain rate limit.
    "load-balancer": chat_shape("Upstream load balancer is busy", "rate_limit_error", None),
}


def chat_for(protocol: str, handler: Any, max_retries: int = 2, **fields: Any) -> ChatKimi:
    return ChatKimi(
        model="kimi-k3.1-pro",
        protocol=protocol,
        max_retries=max_retries,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        **fields,
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


CASES_429 = [
    *((body, True) for body in QUOTA_BODIES.values()),
    *((body, False) for body in RATE_BODIES.values()),
]


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("body", "quota"), CASES_429, ids=[f"quota-{n}" for n in QUOTA_BODIES] + list(RATE_BODIES)
)
def test_quota_429_is_not_retried_a_plain_429_is(
    protocol: str, body: dict[str, Any], quota: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = fake_waits(monkeypatch)  # a plain 429 waits (backoff: "Retry-After: 0" names none)
    handler, calls = counting(429, body)
    with pytest.raises(KimiRateLimitError) as caught:  # existing handlers still catch both
        chat_for(protocol, handler, max_retries=0, rate_limit_timeout=10).invoke("hi")
    assert caught.value.status_code == 429
    assert isinstance(caught.value, KimiQuotaExceededError) is quota
    if quota:  # raised at once
        assert (len(calls), clock.sleeps) == (1, [])
    else:  # sent again and again, spending no retry, until its 10 s were spent
        assert len(calls) > 3
        assert 0 < sum(clock.sleeps) <= 10
        assert "rate_limit_timeout=10s" in caught.value.message


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


# Issue 20: the 429 bodies of the services speaking these protocols. Only a type or code naming
# the quota or balance, or a message saying it is exhausted with no Retry-After, is a quota; an
# explicit rate-limit type, or any Retry-After, is a rate limit (worth waiting for).
OPENAI_QUOTA = chat_shape(
    "You exceeded your current quota, please check your plan and billing details.",
    "insufficient_quota",
    "insufficient_quota",
)
OPENAI_RATE = chat_shape(
    "Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 500.",
    "requests",
    "rate_limit_exceeded",
)
ANTHROPIC_RATE = messages_shape(
    "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"
)
MOONSHOT_QUOTA = chat_shape(
    "Your account is suspended, please check your plan and billing details",
    "exceeded_current_quota_error",
    None,
)
MOONSHOT_RATE = chat_shape(
    "Your account reached max request: 3, please try again after 1 seconds",
    "rate_limit_reached_error",
    None,
)
# The gateway's documented ErrorResponse: `{"error": {"message", "type", "code"}}` with no
# field telling the two apart ("Límite de solicitudes superado o cuota insuficiente").
GATEWAY_QUOTA_MESSAGE = chat_shape("Insufficient balance, please recharge", "", None)
GATEWAY_AMBIGUOUS = chat_shape("Límite de solicitudes superado o cuota insuficiente", "", None)
TIER = chat_shape("Rate limit exceeded for your quota tier; see billing details", "", None)
PER_MINUTE = chat_shape("Quota exceeded for requests per minute", "", None)
TIER_TYPED = messages_shape(
    "rate_limit_error", "Rate limit exceeded for your quota tier; see billing details"
)

CLASSIFIED = [
    # (id, body, Retry-After present, quota?)
    ("openai-insufficient-quota", OPENAI_QUOTA, False, True),
    ("openai-insufficient-quota-with-retry-after", OPENAI_QUOTA, True, True),
    ("openai-rate-limit", OPENAI_RATE, False, False),
    ("anthropic-rate-limit", ANTHROPIC_RATE, False, False),
    ("anthropic-credit-balance", QUOTA_BODIES["messages-shape"], False, True),
    ("moonshot-exceeded-current-quota", MOONSHOT_QUOTA, False, True),
    ("moonshot-rate-limit", MOONSHOT_RATE, False, False),
    ("gateway-balance-message", GATEWAY_QUOTA_MESSAGE, False, True),
    ("gateway-balance-message-with-retry-after", GATEWAY_QUOTA_MESSAGE, True, False),
    ("gateway-documented-wording", GATEWAY_AMBIGUOUS, False, False),
    ("quota-tier-rate-limit", TIER, False, False),
    ("quota-tier-typed-rate-limit", TIER_TYPED, False, False),
    ("quota-per-minute", PER_MINUTE, False, False),
]


@pytest.mark.parametrize(
    ("body", "retry_after", "quota"),
    [case[1:] for case in CLASSIFIED],
    ids=[case[0] for case in CLASSIFIED],
)
def test_a_429_is_a_quota_only_when_it_says_so(
    body: dict[str, Any], retry_after: bool, quota: bool
) -> None:
    headers = {"retry-after": "1"} if retry_after else {}
    failure = failure_from_status(429, json.dumps(body), headers, secret="sk-test-0123456789")
    assert isinstance(failure.error, KimiRateLimitError)
    assert isinstance(failure.error, KimiQuotaExceededError) is quota
    assert failure.retryable is not quota  # a quota is not retried, a rate limit is
