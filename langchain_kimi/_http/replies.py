"""What an HTTP response means: the JSON body of a success, or a `Failure` with its typed error.

Pure (no I/O); the error classes and the body parsing continue in `_errors.py`. Every text that
may echo the key is redacted here (`_errors.redact`) before it reaches an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from langchain_kimi import _json as fast_json
from langchain_kimi._errors import (
    KimiAPIError,
    KimiConnectionError,
    KimiError,
    KimiQuotaExceededError,
    KimiStreamError,
    KimiTimeoutError,
    error_from_response,
    error_from_stream_payload,
    redact,
    snippet,
)
from langchain_kimi._http.limits.retry import Failure, is_retryable_status
from langchain_kimi._http.retry_after import retry_after_seconds

_REQUEST_ID_HEADERS = ("x-request-id", "request-id")


def header_request_id(headers: Mapping[str, str]) -> str | None:
    for name in _REQUEST_ID_HEADERS:
        value = headers.get(name)
        if value:
            return value
    return None


def failure_from_status(
    status: int, body_text: str, headers: Mapping[str, str], *, secret: str
) -> Failure:
    """An HTTP error response. Bodies are redacted: a gateway may echo the key it rejected."""
    retry_after = retry_after_seconds(headers)
    error = error_from_response(
        status,
        redact(body_text, secret),
        header_request_id=header_request_id(headers),
        retry_after=retry_after is not None,
    )
    # An exhausted quota is a 429 too, but waiting does not refill it.
    retryable = is_retryable_status(status) and not isinstance(error, KimiQuotaExceededError)
    return Failure(
        error=error,
        retryable=retryable,
        fallback=status >= 500,
        retry_after=retry_after if retryable else None,
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
    body: bytes | str, host: str, status: int, request_id: str | None, *, secret: str
) -> dict[str, Any] | KimiError:
    """A 2xx reply must be a JSON object, and not an error object (parsed from the bytes: orjson
    reads UTF-8 itself, without a decoded copy)."""
    try:
        payload = fast_json.loads(body)
    except fast_json.TooDeepError as exc:
        msg = f"{host} answered HTTP {status} with a body {exc} (the most ChatKimi reads)"
        return KimiAPIError(msg, status_code=status, request_id=request_id)
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        if not isinstance(payload.get("error"), dict):
            return payload
        # Some gateways report failures with a 2xx status and an error body.
        text = redact(_text(body), secret)
        return error_from_stream_payload(json.loads(text), request_id=request_id)
    return KimiAPIError(
        f"{host} answered HTTP {status} with a body that is not a JSON object: "
        f"{snippet(redact(_text(body), secret))}",
        status_code=status,
    )


def _text(body: bytes | str) -> str:
    return body if isinstance(body, str) else body.decode("utf-8", "replace")


def is_event_stream(headers: Mapping[str, str]) -> bool:
    return "text/event-stream" in headers.get("content-type", "").partition(";")[0].lower()


def error_from_non_stream_reply(
    status: int, body_text: str, headers: Mapping[str, str], host: str, *, secret: str
) -> KimiError:
    """A 2xx stream request answered with something other than an event stream."""
    text = redact(body_text, secret)
    request_id = header_request_id(headers)
    try:
        payload = fast_json.loads(text)
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


def judge_reply(
    status: int,
    headers: Mapping[str, str],
    body: bytes | str,
    read_error: ReadFailure | None,
    host: str,
    *,
    stream: bool,
    secret: str,
) -> dict[str, Any] | Failure:
    """Judge a fully read response: the JSON body of a successful post, or a Failure."""
    if not 200 <= status < 300:
        # The status alone decides; an error body that failed to arrive is only decoration.
        return failure_from_status(status, _text(body), headers, secret=secret)
    if read_error is not None:
        error = error_after_response(read_error, host, secret=secret, streaming=False)
        error.body = redact(_text(body), secret)[:2000] or None  # what arrived before the cut
    elif stream:
        error = error_from_non_stream_reply(status, _text(body), headers, host, secret=secret)
    else:
        reply = json_body_or_error(body, host, status, header_request_id(headers), secret=secret)
        if isinstance(reply, dict):
            return reply
        error = reply
    return Failure(error, retryable=False, fallback=False)
