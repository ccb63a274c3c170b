"""No key in what the tools write: the live recorder, the live report and the doctor.

Loopback servers only (127.0.0.1).

Each is fed a key in every form a gateway or an environment may hand it back (plain, JSON-escaped
`\\/`, `\\u`-escaped, URL-encoded, padded; with and without the `sk-` prefix, see
`tests/support/secret_forms.py`) and must write none of them.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from langchain_kimi import doctor
from tests.support.secret_forms import ENCODINGS, KEYS, forms, leaks
from tools import cassette_format
from tools.live import checks, loopback, record
from tools.live.exchanges import Exchange
from tools.live.questions import QUESTIONS
from tools.live.report import Report, SuiteOutcome, render

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]
CASES = [(k, e) for k in KEYS for e in ENCODINGS]
IDS = [f"{k}-{e}" for k, e in CASES]


def _echoed_and_configured(key: str, encoding: str) -> tuple[str, str]:
    """What the gateway echoes and what the environment holds: a padded environment value is
    echoed without its padding (the gateway strips it)."""
    if encoding == "padded":
        return key, forms(key)["padded"]
    return forms(key)[encoding], key


def _echoing_exchanges(key: str, echoed: str) -> list[Exchange]:
    """A request carrying the key in its URL, headers and body; replies echoing it everywhere.
    `echoed` goes into the JSON texts as is, so its escapes are JSON escapes."""
    headers = {
        "authorization": f"Bearer {key}",
        "x-proxy-token": key,
        "cookie": f"session={key}",
        "Cookie2": f"$Version=1; token={key}",
        "content-type": "application/json",
    }
    request = '{"model": "kimi-k3.1-pro", "metadata": {"user_id": "%s"}, "max_tokens": 64}'
    common = {
        "method": "POST",
        "request_headers": headers,
        "request_body": request % echoed,
        "test": "tools/live/test_x.py::test_echo",
    }
    error = '{"type": "error", "error": {"type": "authentication_error", "message": "bad key %s"}}'
    sse = 'event: error\ndata: {"type": "error", "error": {"message": "bad key %s"}}\n\n'
    return [
        Exchange(
            url=f"https://gateway.example/v1/messages?api_key={forms(key)['url-encoded']}"
            f"&echo={echoed}",
            status=401,
            response_headers={
                "content-type": "application/json",
                "set-cookie": f"s={key}; Path=/",
                "x-echo": echoed,
            },
            response_body=error % echoed,
            **common,
        ),
        Exchange(
            url="https://gateway.example/v1/messages",
            status=200,
            response_headers={"content-type": "text/event-stream", "x-echo": echoed},
            response_body=sse % echoed,
            **common,
        ),
        Exchange(
            url="https://gateway.example/v1/chat/completions",
            status=400,
            response_headers={"content-type": "text/plain"},
            response_body=f"bad key {echoed}",
            **common,
        ),
    ]


@pytest.mark.parametrize(("name", "encoding"), CASES, ids=IDS)
def test_recorder_writes_no_key_in_any_encoding(name: str, encoding: str, tmp_path: Path) -> None:
    key = KEYS[name]
    echoed, configured = _echoed_and_configured(key, encoding)
    written = record.write(_echoing_exchanges(key, echoed), tmp_path, configured)
    assert len(written) == 1
    text = written[0].read_text(encoding="utf-8")
    assert leaks(text, key) == []
    for interaction in cassette_format.load_interactions(str(written[0])):
        assert interaction["request"]["headers"]["authorization"] == ["Bearer <EVOLINK_API_KEY>"]
        assert {"cookie", "cookie2", "x-proxy-token"}.isdisjoint(interaction["request"]["headers"])
        assert "set-cookie" not in interaction["response"]["headers"]
    # What is not secret survives: the structure, the count, the error type.
    first = cassette_format.load_interactions(str(written[0]))[0]
    assert first["request"]["body"]["json"]["max_tokens"] == 64
    assert first["response"]["body"]["json"]["error"]["type"] == "authentication_error"


def test_recorder_keeps_a_stream_byte_for_byte_when_it_holds_no_secret(tmp_path: Path) -> None:
    stream = 'event: ping\ndata: {"type":"ping", "note":"caf\\u00e9 \\/ ok"}\n\n'
    exchange = Exchange(
        method="POST",
        url="https://gateway.example/v1/messages",
        request_headers={"content-type": "application/json"},
        request_body="{}",
        status=200,
        response_headers={"content-type": "text/event-stream"},
        response_body=stream,
        test="t",
    )
    interaction = record.to_interaction(exchange, KEYS["sk-prefixed"])
    assert interaction["response"]["body"]["string"] == stream
    assert json.loads(interaction["request"]["body"]) == {}


# --------------------------------------------------------------------------- the live report


def _report_text(key: str, configured: str, exchanges: list[Exchange]) -> str:
    base_url = f"https://user:{key}@gateway.example"
    findings = checks.check_all(exchanges)
    assert findings  # the echoing errors are findings: their text is what could leak
    answers = [(QUESTIONS[0], f"rejected (401: {exchanges[0].response_body})")]
    suites = SuiteOutcome(failed=1, failures=[f"test_x: bad key {exchanges[0].response_body}"])
    report = Report(base_url, suites, findings, answers, len(exchanges), key=configured)
    return render(report) + "\n" + json.dumps(report.as_json())


@pytest.mark.parametrize(("name", "encoding"), CASES, ids=IDS)
def test_report_prints_no_key_in_any_encoding(name: str, encoding: str) -> None:
    key = KEYS[name]
    echoed, configured = _echoed_and_configured(key, encoding)
    exchanges = _echoing_exchanges(key, echoed)
    # An error body whose schema check quotes the key back: `'<key>' is not of type 'object'`.
    exchanges.append(dataclasses.replace(exchanges[0], response_body=json.dumps({"error": echoed})))
    text = _report_text(key, configured, exchanges)
    assert leaks(text, key) == []
    assert "user:" not in text
    assert "HTTP 401" in text  # the findings are still there


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    copy = json.loads(json.dumps(value))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return copy


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    found = []
    for step, item in items:
        found.append((*prefix, step))
        found += _paths(item, (*prefix, step))
    return found


def _authored_replies() -> list[tuple[str, Exchange]]:
    replies = []
    for protocol in ("openai", "anthropic"):
        for interaction in cassette_format.load_interactions(
            str(loopback.CASSETTE_ROOT / f"core_cassettes/{protocol}_plain.yaml")
        ):
            (path, request), reply = loopback.interaction_entry(interaction)
            exchange = Exchange(
                method="POST",
                url=f"https://gateway.example{path}",
                request_headers={},
                request_body=request,
                status=reply.status,
                response_headers={"content-type": reply.content_type},
                response_body=reply.body,
            )
            replies.append((protocol, exchange))
    return replies


def _malformed(exchange: Exchange) -> list[Exchange]:
    """The reply with each of its JSON nodes in turn replaced by a string (and by a list)."""
    variants = []
    if exchange.is_stream:
        events = checks.sse_events(exchange.response_body)
        for index, (name, data) in enumerate(events):
            payload = _parse_json(data)
            for path in _paths(payload):
                for new in ("oops", ["oops"]):
                    edited = [*events]
                    edited[index] = (name, json.dumps(_replaced(payload, path, new)))
                    body = "".join(f"event: {n}\ndata: {d}\n\n" for n, d in edited)
                    variants.append(dataclasses.replace(exchange, response_body=body))
        return variants
    payload = json.loads(exchange.response_body)
    for path in _paths(payload):
        for new in ("oops", ["oops"]):
            body = json.dumps(_replaced(payload, path, new))
            variants.append(dataclasses.replace(exchange, response_body=body))
    return variants


def _parse_json(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data


def test_report_survives_a_200_whose_choices_is_a_string_and_reports_it() -> None:
    (_, chat), *_ = _authored_replies()
    body = {**json.loads(chat.response_body), "choices": "not a list"}
    exchange = dataclasses.replace(chat, response_body=json.dumps(body))
    findings = checks.check_all([exchange])
    assert [f.kind for f in findings] == ["response-schema"]
    assert "not of type 'array'" in findings[0].detail


def test_report_survives_every_node_of_a_reply_in_the_wrong_shape() -> None:
    checked = 0
    for _, exchange in _authored_replies():
        for variant in _malformed(exchange):
            findings = checks.check_all([variant])  # must not raise
            assert all(isinstance(f, checks.Finding) for f in findings)
            checked += 1
    assert checked > 100


# --------------------------------------------------------------------------- the doctor


def _doctor_output(capsys: pytest.CaptureFixture[str]) -> tuple[int, str, dict[str, Any]]:
    code = doctor.main(["--protocol", "openai", "--protocol", "anthropic"])
    text = capsys.readouterr().out
    doctor.main(["--protocol", "openai", "--protocol", "anthropic", "--json"])
    data = json.loads(capsys.readouterr().out)
    return code, text + json.dumps(data), data


@pytest.mark.parametrize(("name", "encoding"), CASES, ids=IDS)
def test_doctor_prints_no_key_a_gateway_echoes(
    name: str,
    encoding: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = KEYS[name]
    echoed, configured = _echoed_and_configured(key, encoding)

    def echoing_error(protocol: str, status: int, kind: str, message: str, request_id: str) -> Any:
        # The raw JSON text holds `echoed` as is: its escapes are JSON escapes.
        body = '{"type": "error", "error": {"type": "%s", "message": "rejected %s"}}'
        return loopback.Reply(status, "application/json", body % (kind, echoed))

    monkeypatch.setattr(loopback, "error_reply", echoing_error)
    with loopback.serve("another-key-the-gateway-expects") as base_url:
        monkeypatch.setenv("EVOLINK_API_KEY", configured)
        monkeypatch.setenv("EVOLINK_BASE_URL", base_url)
        code, output, report = _doctor_output(capsys)
    assert leaks(output, key) == []
    assert code == 1
    for call in report["calls"]:
        assert call["error"].startswith("KimiAuthenticationError (401): rejected ***")
    if encoding == "padded":
        assert report["failures"][0].startswith("EVOLINK_API_KEY has surrounding whitespace")
    assert "could not reach" not in output


def test_doctor_with_a_padded_key_says_so_and_calls_with_the_key_it_pads(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = KEYS["unprefixed"]
    with loopback.serve(key) as base_url:
        monkeypatch.setenv("EVOLINK_API_KEY", forms(key)["padded"])
        monkeypatch.setenv("EVOLINK_BASE_URL", base_url)
        code, output, report = _doctor_output(capsys)
    assert report["failures"] == [doctor.PADDED_KEY]
    assert [call["ok"] for call in report["calls"]] == [True, True]
    assert "could not reach" not in output
    assert leaks(output, key) == []
    assert code == 1


@pytest.mark.parametrize(
    "template",
    [
        "{scheme}://tenant-x9:{key}@{host}",
        "{scheme}://{key}@{host}",
        "{scheme}://{host}/?api_key={key}",
        "{scheme}://{host}?key={key}&x=1",
        "{scheme}://{host}/v1?access_token={key}",
        "{scheme}://svc-q7:{key}@{host}/v1/?api_key={key}",
    ],
)
@pytest.mark.parametrize("name", KEYS)
def test_doctor_prints_no_credential_of_the_base_url(
    template: str,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = KEYS[name]
    with loopback.serve(key) as base_url:
        scheme, host = base_url.split("://")
        given = template.format(scheme=scheme, host=host, key=forms(key)["url-encoded"])
        monkeypatch.setenv("EVOLINK_API_KEY", key)
        monkeypatch.setenv("EVOLINK_BASE_URL", given)
        code, output, report = _doctor_output(capsys)
    assert leaks(output, key) == []
    assert "tenant-x9" not in output
    assert "svc-q7" not in output
    assert report["reach"][0]["ok"] is True  # reached without the credentials
    assert code == 1  # ChatKimi refuses such a base URL: the calls say why
