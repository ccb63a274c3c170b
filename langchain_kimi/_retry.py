"""Decision logic of the transport, shared by its sync and async I/O loops.

Everything here is pure (no I/O): which outcome is retryable, how long to wait, when to move to the
fallback base URL, which headers to send, and which typed error an HTTP failure becomes.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from langchain_kimi import _json as fast_json
from langchain_kimi._errors import (
    KimiAPIError,
    KimiConnectionError,
    KimiError,
    KimiStreamError,
    KimiTimeoutError,
    error_from_response,
    error_from_stream_payload,
)
from langchain_kimi._json import dumps_bytes

logger = logging.getLogger("langchain_kimi")

# 408 request timeout, 409 lock conflict, 429 rate limit; every 5xx (incl. 529 overloaded).
_RETRYABLE_STATUS = frozenset({408, 409, 429})
_BACKOFF_BASE = 0.5
_BACKOFF_CAP = 8.0
_RETRY_AFTER_CAP = 60.0
_SNIPPET_CHARS = 300
_REQUEST_ID_HEADERS = ("x-request-id", "request-id")
_REDACTED = "***"


@dataclass(frozen=True)
class Failure:
    """One failed attempt: the error to raise if we give up, and how it may be retried."""

    error: KimiError
    retryable: bool
    # The primary may be swapped for the fallback base once its retries are spent.
    fallback: bool
    # Server-requested wait in seconds (Retry-After), already capped.
    retry_after: float | None = None


class RetryPlan:
    """Walks (base URL × attempt): `max_retries` retries on each base, then the next base.

    Only connection failures, timeouts and 5xx move on to the fallback; 429 and 4xx do not.
    """

    def __init__(
        self,
        bases: Sequence[str],
        max_retries: int,
        *,
        jitter: Callable[[float, float], float] = random.uniform,
    ) -> None:
        self._bases = bases
        self._max_retries = max_retries
        self._jitter = jitter
        self._base_index = 0
        self._attempt = 0

    @property
    def base(self) -> str:
        return self._bases[self._base_index]

    @property
    def attempt(self) -> int:
        """Retries already spent on the current base."""
        return self._attempt

    def next_delay(self, failure: Failure, path: str = "") -> float | None:
        """Seconds to wait before the next attempt on `self.base`, or None to give up."""
        if not failure.retryable:
            return None
        if self._attempt < self._max_retries:
            delay = failure.retry_after
            if delay is None:
                delay = backoff_delay(self._attempt, jitter=self._jitter)
            self._attempt += 1
            logger.info(
                "retrying %s%s in %.2fs (retry %d of %d): %s",
                self.base, path, delay, self._attempt, self._max_retries, failure.error.message,
            )  # fmt: skip
            return delay
        if failure.fallback and self._base_index + 1 < len(self._bases):
            self._base_index += 1
            self._attempt = 0
            logger.warning(
                "%s%s failed (%s); switching to the fallback %s",
                self._bases[self._base_index - 1], path, failure.error.message, self.base,
            )  # fmt: skip
            return 0.0
        return None


def backoff_delay(
    attempt: int, *, jitter: Callable[[float, float], float] = random.uniform
) -> float:
    """Exponential backoff: ~0.5 s doubling per retry, capped at 8 s, with 25% downward jitter."""
    return min(_BACKOFF_CAP, _BACKOFF_BASE * 2.0**attempt) * jitter(0.75, 1.0)


def retry_after_seconds(
    headers: Mapping[str, str], *, now: Callable[[], float] = time.time
) -> float | None:
    """The server's requested wait: `retry-after-ms`, else `Retry-After` (seconds or HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return _cap(float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return _cap(float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    return _cap(when.timestamp() - now())


def _cap(seconds: float) -> float | None:
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), _RETRY_AFTER_CAP)


def is_retryable_status(status: int) -> bool:
    return status in _RETRYABLE_STATUS or status >= 500


