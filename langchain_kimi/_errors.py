"""Typed errors. Each class also subclasses the matching `langchain_core.exceptions` type, so
code written against LangChain's provider-neutral errors catches ours unchanged.

Every error carries `status_code`, `error_type`, `message`, `request_id` and the Chat
Completions `code` (when the service gave them) and never the API key. Two error-body shapes
are documented:
Messages `{"type":"error","error":{"type","message"},"request_id"}` and
Chat Completions `{"error":{"message","type","code"}}`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any

from langchain_core import exceptions as lc

from langchain_kimi import _json as fast_json
from langchain_kimi._secrets import Scrubber

_SNIPPET_CHARS = 300

# Kimi's context-length messages (both protocols), plus the common generic wording.
_CONTEXT_OVERFLOW = re.compile(
    r"input token length too long|exceeded model token limit|context[ _]length|"
    r"maximum context|prompt is too long|too many tokens",
    re.IGNORECASE,
)
# 429 is "Límite de solicitudes superado o cuota insuficiente" (all three documents): no field
# tells an exhausted quota (not worth retrying) from a rate limit. In order (`_quota_exhausted`):
# a type or code naming the quota or balance (OpenAI `insufficient_quota`, Moonshot
# `exceeded_current_quota_error`); a type or code naming a rate limit, or any Retry-After (the
# gateway says when to come back: a rate limit); else a message, in English or Spanish (the
# documents' language, so maybe the gateway's), saying the quota, balance or credit is exhausted
# and naming no rate limit. "Rate limit exceeded for your quota tier" is a rate limit, and so is
# the documents' own wording, which names both: read as a quota, every rate-limited 429 of a
# gateway that sends that text for both would fail without a retry.
_QUOTA_NAMES = re.compile(
    r"quota|insufficient_(?:balance|funds|credits?)|credit_balance|billing|balance|arrears|"
    r"out_of_credits?|payment_required",
    re.IGNORECASE,
)
_RATE_LIMIT_NAMES = re.compile(r"rate_?limit|too_many_requests|^requests$|^tokens$", re.IGNORECASE)
_EXHAUSTED = re.compile(
    r"exceeded your (?:current )?quota|quota (?:is |has been )?(?:exhausted|used up|depleted)|"
    r"insufficient (?:account )?(?:balance|funds|credits?|quota)|"
    r"(?:credit|account) balance (?:is )?(?:too low|insufficient|not enough|exhausted)|"
    r"balance (?:is )?(?:insufficient|exhausted|too low|not enough)|out of credits|"
    r"no (?:remaining )?credits|in arrears|please recharge|"
    # The same in Spanish, accents optional: "Saldo insuficiente", "Cuota insuficiente", ...
    r"(?:saldo|cuota|cr[ée]ditos?|fondos) (?:de (?:la|su|tu) cuenta )?(?:es |son |est[áa] )?"
    r"(?:insuficientes?|agotad[oa]s?)|cuota (?:se ha |ha sido )?agotad[oa]|"
    r"(?:superado|excedido) (?:su|tu|la) cuota actual|sin (?:saldo|cr[ée]ditos)|recargue|en mora",
    re.IGNORECASE,
)
_RATE_LIMIT_WORDING = re.compile(
    r"rate[ _-]?limit|too many requests|request limit|"
    r"l[íi]mite de (?:solicitudes|peticiones|velocidad|tasa)|demasiadas (?:solicitudes|peticiones)",
    re.IGNORECASE,
)


def _quota_exhausted(names: tuple[str | None, ...], message: str, *, retry_after: bool) -> bool:
    """Whether a 429 says the quota or balance is exhausted (see `_QUOTA_NAMES`)."""
    given = [name for name in names if name]
    if any(_QUOTA_NAMES.search(name) for name in given):
        return True
    if retry_after or any(_RATE_LIMIT_NAMES.search(name) for name in given):
        return False
    return _EXHAUSTED.search(message) is not None and not _RATE_LIMIT_WORDING.search(message)


class KimiError(lc.ModelError):
    """Base of every error raised by langchain-kimi for a failed model call."""

    partial: Any = None
    """When a stream failed after events arrived (cut, timed out, or an error event): what did
    arrive, aggregated into one `AIMessageChunk`. None otherwise."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        error_type: str | None = None,
        request_id: str | None = None,
        body: str | None = None,
        code: str | None = None,
    ) -> None:
        self.message = message
        self.status_code = status_code
        self.error_type = error_type
        self.request_id = request_id
        self.body = body
        self.code = code
        """Chat Completions `error.code` (kept next to `error.type`)."""
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [self.message]
        details = []
        if self.status_code is not None:
            details.append(f"status {self.status_code}")
        if self.error_type:
            details.append(f"type {self.error_type}")
        if self.request_id:
            details.append(f"request id {self.request_id}")
        if details:
            parts.append(f"({', '.join(details)})")
        return " ".join(parts)

    def scrub(self, redact: Callable[[str], str]) -> None:
        """Pass every text this error carries through `redact` (the call's guard removes the API
        key with it: a gateway or proxy may echo the key in any of them)."""
        self.message = redact(self.message)
        self.error_type = redact(self.error_type) if self.error_type else self.error_type
        self.request_id = redact(self.request_id) if self.request_id else self.request_id
        self.body = redact(self.body) if self.body else self.body
        self.args = (self._render(),)

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only __init__: rebuild explicitly so errors survive pickling (process pools);
        # the instance dict carries subclass extras such as `KimiStreamError.partial`.
        return (
            _rebuild_error,
            (
                type(self),
                self.message,
                self.status_code,
                self.error_type,
                self.request_id,
                self.body,
            ),
            dict(self.__dict__),
        )


