"""What a response means (`langchain_kimi._http.replies`), rule by rule, without I/O."""

from __future__ import annotations

import httpx
import pytest

from langchain_kimi._errors import (
    KimiAPIError,
    KimiConnectionError,
    KimiRateLimitError,
    KimiStreamError,
    KimiTimeoutError,
)
from langchain_kimi._http.limits.retry import Failure
from langchain_kimi._http.replies import (
    error_after_response,
    error_from_non_stream_reply,
    failure_before_response,
    header_request_id,
    is_open_stream,
    judge_reply,
)

KEY = "sk-test-SECRET-e41b77"
SSE = {"content-type": "text/event-stream"}
JSON = {"content-type": "application/json"}
RATE_LIMITED = '{"error": {"type": "rate_limit_error", "message": "slow down"}}'


def test_the_request_id_header_is_read_and_absent_is_none() -> None:
    assert header_request_id({"x-request-id": "a", "request-id": "b"}) == "a"
    assert header_request_id({"request-id": "b"}) == "b"
    assert header_request_id({"x-request-id": "", "request-id": "b"}) == "b"
    assert header_request_id({}) is None


@pytest.mark.parametrize(
    ("status", "headers", "open_stream"),
    [
        (200, SSE, True),
        (299, {"content-type": "Text/Event-Stream; charset=utf-8"}, True),
        (199, SSE, False),
        (300, SSE, False),
        (200, JSON, False),
        (200, {}, False),
    ],
)
def test_a_stream_is_open_only_on_2xx_with_an_event_stream(
    status: int, headers: dict[str, str], open_stream: bool
) -> None:
    assert is_open_stream(status, headers) is open_stream


def test_a_connection_dropped_after_the_headers_is_a_stream_error_or_a_connection_error() -> None:
    cut = httpx.ReadError(f"reset by peer near {KEY}")
    streamed = error_after_response(cut, "h.example", secret=KEY, streaming=True)
    replied = error_after_response(cut, "h.example", secret=KEY, streaming=False)
    assert type(streamed) is KimiStreamError
    assert "dropped mid-stream" in streamed.message
    assert type(replied) is KimiConnectionError
    assert "dropped mid-response" in replied.message
    assert KEY not in streamed.message + replied.message


def test_no_data_within_the_read_timeout_is_a_timeout_error() -> None:
    error = error_after_response(httpx.ReadTimeout("slow"), "h", secret=KEY, streaming=True)
    assert type(error) is KimiTimeoutError
    assert "no stream data" in error.message


@pytest.mark.parametrize("streaming", [True, False])
def test_a_body_that_does_not_decode_is_an_api_error(streaming: bool) -> None:
    error = error_after_response(
        httpx.DecodingError("bad gzip"), "h", secret=KEY, streaming=streaming
    )
    assert type(error) is (KimiStreamError if streaming else KimiAPIError)
    assert "could not be decoded" in error.message


def test_a_stream_request_answered_with_a_json_error_object_is_that_typed_error() -> None:
    error = error_from_non_stream_reply(
        200, RATE_LIMITED, {"x-request-id": "r1", **JSON}, "h", secret=KEY
    )
    assert type(error) is KimiRateLimitError
    assert error.request_id == "r1"


@pytest.mark.parametrize("body", ['{"id": "x"}', "<html>proxy page</html>", "[1]"])
def test_a_stream_request_answered_without_an_event_stream_is_a_stream_error(body: str) -> None:
    error = error_from_non_stream_reply(200, body, {"x-request-id": "r2", **JSON}, "h", secret=KEY)
    assert type(error) is KimiStreamError
    assert "expected an event stream" in error.message
    assert error.status_code == 200
    assert error.request_id == "r2"


def _judge(status: int, text: str, *, stream: bool = False) -> dict[str, object] | Failure:
    return judge_reply(status, JSON, text, None, "h", stream=stream, secret=KEY)


@pytest.mark.parametrize("status", [199, 300, 404, 500])
def test_a_status_outside_2xx_is_a_failure_whatever_the_body(status: int) -> None:
    judged = _judge(status, '{"id": "looks fine"}')
    assert isinstance(judged, Failure)
    assert judged.error.status_code == status


@pytest.mark.parametrize("status", [200, 299])
def test_a_2xx_json_object_is_the_body(status: int) -> None:
    assert _judge(status, '{"id": "x", "error": null}') == {"id": "x", "error": None}


def test_a_2xx_error_object_is_its_typed_error_never_retried() -> None:
    judged = _judge(200, RATE_LIMITED)
    assert isinstance(judged, Failure)
    assert type(judged.error) is KimiRateLimitError
    assert (judged.retryable, judged.fallback) == (False, False)


def test_a_2xx_body_that_is_not_a_json_object_is_an_api_error_with_the_key_removed() -> None:
    judged = _judge(200, f"proxy says: bad key {KEY}")
    assert isinstance(judged, Failure)
    assert type(judged.error) is KimiAPIError
    assert "not a JSON object" in judged.error.message
    assert KEY not in judged.error.message


def test_an_error_body_that_is_not_json_is_redacted() -> None:
    judged = _judge(502, f"<html>upstream rejected {KEY}</html>")
    assert isinstance(judged, Failure)
    assert KEY not in judged.error.message
    assert KEY not in (judged.error.body or "")
    assert (judged.retryable, judged.fallback) == (True, True)


def test_a_reply_cut_short_keeps_what_arrived_redacted() -> None:
    cut = httpx.ReadError("reset")
    judged = judge_reply(200, JSON, f'{{"id": "{KEY}', cut, "h", stream=False, secret=KEY)
    assert isinstance(judged, Failure)
    assert type(judged.error) is KimiConnectionError
    assert judged.error.body == '{"id": "***'


@pytest.mark.parametrize(("status", "fallback"), [(499, False), (500, True), (501, True)])
def test_only_a_5xx_moves_to_the_fallback(status: int, fallback: bool) -> None:
    judged = _judge(status, "")
    assert isinstance(judged, Failure)
    assert judged.fallback is fallback


def test_retry_after_is_read_only_for_a_retried_status() -> None:
    retried = judge_reply(429, {"retry-after": "3"}, "", None, "h", stream=False, secret=KEY)
    refused = judge_reply(400, {"retry-after": "3"}, "", None, "h", stream=False, secret=KEY)
    assert isinstance(retried, Failure)
    assert isinstance(refused, Failure)
    assert retried.retry_after == 3.0
    assert refused.retry_after is None


def test_a_timeout_before_any_response_is_retried_and_may_fall_back() -> None:
    failure = failure_before_response(httpx.ConnectTimeout("slow"), "h", secret=KEY)
    assert type(failure.error) is KimiTimeoutError
    assert (failure.retryable, failure.fallback) == (True, True)


def test_a_reply_cut_before_any_byte_has_no_body() -> None:
    judged = judge_reply(200, JSON, "", httpx.ReadError("reset"), "h", stream=False, secret=KEY)
    assert isinstance(judged, Failure)
    assert judged.error.body is None


def test_a_reply_cut_short_keeps_its_first_2000_characters() -> None:
    text = "x" * 2001
    judged = judge_reply(200, JSON, text, httpx.ReadError("reset"), "h", stream=False, secret=KEY)
    assert isinstance(judged, Failure)
    assert judged.error.body == "x" * 2000