def build_headers(
    *,
    api_key: str,
    user_agent: str,
    default_headers: Mapping[str, str],
    stream: bool,
) -> httpx.Headers:
    # Case-insensitive: a caller's `user-agent` or `accept-encoding` replaces ours, never doubles.
    headers = httpx.Headers({"User-Agent": user_agent})
    headers.update(default_headers)
    headers["Authorization"] = f"Bearer {api_key}"
    headers["Content-Type"] = "application/json"
    headers["Accept"] = "text/event-stream" if stream else "application/json"
    return headers


def validate_config(
    base_url: str,
    fallback_base_url: str | None,
    api_key: str,
    default_headers: Mapping[str, str],
    *,
    allow_insecure_http: bool,
    max_retries: int,
) -> None:
    """Refuse a bad configuration at construction, before any I/O."""
    check_base_url(base_url, allow_insecure_http=allow_insecure_http, label="base_url")
    if fallback_base_url is not None:
        check_base_url(
            fallback_base_url, allow_insecure_http=allow_insecure_http, label="fallback_base_url"
        )
    if any(name.lower() == "authorization" for name in default_headers):
        raise ValueError("default_headers may not set Authorization; pass the key as api_key")
    if any(ch in api_key for ch in "\r\n\0") or not api_key.isascii():
        raise ValueError("api_key contains characters that are not allowed in an HTTP header")
    if max_retries < 0:
        raise ValueError("max_retries must be >= 0")


def check_base_url(url: str, *, allow_insecure_http: bool, label: str) -> None:
    """Refuse anything but https, except plain http to a loopback host or when allowed."""
    parsed = httpx.URL(url)
    if parsed.scheme not in ("https", "http") or not parsed.host:
        raise ValueError(f"{label} must be an absolute https:// URL, got {url!r}")
    if parsed.scheme == "http" and not allow_insecure_http and not _is_loopback(parsed.host):
        raise ValueError(
            f"{label} {url!r} uses plain http://, which would send the API key unencrypted. "
            "Use https://, or set allow_insecure_http=True if you really mean it."
        )


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def encode_body(body: dict[str, Any]) -> bytes:
    """Serialize once; the same bytes are resent on every retry and on the fallback."""
    return dumps_bytes(body)


def header_request_id(headers: Mapping[str, str]) -> str | None:
    for name in _REQUEST_ID_HEADERS:
        value = headers.get(name)
        if value:
            return value
    return None


_MIN_REDACTED_LENGTH = 8
"""Shorter "keys" (test placeholders) are not redacted: replacing every occurrence of a one- or
two-letter string would corrupt the message (and its classification), and protects nothing."""


def redact(text: str, secret: str) -> str:
    return text.replace(secret, _REDACTED) if len(secret) >= _MIN_REDACTED_LENGTH else text


def snippet(text: str) -> str:
    compact = " ".join(text.split())
    if not compact:
        return "(empty body)"
    return compact[:_SNIPPET_CHARS] + ("…" if len(compact) > _SNIPPET_CHARS else "")


def failure_from_status(
    status: int, body_text: str, headers: Mapping[str, str], *, secret: str
) -> Failure:
    """An HTTP error response. Bodies are redacted: a gateway may echo the key it rejected."""
    error = error_from_response(
        status, redact(body_text, secret), header_request_id=header_request_id(headers)
    )
    retryable = is_retryable_status(status)
    return Failure(
        error=error,
        retryable=retryable,
        fallback=status >= 500,
        retry_after=retry_after_seconds(headers) if retryable else None,
    )


def failure_before_response(exc: httpx.TransportError, host: str, *, secret: str) -> Failure:
    """httpx failed before any response byte arrived: nothing was processed, safe to resend."""
    detail = redact(f"{type(exc).__name__}: {exc}".rstrip(": "), secret)
    if isinstance(exc, httpx.TimeoutException):
        return Failure(
            KimiTimeoutError(f"timed out talking to {host} ({detail})"),
            retryable=True,
            fallback=True,
        )
    reachable_failure = isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError)
    return Failure(
        KimiConnectionError(f"could not reach {host} ({detail})"),
        retryable=reachable_failure,
        fallback=reachable_failure,
    )


