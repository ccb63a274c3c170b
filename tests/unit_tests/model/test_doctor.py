"""`python -m langchain_kimi doctor` without a network: its calls on `FakeKimiGateway`, its
reachability check on `httpx.MockTransport`, its clock and DNS replaced, its report as text.

What is pinned: what its own calls cost (one streamed request per model x protocol, `max_tokens`
1024, the cheapest effort the model accepts, no retry), how `first_token_s` and `out tok/s` are
measured, that a DNS lookup that never answers times out, and the text report users read.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ValidationError

from langchain_kimi import ChatKimi, KimiConnectionError, doctor
from langchain_kimi.doctor import Call, Diagnosis, Reach
from langchain_kimi.testing import FakeKimiGateway

KEY = "doctor-key-not-real-0123"


class _Clock:
    """`time.monotonic` for the doctor: it moves `step` seconds per chunk the stream yields."""

    def __init__(self) -> None:
        self.now = 100.0
        self.step = 1.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    clock = _Clock()
    monkeypatch.setattr(doctor, "time", clock)
    return clock


@pytest.fixture
def gw(monkeypatch: pytest.MonkeyPatch, clock: _Clock) -> Iterator[FakeKimiGateway]:
    """The doctor's ChatKimi talks to this gateway; each streamed chunk advances the clock."""
    gateway = FakeKimiGateway()
    sync_client = httpx.Client(transport=gateway.transport)

    class ClockedChatKimi(ChatKimi):
        def stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
            for chunk in super().stream(*args, **kwargs):
                clock.now += clock.step
                yield chunk

    def make(**fields: Any) -> ChatKimi:
        gateway.fields = fields  # type: ignore[attr-defined]
        return ClockedChatKimi(http_client=sync_client, **fields)

    monkeypatch.setattr(doctor, "ChatKimi", make)
    yield gateway
    sync_client.close()


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_the_smallest_call_costs_one_capped_low_effort_stream(
    gw: FakeKimiGateway, protocol: doctor.Protocol
) -> None:
    gw.add_reply(text="OK", reasoning="Short.", usage={"input_tokens": 9, "output_tokens": 6})
    call = doctor.smallest_call("kimi-k3.1-pro", protocol, "https://gw.example", api_key=KEY)
    assert call.ok, call.error
    (body,) = gw.requests
    assert body["stream"] is True
    cap = "max_tokens" if protocol == "anthropic" else "max_completion_tokens"
    assert body[cap] == doctor.MAX_TOKENS == 1024
    effort = (
        body["output_config"]["effort"] if protocol == "anthropic" else body["reasoning_effort"]
    )
    assert effort == "low"
    assert json.dumps(body).count(doctor.PROMPT) == 1
    assert (call.reasoning, call.usage["output_tokens"]) == (True, 6)
    fields = gw.fields  # type: ignore[attr-defined]
    assert (fields["model"], fields["protocol"], fields["max_retries"]) == (
        "kimi-k3.1-pro",
        protocol,
        0,
    )
    assert fields["timeout"] is doctor.CALL_TIMEOUT
    assert (fields["base_url"], fields["api_key"]) == ("https://gw.example", KEY)


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_kimi_k3_is_asked_at_the_service_default_effort(
    gw: FakeKimiGateway, protocol: doctor.Protocol
) -> None:
    """kimi-k3 accepts `max` only (004: "solo se admite `max` (predeterminado)"): none is sent."""
    assert doctor.cheapest_effort("kimi-k3", protocol) is None
    assert doctor.cheapest_effort("kimi-k3.1-pro-highspeed", protocol) == "low"
    gw.add_reply(text="OK")
    assert doctor.smallest_call("kimi-k3", protocol, "https://gw.example", api_key=KEY).ok
    assert "reasoning_effort" not in gw.requests[0]
    assert "effort" not in gw.requests[0].get("output_config", {})


