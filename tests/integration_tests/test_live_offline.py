"""Offline proof of live mode: `./dev live` and the doctor against a loopback gateway.

The gateway (`tools/live/loopback.py`) answers both protocols from the authored cassettes. Run
against the faithful variant, the live report must find nothing; against a variant that breaks
the documents on purpose (drops `message_stop`, adds an unknown field, counts usage differently,
answers 401) it must find exactly those deviations, and the doctor must fail the same rows.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from langchain_kimi import doctor
from tools import cassette_format
from tools.live import checks, loopback, record
from tools.live.exchanges import Exchange
from tools.paths import ROOT

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

KEY = "loopback-" + "key-never-in-a-file"
# A fast slice of the suites that the authored cassettes answer in full: the standard suite's
# invoke/stream tests and the behavioural checks that a plain authored reply can satisfy.
SLICE = (
    "test_invoke or test_stream or test_reasoning or test_effort or test_cache_ttl"
    " or test_base64_image_input or test_stop_sequence"
)
INJECTED = frozenset({"drop_message_stop", "unknown_field", "usage_count"})


def _live(
    tmp_path: Path, deviations: frozenset[str], *extra: str, key: str | None = KEY
) -> tuple[int, dict[str, Any], str]:
    report = tmp_path / "report.json"
    with loopback.serve(KEY, deviations) as base_url:
        env = {k: v for k, v in os.environ.items() if k != "EVOLINK_API_KEY"}
        env["EVOLINK_BASE_URL"] = base_url
        if key:
            env["EVOLINK_API_KEY"] = key
        args = ["./dev", "live", "--model", "kimi-k3.1-pro", "--json", str(report), *extra]
        done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    data = json.loads(report.read_text()) if report.exists() else {}
    return done.returncode, data, done.stdout + done.stderr


@pytest.fixture(scope="module")
def faithful(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    tmp = tmp_path_factory.mktemp("faithful")
    code, report, _ = _live(tmp, frozenset(), "-k", SLICE, "--record", str(tmp / "rec"))
    return code, report, tmp / "rec"


@pytest.fixture(scope="module")
def deviating(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    tmp = tmp_path_factory.mktemp("deviating")
    code, report, _ = _live(tmp, INJECTED, "-k", SLICE, "--record", str(tmp / "rec"))
    return code, report, tmp / "rec"


def _answers(report: dict[str, Any]) -> dict[str, str]:
    return {item["id"]: item["answer"] for item in report["questions"]}


def test_without_a_key_live_prints_the_plan_and_sends_nothing(tmp_path: Path) -> None:
    code, report, output = _live(tmp_path, frozenset({"unauthorized"}), key=None)
    assert code == 0
    assert "EVOLINK_API_KEY is not set: nothing was sent" in output
    assert report == {}


def test_a_padded_key_stops_live_before_sending(tmp_path: Path) -> None:
    code, report, output = _live(tmp_path, frozenset({"unauthorized"}), key=f" {KEY}\n")
    assert code == 2
    assert output.startswith("EVOLINK_API_KEY has surrounding whitespace: remove it.")
    assert KEY not in output
    assert report == {}


def test_faithful_gateway_gives_a_clean_report(faithful: tuple[int, dict[str, Any], Path]) -> None:
    code, report, _ = faithful
    assert report["findings"] == []
    assert report["suites"]["failed"] == 0, report["suites"]["failures"]
    assert report["suites"]["passed"] >= 10
    assert code == 0


def test_faithful_gateway_answers_the_questions_as_the_documents_do(
    faithful: tuple[int, dict[str, Any], Path],
) -> None:
    answers = _answers(faithful[1])
    from tools.live.questions import QUESTIONS

    assert set(answers) == {q.id for q in QUESTIONS}
    assert not [a for a in answers.values() if a.startswith("probe failed")]
    stop = cassette_format.load_interactions(
        str(loopback.CASSETTE_ROOT / "features_cassettes/anthropic_stop.yaml")
    )[0]["response"]["body"]["json"]
    verdict = "yes" if stop["stop_reason"] == "stop_sequence" else "no"
    assert answers["stop-sequence-reason"] == (
        f"{verdict}: stop_reason={stop['stop_reason']}, stop_sequence={stop['stop_sequence']}"
    )
    assert answers["messages-stream-end"].startswith("yes")
    assert answers["chat-stream-usage"] == "; ".join(
        f"{model}: yes, in a trailing chunk (empty choices)"
        for model in ("kimi-k3.1-pro", "kimi-k3.1-pro-highspeed", "kimi-k3")
    )
    for status in ("400", "401"):
        assert answers[f"error-{status}"].count(f"HTTP {status}") == 2
    assert answers["error-429"] == "not observed in this run"
    assert answers["fallback"] == "not in play (custom base URL)"
    # The loopback gateway names the requested model and checks the schema only.
    assert answers["reply-model-echo"].startswith("yes, exactly")
    assert answers["anthropic-version"] == (
        "no: without it accepted (200); with 2023-06-01 accepted (200)"
    )
    assert answers["output-format-non-strict"] == (
        "strict: accepted (200), reply is not JSON; non-strict: accepted (200), reply is not JSON"
    )
    assert answers["k3-tool-blocks-without-tools"].count("accepted (200)") == 2
    assert answers["tools-omit-history-tools"].count("accepted (200)") == 4
    assert answers["web-search-limit-answer"].startswith(
        "accepted, answered without searching (finish_reason=stop); billing: prompt_tokens 40 "
    )
    assert answers["max-tokens-near-full-context"].startswith("not asked: needs --costly")
    # The loopback gateway's replies spell out every documented key, zeros too.
    assert answers["reply-optional-fields"].startswith("0 of ")
    assert "openai usage.prompt_tokens_details (" in answers["reply-optional-fields"]


def test_deviating_gateway_is_reported_with_exactly_the_injected_deviations(
    deviating: tuple[int, dict[str, Any], Path],
) -> None:
    code, report, _ = deviating
    findings = report["findings"]
    # A Messages stream that ends after its `message_delta` (stop_reason set) is complete: the
    # documents say the events "suele incluir" `message_stop`, so it is no finding; the open
    # question reports it.
    assert {f["kind"] for f in findings} == {"undocumented-field", "usage-arithmetic"}
    for finding in findings:
        if finding["kind"] == "undocumented-field":
            assert finding["detail"].endswith("." + loopback.UNKNOWN_FIELD)
        else:
            assert finding["protocol"] == "openai"
            assert finding["detail"].startswith("total_tokens")
    assert _answers(report)["messages-stream-end"].startswith("no:")
    # ChatKimi completes those streams (issue 11): no suite fails on them.
    assert report["suites"]["failures"] == []
    assert code == 1


@pytest.mark.parametrize(
    ("cut", "finding"),
    [({"message_stop"}, False), ({"message_delta", "message_stop"}, True)],
)
def test_a_messages_stream_end_is_a_finding_only_before_the_stop_reason(
    cut: set[str], finding: bool
) -> None:
    # 000 / 001: the events "suele incluir" message_stop; once message_delta gave the stop reason
    # the stream is complete, before it the stream was cut.
    authored = cassette_format.load_interactions(
        str(loopback.CASSETTE_ROOT / "core_cassettes/anthropic_plain.yaml")
    )[1]
    events = checks.sse_events(authored["response"]["body"]["sse"])
    exchange = Exchange(
        method="POST",
        url="https://direct.evolink.ai/v1/messages",
        request_headers={},
        request_body=json.dumps(authored["request"]["body"]["json"]),
        status=200,
        response_headers={"content-type": "text/event-stream"},
        response_body="".join(f"event: {n}\ndata: {d}\n\n" for n, d in events if n not in cut),
    )
    kinds = [f.kind for f in checks.check(exchange)]
    assert ("stream-end" in kinds) is finding
    assert kinds == (["stream-order", "stream-end"] if finding else [])  # + "no message_delta"


def test_a_401_gateway_is_reported_as_http_errors_with_documented_bodies(tmp_path: Path) -> None:
    code, report, _ = _live(
        tmp_path, frozenset({"unauthorized"}), "-k", "test_invoke and not model_override"
    )
    assert {(f["kind"], f["detail"]) for f in report["findings"]} == {("http-error", "HTTP 401")}
    assert code == 1


def test_recording_scrubs_every_credential(faithful: tuple[int, dict[str, Any], Path]) -> None:
    files = sorted(faithful[2].glob("*.yaml"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert text.startswith(record.RECORDED_COMMENT)
        assert KEY not in text
        assert loopback.SESSION_COOKIE not in text
        assert "cookie" not in text.lower()
        for interaction in cassette_format.load_interactions(str(path)):
            request_auth = interaction["request"]["headers"].get("authorization")
            assert request_auth == ["Bearer <EVOLINK_API_KEY>"]
            headers = interaction["response"]["headers"]
            assert headers[cassette_format.PROVENANCE_HEADER] == [record.RECORDED]
            assert "authorization" not in headers


def test_recording_scrubs_a_key_echoed_in_a_body() -> None:
    exchange = Exchange(
        method="POST",
        url="https://direct.evolink.ai/v1/messages",
        request_headers={"authorization": f"Bearer {KEY}", "cookie": "a=b", "x-api-key": KEY},
        request_body="{}",
        status=401,
        response_headers={"content-type": "application/json", "set-cookie": "a=b"},
        response_body=json.dumps({"error": {"message": f"bad key {KEY}"}}),
    )
    text = json.dumps(record.to_interaction(exchange, KEY))
    assert KEY not in text
    assert "cookie" not in text
    assert "<EVOLINK_API_KEY>" in text


def _diff(directory: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "tools.authoring", "--diff", str(directory)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout


def test_diff_of_a_faithful_recording_shows_no_structural_change(
    faithful: tuple[int, dict[str, Any], Path],
) -> None:
    code, output = _diff(faithful[2])
    lines = [line for line in output.splitlines() if " vs " in line]
    assert len([line for line in lines if "(same request)" in line]) >= 10
    # The deliberate error probes have no authored twin: they meet the documented error body.
    assert len([line for line in lines if "(documented error body)" in line]) == 4
    assert all(line.endswith(": same structure") for line in lines), output
    assert code == 0


def test_diff_of_a_deviating_recording_names_the_structure_not_the_text(
    deviating: tuple[int, dict[str, Any], Path],
) -> None:
    _, output = _diff(deviating[2])
    assert f"fields only in recorded: body.{loopback.UNKNOWN_FIELD}" in output
    assert "fields only in authored: message_stop, message_stop.type" in output
    assert "events recorded: message_start >" in output
    assert "reply with OK" not in output.lower()
    assert "The user asks me" not in output


# --------------------------------------------------------------------------- the doctor


@pytest.fixture
def gateway(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    deviations = getattr(request, "param", frozenset())
    with loopback.serve(KEY, deviations) as base_url:
        monkeypatch.setenv("EVOLINK_API_KEY", KEY)
        monkeypatch.setenv("EVOLINK_BASE_URL", base_url)
        yield base_url


def _doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = doctor.main(["--protocol", "openai", "--protocol", "anthropic", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def _dead_url() -> str:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_doctor_passes_on_the_faithful_gateway(
    gateway: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _doctor(capsys)
    assert [(c["model"], c["protocol"], c["ok"]) for c in report["calls"]] == [
        ("kimi-k3.1-pro", "openai", True),
        ("kimi-k3.1-pro", "anthropic", True),
    ]
    for call in report["calls"]:
        assert call["reasoning"] is True
        assert call["usage"]["output_tokens"] > 0
        assert call["first_token_s"] is not None
        assert call["tokens_per_s"] is not None
    assert [r["role"] for r in report["reach"]] == ["primary"]  # custom base URL: no fallback
    assert report["failures"] == []
    assert code == 0


def test_doctor_uses_the_base_url_chatkimi_uses_when_the_environment_ends_in_v1(
    gateway: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Other EvoLink clients set EVOLINK_BASE_URL=.../v1; ChatKimi drops the /v1, so must the doctor.
    monkeypatch.setenv("EVOLINK_BASE_URL", gateway + "/v1/")
    code, report = _doctor(capsys)
    assert report["base_url"] == gateway
    assert [r["url"] for r in report["reach"]] == [gateway]
    assert [c["ok"] for c in report["calls"]] == [True, True]
    assert code == 0


@pytest.mark.parametrize(
    ("gateway", "anthropic_ok"),
    # A Messages stream ending after its message_delta is complete ("suele incluir" message_stop);
    # one cut before its message_delta is not.
    [(INJECTED, True), (INJECTED | {"cut_before_delta"}, False)],
    indirect=["gateway"],
)
def test_doctor_fails_exactly_the_row_the_deviations_break(
    gateway: str, anthropic_ok: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _doctor(capsys)
    rows = {c["protocol"]: c for c in report["calls"]}
    assert rows["openai"]["ok"] is True  # an unknown field and odd usage do not break a call
    assert rows["anthropic"]["ok"] is anthropic_ok, rows["anthropic"]
    if not anthropic_ok:
        assert rows["anthropic"]["error"].startswith("KimiStreamError")
        assert "message_stop" in rows["anthropic"]["error"]
    assert code == (0 if anthropic_ok else 1)


@pytest.mark.parametrize("gateway", [frozenset({"unauthorized"})], indirect=True)
def test_doctor_reports_401_as_a_typed_error_with_request_id(
    gateway: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _doctor(capsys)
    for call in report["calls"]:
        assert call["error"].startswith("KimiAuthenticationError (401)")
        assert call["request_id"].startswith("req_loopback_")
    assert code == 1


def test_doctor_never_prints_the_key(gateway: str, capsys: pytest.CaptureFixture[str]) -> None:
    doctor.main(["--protocol", "anthropic"])
    text = capsys.readouterr().out
    assert "EVOLINK_API_KEY: set" in text
    assert KEY not in text


def test_doctor_without_a_key_fails_before_calling(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    monkeypatch.setenv("EVOLINK_BASE_URL", _dead_url())
    code, report = _doctor(capsys)
    assert report["calls"] == []
    assert report["failures"][0] == "EVOLINK_API_KEY is not set"
    assert code == 1


def test_doctor_unreachable_fallback_is_a_warning_while_the_primary_answers(
    gateway: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Make the loopback gateway "the default" so the fallback is in play, and the fallback dead.
    monkeypatch.setattr(doctor, "DEFAULT_BASE_URL", gateway)
    monkeypatch.setattr(doctor, "DOCUMENTED_FALLBACK_URL", _dead_url())
    monkeypatch.delenv("EVOLINK_BASE_URL")
    code, report = _doctor(capsys, "--protocol", "openai")
    assert [(r["role"], r["ok"]) for r in report["reach"]] == [
        ("primary", True),
        ("fallback", False),
    ]
    assert len(report["warnings"]) == 1
    assert report["warnings"][0].startswith("fallback")
    assert report["failures"] == []
    assert code == 0


def test_doctor_unreachable_primary_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EVOLINK_API_KEY", KEY)
    monkeypatch.setenv("EVOLINK_BASE_URL", _dead_url())
    code, report = _doctor(capsys, "--protocol", "openai")
    assert report["reach"][0]["ok"] is False
    assert any(f.startswith("primary") for f in report["failures"])
    assert report["calls"][0]["error"].startswith("KimiConnectionError")
    assert code == 1


@pytest.fixture(scope="module")
def tls_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The faithful gateway over HTTPS with a certificate from a throwaway CA (trustme)."""
    authority = trustme.CA()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    ca_file = tmp_path_factory.mktemp("tls") / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    with loopback.serve(KEY, tls=context) as base_url:
        yield base_url, ca_file