ReadFailure = httpx.TransportError | httpx.DecodingError
READ_FAILURES = (httpx.TransportError, httpx.DecodingError)
"""What reading a response body can raise: a transport fault, or a body that does not decode
(a corrupt gzip / brotli / zstd stream from a proxy), which is not a `TransportError`."""


def error_after_response(exc: ReadFailure, host: str, *, secret: str, streaming: bool) -> KimiError:
    """httpx failed after the response headers: the reply was cut short; never retried."""
    detail = redact(f"{type(exc).__name__}: {exc}".rstrip(": "), secret)
    if isinstance(exc, httpx.DecodingError):
        what = "stream" if streaming else "reply"
        return (KimiStreamError if streaming else KimiAPIError)(
            f"the {what} from {host} could not be decoded ({detail})"
        )
    if isinstance(exc, httpx.TimeoutException):
        what = "no stream data" if streaming else "no data"
        return KimiTimeoutError(f"{what} from {host} within the read timeout ({detail})")
    if streaming:
        return KimiStreamError(f"the connection to {host} dropped mid-stream ({detail})")
    return KimiConnectionError(f"the connection to {host} dropped mid-response ({detail})")


def json_body_or_error(
    text: str, host: str, status: int, request_id: str | None, *, secret: str
) -> dict[str, Any] | KimiError:
    """A 2xx reply must be a JSON object, and not an error object."""
    try:
        payload = fast_json.loads(text)
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        if not isinstance(payload.get("error"), dict):
            return payload
        # Some gateways report failures with a 2xx status and an error body.
        return error_from_stream_payload(json.loads(redact(text, secret)), request_id=request_id)
    return KimiAPIError(
        f"{host} answered HTTP {status} with a body that is not a JSON object: "
        f"{snippet(redact(text, secret))}",
        status_code=status,
    )


def is_event_stream(headers: Mapping[str, str]) -> bool:
    return "text/event-stream" in headers.get("content-type", "").partition(";")[0].lower()


def error_from_non_stream_reply(
    status: int, body_text: str, headers: Mapping[str, str], host: str, *, secret: str
) -> KimiError:
    """A 2xx stream request answered with something other than an event stream."""
    text = redact(body_text, secret)
    request_id = header_request_id(headers)
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    if isinstance(payload, dict) and "error" in payload:
        return error_from_stream_payload(payload, request_id=request_id)
    content_type = headers.get("content-type", "(none)")
    return KimiStreamError(
        f"expected an event stream from {host}, got HTTP {status} {content_type}: {snippet(text)}",
        status_code=status,
        request_id=request_id,
    )


def is_open_stream(status: int, headers: Mapping[str, str]) -> bool:
    return 200 <= status < 300 and is_event_stream(headers)


def settle_reply(
    status: int,
    headers: Mapping[str, str],
    text: str,
    read_error: ReadFailure | None,
    host: str,
    *,
    stream: bool,
    secret: str,
) -> dict[str, Any] | Failure:
    """Judge a fully read response: the JSON body of a successful post, or a Failure."""
    if not 200 <= status < 300:
        # The status alone decides; an error body that failed to arrive is only decoration.
        return failure_from_status(status, text, headers, secret=secret)
    if read_error is not None:
        error = error_after_response(read_error, host, secret=secret, streaming=False)
        error.body = redact(text, secret)[:2000] or None  # what arrived before the cut
    elif stream:
        error = error_from_non_stream_reply(status, text, headers, host, secret=secret)
    else:
        body = json_body_or_error(text, host, status, header_request_id(headers), secret=secret)
        if isinstance(body, dict):
            return body
        error = body
    return Failure(error, retryable=False, fallback=False)
