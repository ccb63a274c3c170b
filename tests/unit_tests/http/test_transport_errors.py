"""Typed errors out of the transport, URL security, and keeping the API key out of everything."""

from __future__ import annotations

import logging
import pickle
from typing import Any

import httpx
import pytest
from langchain_core import exceptions as lc
from pydantic import SecretStr

from langchain_kimi._errors import (
    KimiAPIError,
    KimiAuthenticationError,
    KimiConnectionError,
    KimiContextOverflowError,
    KimiError,
    KimiInvalidRequestError,
    KimiRateLimitError,
    KimiStreamError,
    KimiTimeoutError,
)
from langchain_kimi._http.transport import Transport, TransportConfig
from tests.support import fake_transport
from tests.support.fake_transport import Script, scripted_transport, transport_config

KEY = "sk-test-SECRET-e41b77"
PRIMARY = "https://direct.evolink.ai"
PATH = "/v1/chat/completions"
# A body the gateway accepts (the fake judges it before its script answers).
BODY: dict[str, Any] = {**fake_transport.BODY, "model": "kimi-k3"}

OVERFLOW_MSG = "Input token length too long"
MESSAGES_SHAPE = {
    "type": "error",
    "error": {"type": "invalid_request_error", "message": "max_tokens: must be positive"},
    "request_id": "req_body_1",
}
CHAT_SHAPE = {"error": {"message": "Invalid model", "type": "invalid_request_error", "code": "x"}}
HTML_502 = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"


def make(handler: Any, **config: Any) -> Transport:
    """A transport with the default retries (2): each test below also pins how many attempts
    its failure costs (retryable ones are retried, the others fail at once)."""
    transport, _delays = scripted_transport(handler, base_url=PRIMARY, key=KEY, **config)
    return transport


async def call(transport: Transport, mode: str) -> Any:
    if mode == "sync":
        return transport.post_json(PATH, BODY)
    return await transport.apost_json(PATH, BODY)


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_context_overflow(mode: str) -> None:
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        body = {"error": {"message": f"{OVERFLOW_MSG}: 1100000 > 1048576", "type": "bad"}}
        return httpx.Response(400, json=body)

    transport = make(handler)
    with pytest.raises(KimiContextOverflowError) as info:
        await call(transport, mode)
    assert isinstance(info.value, lc.ContextOverflowError)
    assert isinstance(info.value, KimiInvalidRequestError)
    assert OVERFLOW_MSG in info.value.message
    assert len(calls) == 1


async def test_messages_error_shape(mode: str) -> None:
    script = Script(httpx.Response(400, json=MESSAGES_SHAPE))
    with pytest.raises(KimiInvalidRequestError) as info:
        await call(make(script), mode)
    assert len(script.requests) == 1  # a 400 is never retried
    err = info.value
    assert err.message == "max_tokens: must be positive"
    assert err.error_type == "invalid_request_error"
    assert err.request_id == "req_body_1"
    assert "req_body_1" in str(err)


async def test_chat_completions_error_shape_takes_header_request_id(mode: str) -> None:
    script = Script(httpx.Response(401, json=CHAT_SHAPE, headers={"x-request-id": "hdr_7"}))
    with pytest.raises(KimiAuthenticationError) as info:
        await call(make(script), mode)
    assert len(script.requests) == 1
    err = info.value
    assert (err.message, err.error_type, err.request_id) == (
        "Invalid model",
        "invalid_request_error",
        "hdr_7",
    )
    assert isinstance(err, lc.ModelAuthenticationError)


async def test_html_502_gives_status_and_snippet(mode: str) -> None:
    script = Script(httpx.Response(502, text=HTML_502))
    with pytest.raises(KimiAPIError) as info:
        await call(make(script), mode)
    assert len(script.requests) == 3  # a 5xx is retried max_retries (2) times
    assert info.value.status_code == 502
    assert "502 Bad Gateway" in info.value.message
    assert "status 502" in str(info.value)


async def test_empty_500_body(mode: str) -> None:
    script = Script(httpx.Response(500))
    with pytest.raises(KimiAPIError) as info:
        await call(make(script), mode)
    assert len(script.requests) == 3
    assert info.value.status_code == 500
    assert info.value.message == "HTTP 500 from the Kimi gateway: (empty body)"


async def test_success_status_with_error_object(mode: str) -> None:
    body = {"error": {"message": "quota exhausted", "type": "rate_limit_error"}}
    script = Script(httpx.Response(200, json=body, headers={"request-id": "r2"}))
    with pytest.raises(KimiRateLimitError) as info:
        await call(make(script), mode)
    assert len(script.requests) == 1  # an answer arrived: never resent
    assert info.value.message == "quota exhausted"
    assert info.value.request_id == "r2"


@pytest.mark.parametrize("text", ["<html>ok</html>", "[1, 2]", ""])
async def test_success_status_with_non_object_body(mode: str, text: str) -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(200, text=text)

    transport = make(handler)
    with pytest.raises(KimiAPIError, match="not a JSON object"):
        await call(transport, mode)
    assert len(calls) == 1


async def test_connection_error_names_host_not_key(mode: str) -> None:
    attempts: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    transport = make(handler)
    with pytest.raises(KimiConnectionError) as info:
        await call(transport, mode)
    assert len(attempts) == 3  # nothing was sent: safe to retry
    assert "direct.evolink.ai" in str(info.value)
    assert "Connection refused" in str(info.value)
    assert isinstance(info.value, lc.ModelConnectionError)
    # No httpx exception (which holds the request and its headers) rides along.
    assert info.value.__cause__ is None
    assert info.value.__context__ is None