def test_a_failing_call_is_not_retried_and_reports_its_typed_error_and_request_id(
    gw: FakeKimiGateway,
) -> None:
    gw.add_error(503, "overloaded", headers={"x-request-id": "req-doctor-1"})
    gw.add_reply(text="never served")
    call = doctor.smallest_call("kimi-k3.1-pro", "openai", "https://gw.example", api_key=KEY)
    assert not call.ok
    assert call.error.startswith("KimiAPIError (503): ")
    assert "overloaded" in call.error
    assert call.request_id == "req-doctor-1"
    assert gw.remaining == 1, "max_retries=0: the doctor costs one request per row"


def test_first_token_is_the_first_chunk_with_text_or_reasoning(gw: FakeKimiGateway) -> None:
    """The clock moves one second per chunk: the header chunks before the reasoning do not count
    as the first token; out tok/s is the output tokens over the time after the first token."""
    gw.add_reply(text="OK", reasoning="Short.", usage={"input_tokens": 9, "output_tokens": 6})
    chunks = list(
        FakeKimiGateway()
        .add_reply(text="OK", reasoning="Short.", usage={"input_tokens": 9, "output_tokens": 6})
        .chat_model(protocol="anthropic")
        .stream(doctor.PROMPT)
    )
    first = next(
        i
        for i, c in enumerate(chunks, 1)
        if c.content or c.additional_kwargs.get("reasoning_content")
    )
    assert first > 1, "the Messages stream starts with a chunk holding no token"
    call = doctor.smallest_call("kimi-k3.1-pro", "anthropic", "https://gw.example", api_key=KEY)
    assert call.first_token_s == float(first)
    assert call.tokens_per_s == round(6 / (len(chunks) - first), 1)


def test_rates_are_rounded_and_measured_after_the_first_token(
    gw: FakeKimiGateway, clock: _Clock
) -> None:
    clock.step = 0.1237  # well under a second between chunks
    gw.add_reply(text="OK", reasoning="Short.", usage={"input_tokens": 9, "output_tokens": 7})
    call = doctor.smallest_call("kimi-k3.1-pro", "openai", "https://gw.example", api_key=KEY)
    assert call.first_token_s is not None
    assert call.tokens_per_s is not None
    chunks_to_first = round(call.first_token_s / clock.step)
    assert call.first_token_s == round(chunks_to_first * clock.step, 3)
    span = clock.now - (100.0 + chunks_to_first * clock.step)
    assert 0 < span < 1
    assert call.tokens_per_s == round(7 / span, 1)


def test_no_output_tokens_means_no_rate(gw: FakeKimiGateway) -> None:
    gw.add_reply(text="OK", reasoning="Short.", usage={"input_tokens": 9, "output_tokens": 0})
    call = doctor.smallest_call("kimi-k3.1-pro", "openai", "https://gw.example", api_key=KEY)
    assert call.first_token_s is not None
    assert call.tokens_per_s is None


def test_usage_without_counts_prints_question_marks() -> None:
    assert doctor._usage_text({"total_tokens": 3}) == "in ? / out ?"
    assert doctor._usage_text({}) == "-"


def test_an_error_without_a_status_prints_no_status() -> None:
    assert doctor._describe(KimiConnectionError("could not reach")) == (
        "KimiConnectionError: could not reach"
    )


def test_a_refused_base_url_is_kept_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOLINK_BASE_URL", "http://gw.example/v1")
    assert doctor.base_url_in_use() == "http://gw.example/v1"
    monkeypatch.setenv("EVOLINK_BASE_URL", "https://gw.example/v1/")
    assert doctor.base_url_in_use() == "https://gw.example"


def test_a_stream_without_any_token_has_no_first_token_nor_rate(gw: FakeKimiGateway) -> None:
    gw.add_reply(text="", reasoning="", usage={"input_tokens": 9, "output_tokens": 5})
    call = doctor.smallest_call("kimi-k3.1-pro", "openai", "https://gw.example", api_key=KEY)
    assert call.ok, call.error
    assert (call.first_token_s, call.tokens_per_s, call.reasoning) == (None, None, False)


def test_a_refused_configuration_is_reported_without_a_call(gw: FakeKimiGateway) -> None:
    call = doctor.smallest_call("kimi-k3.1-pro", "openai", "http://gw.example", api_key=KEY)
    assert (call.model, call.protocol, call.ok) == ("kimi-k3.1-pro", "openai", False)
    assert call.error.startswith("ValueError: base_url 'http://gw.example' uses plain http")
    assert "\n" not in call.error, "one line in the report's table, not pydantic's wrapper"
    assert gw.requests == []


