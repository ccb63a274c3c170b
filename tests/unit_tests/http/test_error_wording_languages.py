"""A 429's wording is read in Spanish as in English (issue 30 item 4).

The three documents are in Spanish and give the 429 one description, "Límite de solicitudes
superado o cuota insuficiente" ("request limit exceeded or insufficient quota", 000, 001, 004):
no field tells an exhausted quota (not retried: waiting does not refill it) from a rate limit.
The order stays: the error type or code, then `Retry-After` (the gateway says when to come back:
a rate limit), then the message, which may be in either language. A message naming both (the
documents' own wording, in either language) is a rate limit: read as a quota, every rate-limited
429 of a gateway that sends that text for both would fail without a retry.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from langchain_kimi import KimiQuotaExceededError, KimiRateLimitError
from langchain_kimi._http.replies import failure_from_status

SECRET = "sk-test-0123456789"


def chat_shape(message: str, err_type: str = "", code: str | None = None) -> dict[str, Any]:
    """004 ErrorResponse."""
    return {"error": {"message": message, "type": err_type, "code": code}}


def messages_shape(message: str, err_type: str = "") -> dict[str, Any]:
    """000 / 001 ErrorResponse."""
    return {"type": "error", "error": {"type": err_type, "message": message}, "request_id": "r1"}


def is_quota(body: dict[str, Any], *, retry_after: bool = False) -> bool:
    headers = {"retry-after": "1"} if retry_after else {}
    failure = failure_from_status(429, json.dumps(body), headers, secret=SECRET)
    assert isinstance(failure.error, KimiRateLimitError)
    quota = isinstance(failure.error, KimiQuotaExceededError)
    assert failure.retryable is not quota
    return quota


# (Spanish, English): the same message in both languages.
EXHAUSTED = [
    ("Saldo insuficiente", "Insufficient balance"),
    ("Cuota insuficiente", "Insufficient quota"),
    ("Saldo insuficiente, por favor recargue su cuenta", "Insufficient balance, please recharge"),
    ("El saldo de la cuenta es insuficiente", "The account balance is insufficient"),
    ("Ha superado su cuota actual", "You exceeded your current quota"),
    ("Su cuota se ha agotado", "Your quota has been exhausted"),
    ("Créditos insuficientes", "Insufficient credits"),
]
RATE_LIMITED = [
    ("Límite de solicitudes superado", "Request limit exceeded"),
    ("Demasiadas solicitudes, inténtelo de nuevo más tarde", "Too many requests, try again later"),
    ("Cuota superada para solicitudes por minuto", "Quota exceeded for requests per minute"),
    # The documents' 429 description names both: a rate limit, whatever the language.
    (
        "Límite de solicitudes superado o cuota insuficiente",
        "Request limit exceeded or insufficient quota",
    ),
    ("Rate limit exceeded or insufficient quota", "Rate limit exceeded or insufficient quota"),
]


@pytest.mark.parametrize(("spanish", "english"), EXHAUSTED, ids=[s for s, _ in EXHAUSTED])
@pytest.mark.parametrize("shape", [chat_shape, messages_shape], ids=["chat", "messages"])
def test_an_exhausted_quota_or_balance_is_read_in_both_languages(
    shape: Any, spanish: str, english: str
) -> None:
    assert is_quota(shape(english))
    assert is_quota(shape(spanish))
    assert is_quota(shape(spanish.upper()))


@pytest.mark.parametrize(("spanish", "english"), RATE_LIMITED, ids=[s for s, _ in RATE_LIMITED])
def test_a_rate_limit_is_read_in_both_languages(spanish: str, english: str) -> None:
    assert not is_quota(chat_shape(english))
    assert not is_quota(chat_shape(spanish))


@pytest.mark.parametrize("spanish", [s for s, _ in EXHAUSTED])
def test_retry_after_comes_before_the_wording(spanish: str) -> None:
    assert not is_quota(chat_shape(spanish), retry_after=True)


def test_type_and_code_come_before_the_wording() -> None:
    assert not is_quota(messages_shape("Saldo insuficiente", "rate_limit_error"))
    assert not is_quota(chat_shape("Cuota insuficiente", "", "rate_limit_exceeded"))
    assert is_quota(chat_shape("Límite de solicitudes superado", "insufficient_quota"))
    assert is_quota(messages_shape("Límite de solicitudes superado", "billing_error"))


def test_accents_left_out_are_read_too() -> None:
    assert is_quota(chat_shape("Creditos insuficientes"))
    assert not is_quota(chat_shape("Limite de solicitudes superado o cuota insuficiente"))
