"""No key in what the tools write: the live recorder, the live report and the doctor.

Each is fed a key in every form a gateway or an environment may hand it back (plain, JSON-escaped
`\\/`, `\\u`-escaped, URL-encoded, padded; with and without the `sk-` prefix, see
`tests/secret_forms.py`) and must write none of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import cassette_format
from tests.live import record
from tests.live.exchanges import Exchange
from tests.secret_forms import ENCODINGS, KEYS, forms, leaks

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
        "test": "tests/live/test_x.py::test_echo",
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