# --------------------------------------------------------------------------- DNS and reach


def test_a_dns_lookup_that_never_answers_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    released = threading.Event()

    finished = threading.Event()

    def never(*_: Any) -> Any:
        released.wait(2)
        finished.set()
        return []

    monkeypatch.setattr(doctor.socket, "getaddrinfo", never)
    monkeypatch.setattr(doctor, "REACH_TIMEOUT_S", 0.05)
    try:
        reach = doctor.check_reach("primary", "https://dns.example/")
        assert not finished.is_set(), "the doctor does not wait for a lookup it gave up on"
    finally:
        released.set()
    assert (reach.ok, reach.dns, reach.tls, reach.latency_ms) == (False, "failed", "-", None)
    assert reach.error == "DNS lookup of dns.example timed out"


def test_dns_lists_each_address_once_and_an_ip_needs_no_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    infos = [(0, 0, 0, "", ("10.0.0.2", 443)), (0, 0, 0, "", ("10.0.0.1", 443))] * 2
    asked: list[tuple[str, int]] = []

    def lookup(host: str, port: int) -> Any:
        asked.append((host, port))
        return infos

    monkeypatch.setattr(doctor.socket, "getaddrinfo", lookup)
    assert doctor._resolve("gw.example", 443) == "10.0.0.1, 10.0.0.2"
    assert doctor._resolve("127.0.0.1", 80) == "n/a (IP address)"
    assert doctor._resolve("::1", 80) == "n/a (IP address)"
    assert asked == [("gw.example", 443)]


def _answering(monkeypatch: pytest.MonkeyPatch, seen: list[httpx.Request], status: int) -> None:
    real = httpx.Client

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status)

    def client(**kwargs: Any) -> httpx.Client:
        kwargs.setdefault("transport", httpx.MockTransport(handler))
        return real(**kwargs)

    monkeypatch.setattr(doctor.httpx, "Client", client)
    monkeypatch.setattr(doctor.socket, "getaddrinfo", lambda *_: [(0, 0, 0, "", ("10.0.0.1", 0))])


def test_any_http_answer_is_reach_and_no_credential_is_sent(
    monkeypatch: pytest.MonkeyPatch, clock: _Clock
) -> None:
    seen: list[httpx.Request] = []
    _answering(monkeypatch, seen, 404)
    reach = doctor.check_reach("primary", "http://user:pw@gw.example:8080/kimi?api_key=k#f")
    assert reach == Reach(
        "primary", "http://gw.example:8080/kimi", "10.0.0.1", "none (plain http)", 0.0, ok=True
    )
    assert [str(r.url) for r in seen] == ["http://gw.example:8080/kimi"]
    assert "authorization" not in seen[0].headers


def test_an_unreachable_host_is_reported_with_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    real = httpx.Client
    monkeypatch.setattr(
        doctor.httpx, "Client", lambda **kw: real(transport=httpx.MockTransport(refuse), **kw)
    )
    monkeypatch.setattr(doctor.socket, "getaddrinfo", lambda *_: [(0, 0, 0, "", ("10.0.0.1", 0))])
    reach = doctor.check_reach("fallback", "https://gw.example")
    assert (reach.ok, reach.tls, reach.latency_ms) == (False, "-", None)
    assert reach.error == "ConnectError: connection refused"


# --------------------------------------------------------------------------- the whole check


