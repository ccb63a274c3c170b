"""The error tree and the mapping from error responses / stream error events to it."""

from __future__ import annotations

import json
import pickle

import pytest
from langchain_core import exceptions as lc

from langchain_kimi._errors import (
    KimiAPIError,
    KimiAuthenticationError,
    KimiConnectionError,
    KimiContextOverflowError,
    KimiError,
    KimiInvalidRequestError,
    KimiNotFoundError,
    KimiPermissionDeniedError,
    KimiRateLimitError,
    KimiStreamError,
    KimiTimeoutError,
    error_from_response,
    error_from_stream_payload,
)


@pytest.mark.parametrize(
    ("status", "cls", "lc_cls"),
    [
        (400, KimiInvalidRequestError, lc.ModelInvalidRequestError),
        (401, KimiAuthenticationError, lc.ModelAuthenticationError),
        (403, KimiPermissionDeniedError, lc.ModelPermissionDeniedError),
        (404, KimiNotFoundError, lc.ModelNotFoundError),
        (408, KimiTimeoutError, lc.ModelTimeoutError),
        (422, KimiInvalidRequestError, lc.ModelInvalidRequestError),
        (429, KimiRateLimitError, lc.ModelRateLimitError),
        (500, KimiAPIError, lc.ModelAPIError),
        (529, KimiAPIError, lc.ModelAPIError),
    ],
)
def test_status_mapping(status: int, cls: type[KimiError], lc_cls: type[Exception]) -> None:
    err = error_from_response(status, json.dumps({"error": {"message": "m", "type": "t"}}))
    assert type(err) is cls
    assert isinstance(err, lc_cls)
    assert isinstance(err, lc.ModelError)
    assert err.status_code == status


def test_messages_error_shape() -> None:
    body = {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "Too many requests"},
        "request_id": "req_011",
    }
    err = error_from_response(429, json.dumps(body), header_request_id="hdr")
    assert (err.message, err.error_type, err.request_id) == (
        "Too many requests",
        "rate_limit_error",
        "req_011",  # the body's id wins over the header's
    )
    assert str(err) == "Too many requests (status 429, type rate_limit_error, request id req_011)"


def test_chat_completions_error_shape() -> None:
    body = {"error": {"message": "Invalid API key", "type": "auth", "code": "invalid_api_key"}}
    err = error_from_response(401, json.dumps(body), header_request_id="hdr_2")
    assert (err.message, err.error_type, err.request_id) == ("Invalid API key", "auth", "hdr_2")


def test_code_used_when_type_missing() -> None:
    err = error_from_response(400, json.dumps({"error": {"message": "x", "code": "bad_param"}}))
    assert err.error_type == "bad_param"


@pytest.mark.parametrize(
    "message",
    [
        "Input token length too long",
        "Invalid request: Your request exceeded model token limit: 1048576",
        "prompt is too long: 1100000 tokens > 1048576 maximum",
    ],
)
def test_context_overflow(message: str) -> None:
    err = error_from_response(400, json.dumps({"error": {"message": message}}))
    assert isinstance(err, KimiContextOverflowError)
    assert isinstance(err, lc.ContextOverflowError)
    assert isinstance(err, KimiInvalidRequestError)


def test_overflow_wording_on_5xx_stays_server_error() -> None:
    err = error_from_response(500, json.dumps({"error": {"message": "context length crashed"}}))
    assert type(err) is KimiAPIError


def test_html_body_gives_snippet() -> None:
    page = "<html>\n  <head><title>502 Bad Gateway</title></head>\n" + "x" * 1000 + "</html>"
    err = error_from_response(502, page)
    assert "502 Bad Gateway" in err.message
    assert "<title>502 Bad Gateway</title>" in err.message  # whitespace collapsed, text kept
    assert len(err.message) < 400
    assert err.message.endswith("…")
    assert err.body is not None
    assert err.body.startswith("<html>")


def test_empty_body() -> None:
    err = error_from_response(500, "")
    assert err.message == "HTTP 500 from the Kimi gateway: (empty body)"


def test_string_error_field() -> None:
    err = error_from_response(400, json.dumps({"error": "model is required", "request_id": "r"}))
    assert (err.message, err.request_id) == ("model is required", "r")


@pytest.mark.parametrize(
    ("payload", "cls", "status"),
    [
        ({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
         KimiAPIError, 529),
        ({"error": {"type": "rate_limit_error", "message": "slow"}}, KimiRateLimitError, 429),
        ({"error": {"type": "invalid_request_error", "message": "Input token length too long"}},
         KimiContextOverflowError, 400),
        ({"error": {"type": "mystery", "message": "?"}}, KimiAPIError, None),
    ],
)  # fmt: skip
def test_stream_payload(payload: dict[str, object], cls: type[KimiError], status: int) -> None:
    err = error_from_stream_payload(payload, request_id="req_s")
    assert type(err) is cls
    assert err.status_code == status
    assert err.request_id == "req_s"


def test_stream_payload_without_message() -> None:
    err = error_from_stream_payload({"weird": 1})
    assert "weird" in err.message
    assert type(err) is KimiAPIError


@pytest.mark.parametrize(
    "err",
    [
        KimiRateLimitError("slow", status_code=429, error_type="rl", request_id="r1", body="{}"),
        KimiContextOverflowError("too long", status_code=400),
        KimiTimeoutError("timed out talking to direct.evolink.ai"),
        KimiConnectionError("could not reach api.evolink.ai"),
        KimiStreamError("dropped", partial=None, status_code=200),
    ],
)
def test_errors_survive_pickling(err: KimiError) -> None:
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is type(err)
    assert str(clone) == str(err)
    assert (clone.status_code, clone.error_type, clone.request_id, clone.body) == (
        err.status_code,
        err.error_type,
        err.request_id,
        err.body,
    )


def test_stream_error_is_api_error_with_partial() -> None:
    err = KimiStreamError("ended early", partial={"content": "half"})
    assert isinstance(err, KimiAPIError)
    assert isinstance(err, lc.ModelAPIError)
    assert err.partial == {"content": "half"}


def test_stream_error_partial_survives_pickling() -> None:
    err = KimiStreamError("ended early", partial={"content": "half"}, request_id="r9")
    clone = pickle.loads(pickle.dumps(err))
    assert clone.partial == {"content": "half"}
    assert clone.request_id == "r9"