async def test_timeout_error_class(mode: str) -> None:
    attempts: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        raise httpx.ReadTimeout("timed out", request=request)

    transport = make(handler)
    with pytest.raises(KimiTimeoutError, match=r"direct\.evolink\.ai") as info:
        await call(transport, mode)
    assert len(attempts) == 3
    assert isinstance(info.value, lc.ModelTimeoutError)


# -- URL security -----------------------------------------------------------------------------


def config(base: str, fallback: str | None = None, **kw: Any) -> TransportConfig:
    return transport_config(base, fallback, SecretStr(KEY), httpx.Timeout(1.0), **kw)


@pytest.mark.parametrize(
    ("base", "fallback"),
    [
        ("http://direct.evolink.ai", None),
        ("https://direct.evolink.ai", "http://api.evolink.ai"),
        ("http://10.0.0.5:8080", None),
    ],
)
def test_plain_http_refused(base: str, fallback: str | None) -> None:
    with pytest.raises(ValueError, match="http://") as info:
        config(base, fallback)
    assert KEY not in str(info.value)


@pytest.mark.parametrize("bad", ["ftp://direct.evolink.ai", "direct.evolink.ai", "/v1"])
def test_non_http_urls_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="https://"):
        config(bad)


@pytest.mark.parametrize(
    "base",
    ["http://127.0.0.1:8080", "http://127.5.0.1", "http://localhost:3000", "http://[::1]:81"],
)
def test_plain_http_to_loopback_allowed(base: str) -> None:
    assert config(base).base_url == base


def test_plain_http_allowed_when_opted_in() -> None:
    cfg = config("http://gateway.internal", "http://backup.internal", allow_insecure_http=True)
    assert cfg.fallback_base_url == "http://backup.internal"


def test_header_breaking_key_rejected_without_echo() -> None:
    with pytest.raises(ValueError, match="api_key") as info:
        transport_config(PRIMARY, None, SecretStr("sk-abc\r\nX: y"), httpx.Timeout(1.0))
    assert "sk-abc" not in str(info.value)


# -- the key never leaks ----------------------------------------------------------------------


def _leak_scenarios() -> list[Any]:
    def echo_401(request: httpx.Request) -> httpx.Response:
        # Some gateways echo the key they rejected; it must be redacted from our error.
        auth = request.headers["authorization"]
        return httpx.Response(401, json={"error": {"message": f"bad key {auth}"}})

    def echo_html(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, text=f"<pre>{request.headers}</pre>")

    def connect_error(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused for {request.headers['authorization']}", request=request)

    def local_protocol(request: httpx.Request) -> httpx.Response:
        raise httpx.LocalProtocolError(f"Illegal header value b'Bearer {KEY} '", request=request)

    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("timed out", request=request)

    def stream_json_error(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"error": {"message": f"key {KEY} blocked"}})

    def html_200(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, text=f"<p>hello {KEY}</p>", headers={"content-type": "text/html"}
        )

    return [
        echo_401,
        echo_html,
        connect_error,
        local_protocol,
        timeout,
        stream_json_error,
        html_200,
    ]


async def drain(transport: Transport, mode: str) -> None:
    if mode == "sync":
        with transport.stream_events(PATH, BODY) as events:
            list(events)
    else:
        async with transport.astream_events(PATH, BODY) as aevents:
            [e async for e in aevents]


def _all_text(err: BaseException) -> str:
    parts = [str(err), repr(err), repr(err.args), repr(vars(err))]
    for linked in (err.__cause__, err.__context__):
        if linked is not None:
            parts.append(_all_text(linked))
    return "\n".join(parts)


async def test_key_absent_from_errors_reprs_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "langchain_kimi"):
        caplog.set_level(logging.DEBUG, logger=name)
    errors: list[BaseException] = []
    for handler in _leak_scenarios():
        transport = make(handler, max_retries=1)
        for mode in ("sync", "async"):
            with pytest.raises(KimiError) as info:
                await call(transport, mode)
            errors.append(info.value)
            with pytest.raises(KimiError) as info:
                await drain(transport, mode)
            errors.append(info.value)
        assert KEY not in repr(transport) + str(transport)
        assert KEY not in repr(transport._config) + str(transport._config)
    assert len(errors) == 28
    for err in errors:
        assert KEY not in _all_text(err), err
        assert KEY not in pickle.dumps(err).decode("latin-1")
    assert any("***" in str(err) for err in errors)  # the echoed key was redacted, not dropped
    assert caplog.records, "retries should have been logged"
    logged = caplog.text + "".join(repr(r.__dict__) for r in caplog.records)
    assert KEY not in logged
    assert {type(e) for e in errors} >= {
        KimiAuthenticationError,
        KimiAPIError,
        KimiConnectionError,
        KimiTimeoutError,
        KimiStreamError,
    }


def test_transport_is_not_picklable() -> None:
    transport = make(Script(httpx.Response(200, json={})))
    with pytest.raises(TypeError, match="not picklable"):
        pickle.dumps(transport)


def test_config_is_picklable() -> None:
    cfg = config(PRIMARY, "https://api.evolink.ai", default_headers={"X-A": "1"})
    clone = pickle.loads(pickle.dumps(cfg))
    assert clone.api_key.get_secret_value() == KEY
    assert dict(clone.default_headers) == {"X-A": "1"}


def test_a_short_placeholder_key_does_not_corrupt_error_messages() -> None:
    import httpx

    from langchain_kimi import ChatKimi, KimiContextOverflowError

    def too_long(request: httpx.Request) -> httpx.Response:
        body = {
            "error": {"message": "Input token length too long", "type": "invalid_request_error"}
        }
        return httpx.Response(400, json=body)

    model = ChatKimi(
        api_key="k",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(too_long)),
    )
    with pytest.raises(KimiContextOverflowError, match="Input token length too long"):
        model.invoke("hi")
