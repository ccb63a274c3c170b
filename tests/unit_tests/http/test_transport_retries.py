"""Retries, backoff, Retry-After and the fallback base URL, through httpx.MockTransport.

Every behaviour runs on both the sync and the async path (`mode`); `sleep` is injected and records
the delays, so nothing really waits.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from langchain_kimi._errors import (
    KimiAPIError,
    KimiAuthenticationError,
    KimiConnectionError,
    KimiError,
    KimiInvalidRequestError,
    KimiNotFoundError,
    KimiPermissionDeniedError,
    KimiRateLimitError,
    KimiTimeoutError,
)
from langchain_kimi._http._async import exchange as async_exchange
from langchain_kimi._http._sync import exchange as sync_exchange
from langchain_kimi._http.limits.retry import backoff_delay
from langchain_kimi._http.retry_after import retry_after_seconds
from langchain_kimi._http.transport import Transport
from langchain_kimi._version import __version__
from tests.support.fake_transport import BODY, OK, PATH, Script, ok, post, scripted_transport

KEY = "sk-test-SECRET-7f3a9c"
PRIMARY = "https://direct.evolink.ai"
FALLBACK = "https://api.evolink.ai"


def make(
    script: Callable[[httpx.Request], httpx.Response],
    *,
    fallback: str | None = FALLBACK,
    **config: Any,
) -> tuple[Transport, list[float]]:
    return scripted_transport(script, base_url=PRIMARY, key=KEY, fallback=fallback, **config)


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_429_then_200_honors_retry_after(mode: str) -> None:
    script = Script(httpx.Response(429, headers={"Retry-After": "3"}, json={}), ok())
    transport, delays = make(script)
    reply = await post(transport, mode)
    assert reply.body == OK
    assert reply.base_url == PRIMARY
    assert len(script.requests) == 2
    assert delays == [3.0]


async def test_retry_after_ms_wins_over_retry_after(mode: str) -> None:
    headers = {"retry-after-ms": "1500", "retry-after": "9"}
    script = Script(httpx.Response(429, headers=headers), ok())
    transport, delays = make(script)
    await post(transport, mode)
    assert delays == [1.5]


async def test_a_retry_after_beyond_the_calls_pool_timeout_fails_at_once_saying_so(
    mode: str,
) -> None:
    # A wait the call's rate-limit budget cannot hold is not begun: raised at once, saying so.
    script = Script(httpx.Response(503, headers={"retry-after": "3600"}), ok())
    transport, delays = make(script, fallback=None)
    with pytest.raises(KimiAPIError, match=r"waited 0s .* rate_limit_timeout=300s"):
        await post(transport, mode)
    assert delays == []
    assert len(script.requests) == 1


async def test_a_failures_retry_after_is_waited_at_most_the_backoff_cap(mode: str) -> None:
    script = Script(httpx.Response(500, headers={"retry-after": "3600"}), ok())
    transport, delays = make(script)
    await post(transport, mode)
    assert delays == [8.0]


async def test_a_long_retry_after_within_the_budget_is_waited_whole(mode: str) -> None:
    script = Script(httpx.Response(503, headers={"retry-after": "120"}), ok())
    transport, delays = make(script, fallback=None)
    await post(transport, mode)
    assert delays == [120.0]


def test_retry_after_http_date() -> None:
    now = 1_700_000_000.0
    date = "Tue, 14 Nov 2023 22:13:40 GMT"  # now + 20 s
    assert retry_after_seconds({"retry-after": date}, now=lambda: now) == pytest.approx(20.0)
    assert retry_after_seconds({"retry-after": date}, now=lambda: now + 100) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


async def test_persistent_5xx_moves_to_fallback(mode: str) -> None:
    script = Script(*[httpx.Response(500, text="boom")] * 3, ok(**{"x-request-id": "req_9"}))
    transport, delays = make(script)
    reply = await post(transport, mode)
    assert script.hosts == ["direct.evolink.ai"] * 3 + ["api.evolink.ai"]
    assert reply.base_url == FALLBACK
    assert reply.request_id == "req_9"
    assert len(delays) == 2  # two backoffs on the primary, none before switching


async def test_529_is_retried(mode: str) -> None:
    script = Script(httpx.Response(529, json={"type": "error", "error": {"type": "x"}}), ok())
    transport, _ = make(script)
    assert (await post(transport, mode)).base_url == PRIMARY
    assert len(script.requests) == 2


@pytest.mark.parametrize(
    "exc",
    [
        httpx.ConnectError("connection refused"),
        httpx.ConnectTimeout("connect timed out"),
        httpx.ReadTimeout("no headers"),
        httpx.PoolTimeout("pool"),
        httpx.RemoteProtocolError("server disconnected without sending a response"),
        httpx.ReadError("reset before response"),
    ],
    ids=lambda e: type(e).__name__,
)
async def test_unreachable_primary_moves_to_fallback(mode: str, exc: Exception) -> None:
    script = Script(exc, exc, exc, ok())
    transport, delays = make(script)
    reply = await post(transport, mode)
    assert reply.base_url == FALLBACK
    assert script.hosts == ["direct.evolink.ai"] * 3 + ["api.evolink.ai"]
    assert len(delays) == 2


async def test_both_bases_down_raises_last_error(mode: str) -> None:
    script = Script(httpx.ConnectError("refused"))
    transport, _ = make(script)
    with pytest.raises(KimiConnectionError, match=r"api\.evolink\.ai"):
        await post(transport, mode)
    assert script.hosts == ["direct.evolink.ai"] * 3 + ["api.evolink.ai"] * 3


async def test_timeouts_raise_timeout_error_naming_host(mode: str) -> None:
    script = Script(httpx.ConnectTimeout("timed out"))
    transport, _ = make(script, fallback=None, max_retries=1)
    with pytest.raises(KimiTimeoutError, match=r"direct\.evolink\.ai"):
        await post(transport, mode)
    assert len(script.requests) == 2


async def test_429_does_not_use_fallback(mode: str) -> None:
    script = Script(httpx.Response(429, json={"error": {"message": "slow down", "type": "rl"}}))
    transport, delays = make(script, rate_limit_timeout=20.0)
    with pytest.raises(KimiRateLimitError, match=r"slow down \(waited .* rate_limit_timeout=20s"):
        await post(transport, mode)
    assert set(script.hosts) == {"direct.evolink.ai"}
    assert len(script.hosts) > 3  # no retry spent: sent until its 20 s were spent
    assert sum(delays) <= 20


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, KimiInvalidRequestError),
        (401, KimiAuthenticationError),
        (403, KimiPermissionDeniedError),
        (404, KimiNotFoundError),
        (422, KimiInvalidRequestError),
    ],
)
async def test_client_errors_are_never_retried(
    mode: str, status: int, cls: type[KimiError]
) -> None:
    script = Script(httpx.Response(status, json={"error": {"message": "nope"}}), ok())
    transport, delays = make(script)
    with pytest.raises(cls) as info:
        await post(transport, mode)
    assert info.value.status_code == status
    assert len(script.requests) == 1
    assert delays == []


@pytest.mark.parametrize("status", [408, 409])
async def test_408_and_409_are_retried_on_primary(mode: str, status: int) -> None:
    script = Script(httpx.Response(status), ok())
    transport, _ = make(script)
    assert (await post(transport, mode)).base_url == PRIMARY
    assert len(script.requests) == 2


async def test_no_fallback_configured(mode: str) -> None:
    script = Script(httpx.Response(502, text="bad gateway"))
    transport, _ = make(script, fallback=None)
    with pytest.raises(KimiAPIError) as info:
        await post(transport, mode)
    assert info.value.status_code == 502
    assert len(script.requests) == 3


async def test_max_retries_zero_means_one_attempt_per_base(mode: str) -> None:
    script = Script(httpx.Response(500))
    transport, delays = make(script, max_retries=0)
    with pytest.raises(KimiAPIError):
        await post(transport, mode)
    assert script.hosts == ["direct.evolink.ai", "api.evolink.ai"]
    assert delays == []


async def test_backoff_grows_and_is_capped(mode: str) -> None:
    script = Script(httpx.Response(500))
    transport, delays = make(script, fallback=None, max_retries=7)
    with pytest.raises(KimiAPIError):
        await post(transport, mode)
    assert len(delays) == 7
    nominal = [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    for delay, top in zip(delays, nominal, strict=True):
        assert 0 <= delay <= top  # full jitter


def test_backoff_formula() -> None:
    assert [backoff_delay(i, jitter=lambda a, b: b) for i in range(7)] == [
        0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0,
    ]  # fmt: skip
    assert backoff_delay(2, jitter=lambda a, b: a) == 0.0


async def test_body_is_encoded_once_and_resent_verbatim(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    encodes: list[dict[str, Any]] = []
    module = sync_exchange if mode == "sync" else async_exchange  # where each half's loop lives
    real = module.encode_body

    def counting(body: dict[str, Any]) -> bytes:
        encodes.append(body)
        return real(body)

    monkeypatch.setattr(module, "encode_body", counting)
    script = Script(*[httpx.Response(500)] * 3, httpx.Response(429), ok())
    transport, _ = make(script)
    await post(transport, mode)
    assert len(encodes) == 1
    contents = {r.content for r in script.requests}
    assert len(script.requests) == 5
    assert contents == {json.dumps(BODY, ensure_ascii=False, separators=(",", ":")).encode()}
    assert "hé".encode() in contents.pop()


async def test_request_headers(mode: str) -> None:
    script = Script(ok())
    transport, _ = make(script, default_headers={"X-Trace": "abc", "User-Agent": "app/1"})
    await post(transport, mode)
    headers = script.requests[0].headers
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["content-type"] == "application/json"
    assert headers["x-trace"] == "abc"
    assert headers["user-agent"] == "app/1"
    assert script.requests[0].method == "POST"
    assert str(script.requests[0].url) == PRIMARY + PATH


async def test_default_user_agent(mode: str) -> None:
    script = Script(ok())
    transport, _ = make(script)
    await post(transport, mode)
    assert script.requests[0].headers["user-agent"] == f"langchain-kimi/{__version__}"


@pytest.mark.parametrize("name", ["Authorization", "authorization"])
def test_default_headers_may_not_set_authorization(name: str) -> None:
    with pytest.raises(ValueError, match="Authorization"):
        make(Script(ok()), default_headers={name: "Bearer other"})


def test_negative_max_retries_rejected() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        make(Script(ok()), max_retries=-1)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.020"}, 0.02),  # fractions: some gateways send them
        ({"retry-after": "0"}, 0.0),
        ({"retry-after": "-3"}, 0.0),  # "now", never a negative sleep
        ({"retry-after": "3600"}, 3600.0),  # not capped here: the call's timeout decides
        ({"retry-after": "nan"}, None),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"x-ratelimit-reset-requests": "6m0s"}, 360.0),  # OpenAI's reset durations
        ({"x-ratelimit-reset-requests": "20ms"}, 0.02),
        ({"x-ratelimit-reset-requests": "1.5s"}, 1.5),
        ({"x-ratelimit-reset-tokens": "1m30s"}, 90.0),
        ({"x-ratelimit-reset-requests": "soon"}, None),
        ({"anthropic-ratelimit-requests-reset": "2023-11-14T22:13:25Z"}, 5.0),  # RFC 3339
        ({"retry-after": "1", "x-ratelimit-reset-requests": "9s"}, 1.0),  # Retry-After first
    ],
)
def test_every_form_of_the_servers_requested_wait(
    headers: dict[str, str], seconds: float | None
) -> None:
    now = 1_700_000_000.0  # 2023-11-14T22:13:20Z
    found = retry_after_seconds(headers, now=lambda: now)
    assert found == (None if seconds is None else pytest.approx(seconds))