@pytest.fixture
def reach_ok(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`check_reach` answering at once (ok) for each role asked; the roles asked, in order."""
    asked: list[str] = []

    def reach(role: str, url: str) -> Reach:
        asked.append(role)
        return Reach(role, url, "10.0.0.1", "TLSv1.3", 12.5, ok=True)

    monkeypatch.setattr(doctor, "check_reach", reach)
    return asked


def test_without_a_key_nothing_is_called(
    monkeypatch: pytest.MonkeyPatch, reach_ok: list[str], gw: FakeKimiGateway
) -> None:
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    monkeypatch.delenv("EVOLINK_BASE_URL", raising=False)
    result = doctor.diagnose(["kimi-k3.1-pro"], ["openai"])
    assert (result.key_set, result.calls, result.failures) == (
        False,
        [],
        ["EVOLINK_API_KEY is not set"],
    )
    assert reach_ok == ["primary", "fallback"], "the default base URL has the documented fallback"
    assert gw.requests == []


def test_a_padded_key_fails_but_the_calls_use_it_trimmed(
    monkeypatch: pytest.MonkeyPatch, reach_ok: list[str], gw: FakeKimiGateway
) -> None:
    monkeypatch.setenv("EVOLINK_API_KEY", f" {KEY}\n")
    monkeypatch.setenv("EVOLINK_BASE_URL", "https://gw.example/v1")
    gw.add_reply(text="OK")
    result = doctor.diagnose(["kimi-k3.1-pro"], ["openai"])
    assert result.failures == [doctor.PADDED_KEY]
    assert [c.ok for c in result.calls] == [True]
    assert reach_ok == ["primary"], "a custom base URL has no documented fallback"
    assert result.base_url == "https://gw.example"


def test_an_unreachable_fallback_is_a_warning_an_unreachable_primary_a_failure(
    monkeypatch: pytest.MonkeyPatch, gw: FakeKimiGateway
) -> None:
    down: set[str] = {"fallback"}

    def reach(role: str, url: str) -> Reach:
        ok = role not in down
        return Reach(
            role, url, "10.0.0.1", "TLSv1.3", 1.0 if ok else None, ok=ok, error="" if ok else "down"
        )

    monkeypatch.setattr(doctor, "check_reach", reach)
    monkeypatch.setenv("EVOLINK_API_KEY", KEY)
    monkeypatch.delenv("EVOLINK_BASE_URL", raising=False)
    gw.add_reply(text="OK").add_reply(text="OK")
    result = doctor.diagnose(["kimi-k3.1-pro"], ["openai"])
    assert result.warnings == ["fallback https://api.evolink.ai unreachable: down"]
    assert result.ok
    down.add("primary")
    result = doctor.diagnose(["kimi-k3.1-pro"], ["openai"])
    assert result.warnings == []
    assert result.failures == [
        "primary https://direct.evolink.ai unreachable: down",
        "fallback https://api.evolink.ai unreachable: down",
    ]


def test_every_model_and_protocol_asked_is_called_once_and_failures_are_named(
    monkeypatch: pytest.MonkeyPatch, reach_ok: list[str], gw: FakeKimiGateway
) -> None:
    monkeypatch.setenv("EVOLINK_API_KEY", KEY)
    gw.add_reply(text="OK").add_error(401, "bad key").add_reply(text="OK").add_reply(text="OK")
    result = doctor.diagnose(["kimi-k3.1-pro", "kimi-k3"], ["openai", "anthropic"])
    assert [(c.model, c.protocol, c.ok) for c in result.calls] == [
        ("kimi-k3.1-pro", "openai", True),
        ("kimi-k3.1-pro", "anthropic", False),
        ("kimi-k3", "openai", True),
        ("kimi-k3", "anthropic", True),
    ]
    assert result.failures == [
        "kimi-k3.1-pro over anthropic: KimiAuthenticationError (401): bad key"
    ]
    assert [r.role for r in result.reach] == reach_ok == ["primary", "fallback"]


def test_the_key_echoed_in_an_error_never_reaches_the_report(
    monkeypatch: pytest.MonkeyPatch, reach_ok: list[str], gw: FakeKimiGateway
) -> None:
    monkeypatch.setenv("EVOLINK_API_KEY", KEY)
    monkeypatch.setenv("EVOLINK_BASE_URL", "https://gw.example")
    gw.add_error(401, f"bad key {KEY}")
    result = doctor.diagnose(["kimi-k3.1-pro"], ["openai"])
    assert result.failures == [
        "kimi-k3.1-pro over openai: KimiAuthenticationError (401): bad key ***"
    ]
    assert KEY not in json.dumps(result.as_json())
    assert not result.ok
    assert result.as_json()["ok"] is False


# --------------------------------------------------------------------------- the text report

REPORT = Diagnosis(
    key_set=True,
    base_url="https://direct.evolink.ai",
    reach=[
        Reach("primary", "https://direct.evolink.ai", "10.0.0.1", "TLSv1.3", 12.5, ok=True),
        Reach("fallback", "https://api.evolink.ai", "failed", "-", None, ok=False, error="DNS"),
    ],
    calls=[
        Call(
            "kimi-k3.1-pro",
            "openai",
            ok=True,
            first_token_s=0.8,
            tokens_per_s=41.5,
            reasoning=True,
            usage={"input_tokens": 12, "output_tokens": 30},
        ),
        Call(
            "kimi-k3", "anthropic", ok=False, error="KimiAPIError (503): busy", request_id="req-9"
        ),
    ],
    warnings=["fallback https://api.evolink.ai unreachable: DNS"],
    failures=["kimi-k3 over anthropic: KimiAPIError (503): busy"],
)

REPORT_TEXT = """\
EVOLINK_API_KEY: set
base URL: https://direct.evolink.ai

role      url                        dns       tls      latency ms  result
--------  -------------------------  --------  -------  ----------  ------
primary   https://direct.evolink.ai  10.0.0.1  TLSv1.3  12.5        ok
fallback  https://api.evolink.ai     failed    -        -           DNS

model          protocol   result                    request id  first token s  out tok/s  reasoning  usage
-------------  ---------  ------------------------  ----------  -------------  ---------  ---------  --------------
kimi-k3.1-pro  openai     OK                        -           0.8            41.5       yes        in 12 / out 30
kimi-k3        anthropic  KimiAPIError (503): busy  req-9       -              -          no         -

warning: fallback https://api.evolink.ai unreachable: DNS
FAILED: kimi-k3 over anthropic: KimiAPIError (503): busy
doctor found problems (exit 1)"""


def test_the_text_report() -> None:
    assert doctor.render(REPORT) == REPORT_TEXT


def test_the_text_report_of_a_machine_without_a_key() -> None:
    bare = Diagnosis(False, "https://direct.evolink.ai", [], [], [], ["EVOLINK_API_KEY is not set"])
    text = doctor.render(bare)
    assert text.startswith("EVOLINK_API_KEY: NOT SET (export EVOLINK_API_KEY=...)\n")
    assert "model" not in text, "no call table without calls"
    assert text.endswith("FAILED: EVOLINK_API_KEY is not set\ndoctor found problems (exit 1)")
    ready = Diagnosis(True, "https://gw.example", [], [], [], [])
    assert doctor.render(ready).endswith("\nOK: ChatKimi is ready")


def test_main_prints_json_or_text_and_exits_1_on_a_problem(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[tuple[list[str], list[str]]] = []

    def diagnose(models: list[str], protocols: list[str]) -> Diagnosis:
        asked.append((list(models), list(protocols)))
        return REPORT

    monkeypatch.setattr(doctor, "diagnose", diagnose)
    assert doctor.main(["--json", "--model", "kimi-k3", "--protocol", "anthropic"]) == 1
    assert json.loads(capsys.readouterr().out)["calls"][1]["request_id"] == "req-9"
    assert doctor.main([]) == 1
    assert capsys.readouterr().out == REPORT_TEXT + "\n"
    assert asked == [(["kimi-k3"], ["anthropic"]), (["kimi-k3.1-pro"], ["openai"])]
    monkeypatch.setattr(doctor, "diagnose", lambda *_: Diagnosis(True, "u", [], [], [], []))
    assert doctor.main([]) == 0


def test_without_credentials_keeps_scheme_host_and_path_only() -> None:
    assert doctor.without_credentials("https://u:p@gw.example:8443/kimi/?key=k#x") == (
        "https://gw.example:8443/kimi/"
    )


# --------------------------------------------------------------------------- mutation sample (issue 31)


def _reaching(
    monkeypatch: pytest.MonkeyPatch,
    handler: Any,
    asked: list[tuple[str, int]] | None = None,
    clients: list[dict[str, Any]] | None = None,
) -> None:
    """`check_reach` on `handler` (a MockTransport handler); DNS answers 10.0.0.1 and records
    (host, port); each client's keyword arguments are recorded."""
    real = httpx.Client

    def client(**kwargs: Any) -> httpx.Client:
        if clients is not None:
            clients.append(dict(kwargs))
        return real(transport=httpx.MockTransport(handler), **kwargs)

    def lookup(host: str, port: int) -> Any:
        if asked is not None:
            asked.append((host, port))
        return [(0, 0, 0, "", ("10.0.0.1", port))]

    monkeypatch.setattr(doctor.httpx, "Client", client)
    monkeypatch.setattr(doctor.socket, "getaddrinfo", lookup)


@pytest.mark.parametrize(
    ("url", "port"),
    [("https://gw.example", 443), ("http://gw.example", 80), ("https://gw.example:8443", 8443)],
)
def test_dns_is_asked_for_the_port_the_url_implies(
    monkeypatch: pytest.MonkeyPatch, url: str, port: int
) -> None:
    asked: list[tuple[str, int]] = []
    _reaching(monkeypatch, lambda request: httpx.Response(200), asked)
    assert doctor.check_reach("primary", url).ok
    assert asked == [("gw.example", port)]


def test_reach_measures_latency_in_milliseconds_within_its_timeout(
    monkeypatch: pytest.MonkeyPatch, clock: _Clock
) -> None:
    seen: list[httpx.Request] = []
    clients: list[dict[str, Any]] = []

    def slow(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        clock.now += 0.01234  # 12.34 ms to the answer
        return httpx.Response(200)

    _reaching(monkeypatch, slow, clients=clients)
    reach = doctor.check_reach("primary", "https://gw.example")
    assert reach == Reach("primary", "https://gw.example", "10.0.0.1", "ok", 12.3, ok=True)
    assert [r.method for r in seen] == ["GET"]
    assert [c["timeout"] for c in clients] == [doctor.REACH_TIMEOUT_S] == [10.0]


class _NetworkStream:
    def __init__(self, ssl_object: Any) -> None:
        self._ssl_object = ssl_object

    def get_extra_info(self, name: str) -> Any:
        return self._ssl_object if name == "ssl_object" else None


class _SSLObject:
    def version(self) -> str:
        return "TLSv1.3"


@pytest.mark.parametrize(
    ("extensions", "tls"),
    [
        ({"network_stream": _NetworkStream(_SSLObject())}, "TLSv1.3"),
        ({"network_stream": _NetworkStream(None)}, "ok"),
        ({}, "ok"),
    ],
)
def test_reach_reports_the_tls_version_the_connection_used(
    monkeypatch: pytest.MonkeyPatch, extensions: dict[str, Any], tls: str
) -> None:
    _reaching(monkeypatch, lambda request: httpx.Response(200, extensions=extensions))
    assert doctor.check_reach("primary", "https://gw.example").tls == tls
    assert doctor.check_reach("primary", "http://localhost:8080").tls == "none (plain http)"


@pytest.mark.parametrize(
    ("error", "tls"),
    [
        ("[SSL: WRONG_VERSION_NUMBER] wrong version number", "failed"),
        ("hostname mismatch, certificate is not valid for 'gw.example'", "failed"),
        ("connection refused", "-"),
    ],
)
def test_a_tls_failure_is_named_in_the_tls_column(
    monkeypatch: pytest.MonkeyPatch, error: str, tls: str
) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(error, request=request)

    _reaching(monkeypatch, refuse)
    reach = doctor.check_reach("fallback", "https://u:p@gw.example/?k=v")
    assert reach == Reach(
        "fallback",
        "https://gw.example/",
        "10.0.0.1",
        tls,
        None,
        ok=False,
        error=f"ConnectError: {error}",
    )


def test_a_failed_dns_lookup_is_reported_for_its_role_and_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fail(*_: Any) -> Any:
        raise socket.gaierror("Name or service not known")

    monkeypatch.setattr(doctor.socket, "getaddrinfo", fail)
    reach = doctor.check_reach("fallback", "https://u:p@nowhere.example/?k=v")
    assert reach == Reach(
        "fallback",
        "https://nowhere.example/",
        "failed",
        "-",
        None,
        ok=False,
        error="Name or service not known",
    )


def test_a_refusal_without_a_value_error_cause_is_reported_as_it_is() -> None:
    class Strict(BaseModel):
        count: int

    with pytest.raises(ValidationError) as caught:
        Strict(count="many")  # type: ignore[arg-type]
    assert doctor._refusal(caught.value).startswith("ValidationError: 1 validation error")


def test_a_stream_that_yields_nothing_is_an_empty_call(monkeypatch: pytest.MonkeyPatch) -> None:
    class Silent:
        def stream(self, prompt: str) -> Iterator[Any]:
            return iter(())

        def close(self) -> None:
            pass

    call = doctor._timed_stream(Silent(), "kimi-k3.1-pro", "openai")  # type: ignore[arg-type]
    assert call == Call("kimi-k3.1-pro", "openai", ok=True)


def test_a_key_or_url_secret_in_evolink_base_url_never_reaches_the_report(
    monkeypatch: pytest.MonkeyPatch, reach_ok: list[str], gw: FakeKimiGateway
) -> None:
    monkeypatch.setenv("EVOLINK_API_KEY", KEY)
    for url in (
        f"https://gw.example/{KEY}",
        "https://user:hunter2-pw@gw.example/?api_key=sekrit-1",
    ):
        monkeypatch.setenv("EVOLINK_BASE_URL", url)
        gw.add_reply(text="OK")
        report = json.dumps(doctor.diagnose(["kimi-k3.1-pro"], ["openai"]).as_json())
        for secret in (KEY, "hunter2-pw", "sekrit-1"):
            assert secret not in report, (url, secret)
    # Only the secrets go: the rest of the URL stays readable.
    monkeypatch.setenv("EVOLINK_BASE_URL", f"https://gw.example/{KEY}")
    assert doctor.diagnose([], []).base_url == "https://gw.example/***"
    monkeypatch.setenv("EVOLINK_BASE_URL", "https://user:hunter2-pw@gw.example/?api_key=sekrit-1")
    assert doctor.diagnose([], []).base_url == "https://***@gw.example/?api_key=***"


@pytest.mark.parametrize(
    "url",
    ["https://direct.evolink.ai ", "/https://direct.evolink.ai", "https://direct.evolink.aiX"],
)
def test_a_base_url_that_only_looks_like_the_default_has_no_fallback_check(
    monkeypatch: pytest.MonkeyPatch, reach_ok: list[str], url: str
) -> None:
    """A refused URL (a trailing space, no scheme) or another host: ChatKimi does not use the
    default host then, so its documented fallback is not in play."""
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    monkeypatch.setenv("EVOLINK_BASE_URL", url)
    doctor.diagnose(["kimi-k3.1-pro"], ["openai"])
    assert reach_ok == ["primary"]


def test_a_table_row_longer_than_its_headers_is_refused() -> None:
    with pytest.raises(ValueError, match="zip"):
        doctor.format_table(("a", "b"), [("1", "2", "3")])


def test_the_command_line_help_and_its_choices(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps the help to the terminal's width
    with pytest.raises(SystemExit) as helped:
        doctor.main(["--help"])
    assert helped.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m langchain_kimi doctor [-h]")
    assert "--model {kimi-k3.1-pro," in out
    assert "why does ChatKimi not work on this machine?" in out
    assert len(re.findall(r"\brepeatable\b", out)) == 2
    assert "--json                machine-readable output" in out
    for option, value in (("--model", "gpt-4o"), ("--protocol", "grpc")):
        with pytest.raises(SystemExit) as refused:
            doctor.main([option, value])
        assert refused.value.code == 2
        assert f"invalid choice: '{value}'" in capsys.readouterr().err


def test_json_output_is_indented_by_two(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(doctor, "diagnose", lambda *_: REPORT)
    doctor.main(["--json"])
    assert capsys.readouterr().out == json.dumps(REPORT.as_json(), indent=2) + "\n"


def test_the_calls_are_short_and_wait_long_enough_for_a_reasoning_model() -> None:
    """A one-line prompt; two minutes for the reply (reasoning first), ten seconds to connect."""
    assert doctor.PROMPT == "Reply with OK."
    assert httpx.Timeout(120.0, connect=10.0) == doctor.CALL_TIMEOUT