def _doctor_over_tls(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    base_url: str,
    ca: Path | None,
) -> tuple[int, dict[str, Any]]:
    monkeypatch.setenv("EVOLINK_API_KEY", KEY)
    monkeypatch.setenv("EVOLINK_BASE_URL", base_url)
    if ca is None:
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    else:
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))  # httpx's default context honours it
    return _doctor(capsys, "--protocol", "openai")


def test_doctor_reports_the_tls_version_when_the_certificate_is_trusted(
    tls_gateway: tuple[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = _doctor_over_tls(capsys, monkeypatch, *tls_gateway)
    assert report["reach"][0]["tls"].startswith("TLSv1.")
    assert code == 0


def test_doctor_reports_a_tls_failure_for_an_untrusted_certificate(
    tls_gateway: tuple[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = _doctor_over_tls(capsys, monkeypatch, tls_gateway[0], None)
    assert report["reach"][0]["tls"] == "failed"
    assert "CERTIFICATE_VERIFY_FAILED" in report["reach"][0]["error"]
    assert report["calls"][0]["error"].startswith("KimiConnectionError")
    assert code == 1


def test_live_tests_are_deselected_outside_the_live_runner() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIMI_LIVE")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tools/live", "--collect-only", "-q", "-p", "no:xdist"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    last = done.stdout.strip().splitlines()[-1]
    assert "no tests collected" in last
    assert "deselected" in last


def test_doctor_reports_a_name_that_does_not_resolve(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_such_host(host: str, *args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, f"Name or service not known: {host}")

    # The resolver is replaced, so no DNS query leaves the machine; no key, so no call is made.
    monkeypatch.setattr(doctor.socket, "getaddrinfo", no_such_host)
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    monkeypatch.setenv("EVOLINK_BASE_URL", "https://gateway.example")
    code, report = _doctor(capsys)
    assert report["reach"][0]["dns"] == "failed"
    assert "gateway.example" in report["reach"][0]["error"]
    assert any(
        f.startswith("primary https://gateway.example unreachable") for f in report["failures"]
    )
    assert code == 1