def _rebuild_error(
    cls: type[KimiError],
    message: str,
    status_code: int | None,
    error_type: str | None,
    request_id: str | None,
    body: str | None,
) -> KimiError:
    return cls(
        message, status_code=status_code, error_type=error_type, request_id=request_id, body=body
    )


class KimiAuthenticationError(KimiError, lc.ModelAuthenticationError):
    """401: missing or invalid API key."""


class KimiPermissionDeniedError(KimiError, lc.ModelPermissionDeniedError):
    """403: the key may not use this model or feature."""


class KimiInvalidRequestError(KimiError, lc.ModelInvalidRequestError):
    """400 (and other 4xx not listed here): the service rejected the request."""


class KimiNotFoundError(KimiError, lc.ModelNotFoundError):
    """404: unknown model or path."""


class KimiContextOverflowError(KimiInvalidRequestError, lc.ContextOverflowError):
    """The input exceeds the model's 1,048,576-token context window."""


class KimiRateLimitError(KimiError, lc.ModelRateLimitError):
    """429: rate limit reached or quota exhausted."""


class KimiQuotaExceededError(KimiRateLimitError):
    """429 whose type, code or message says the quota or balance is exhausted: not retried
    (waiting does not help); a subclass of `KimiRateLimitError`, so its handlers still catch it."""


class KimiAPIError(KimiError, lc.ModelAPIError):
    """5xx or another failure reported by the service, including an error event in a stream."""


class KimiTimeoutError(KimiError, lc.ModelTimeoutError):
    """No answer (or no stream event) within the configured timeout."""


class KimiConnectionError(KimiError, lc.ModelConnectionError):
    """The gateway could not be reached."""


class KimiStreamError(KimiAPIError):
    """A stream broke the protocol: it ended early, or an event could not be decoded.

    `partial` holds the chunks that did arrive (aggregated into one message when possible).
    """

    def __init__(self, message: str, *, partial: Any = None, **kwargs: Any) -> None:
        self.partial = partial
        super().__init__(message, **kwargs)


class KimiForkedStreamError(KimiStreamError):
    """A stream read in another process than the one that began it (a `fork` child): its
    connection is shared with the process that began it, so each would read only part of the
    stream. Nothing is read; start the call again in this process."""

    @classmethod
    def begun_in(cls, pid: int) -> KimiForkedStreamError:
        return cls(
            f"the stream was begun in another process (pid {pid}, this is {os.getpid()}) and"
            " shares its connection: read a stream where it began, start the call again here"
        )


def _class_for_status(
    status: int,
    message: str,
    *,
    names: tuple[str | None, ...] = (),
    retry_after: bool = False,
) -> type[KimiError]:
    """`names`: the error type and code; `retry_after`: the reply said when to retry (a 429)."""
    if status < 500 and _CONTEXT_OVERFLOW.search(message):
        return KimiContextOverflowError
    if status == 401:
        return KimiAuthenticationError
    if status == 403:
        return KimiPermissionDeniedError
    if status == 404:
        return KimiNotFoundError
    if status == 408:
        return KimiTimeoutError
    if status == 429:
        quota = _quota_exhausted(names, message, retry_after=retry_after)
        return KimiQuotaExceededError if quota else KimiRateLimitError
    if status >= 500:
        return KimiAPIError
    return KimiInvalidRequestError


def class_for_status(status: int) -> type[KimiError]:
    """The error class of a refusal known by its status alone, with no body to read: a 429 is
    a rate limit (only a body says a quota is spent), a 503 or 529 an API error."""
    return _class_for_status(status, "")


_Fields = tuple[str | None, str | None, str | None, str | None]
"""(message, type, request_id, code) of an error body."""


def _parse_error_body(text: str) -> _Fields:
    """The fields of either documented error shape, or Nones."""
    try:
        payload = fast_json.loads(text)
    except (ValueError, TypeError):
        return None, None, None, None
    return _fields_from_payload(payload)


def _text(value: Any) -> str | None:
    return str(value) if value is not None and value != "" else None


def _fields_from_payload(payload: Any) -> _Fields:
    if not isinstance(payload, dict):
        return None, None, None, None
    err = payload.get("error")
    request_id = _text(payload.get("request_id"))
    if isinstance(err, dict):
        code = _text(err.get("code"))
        return _text(err.get("message")), _text(err.get("type")) or code, request_id, code
    if isinstance(err, str):
        return err, None, request_id, None
    return None, None, request_id, None


def redact(text: str, secret: str) -> str:
    """`text` without the key in any encoding a gateway may echo it in (JSON escapes, percent-
    encoding) nor anything key-shaped: the shared scrubber of `_secrets` (a "key" shorter than
    8 characters, a test placeholder, is replaced only as a whole text)."""
    return Scrubber((secret,)).text(text)


def snippet(text: str) -> str:
    """A body, whitespace squeezed, cut to a readable length (for error messages)."""
    compact = " ".join(text.split())
    if not compact:
        return "(empty body)"
    if len(compact) > _SNIPPET_CHARS:
        return compact[:_SNIPPET_CHARS] + "…"
    return compact


def error_from_response(
    status: int,
    body_text: str,
    *,
    header_request_id: str | None = None,
    retry_after: bool = False,
) -> KimiError:
    """The typed error for an HTTP error response (JSON in either shape, HTML, or empty);
    `retry_after`: the response said when to retry."""
    message, err_type, request_id, code = _parse_error_body(body_text)
    if message is None:
        message = f"HTTP {status} from the Kimi gateway: {snippet(body_text)}"
    cls = _class_for_status(status, message, names=(err_type, code), retry_after=retry_after)
    return cls(
        message,
        status_code=status,
        error_type=err_type,
        request_id=request_id or header_request_id,
        body=body_text[:2000],
        code=code,
    )


def error_from_stream_payload(payload: Any, *, request_id: str | None = None) -> KimiError:
    """The typed error for an error object that arrived inside a stream."""
    message, err_type, body_request_id, code = _fields_from_payload(payload)
    message = message or f"error event in stream: {snippet(json.dumps(payload))}"
    status = _status_for_error(err_type, code)
    cls = _class_for_status(status, message, names=(err_type, code)) if status else KimiAPIError
    return cls(
        message,
        status_code=status,
        error_type=err_type,
        request_id=body_request_id or request_id,
        code=code,
    )


# Error type names mapped back to their HTTP status: Anthropic's documented names, and the
# OpenAI-style names Chat Completions services put in `error.type` (in a stream there is no status).
_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "invalid_authentication_error": 401,
    "permission_error": 403,
    "permission_denied_error": 403,
    "not_found_error": 404,
    "resource_not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "rate_limit_reached_error": 429,
    "requests": 429,
    "tokens": 429,
    "insufficient_quota": 429,
    "exceeded_current_quota_error": 429,
    "api_error": 500,
    "server_error": 500,
    "internal_error": 500,
    "engine_overloaded_error": 529,
    "overloaded_error": 529,
}


def _status_for_error(err_type: str | None, code: str | None) -> int | None:
    """The status an in-stream error would have had over HTTP: from its type, else a numeric
    or named `code`."""
    status = _TYPE_STATUS.get(err_type or "") or _TYPE_STATUS.get(code or "")
    if status is None and code is not None and code.isdigit() and 400 <= int(code) < 600:
        status = int(code)
    return status
