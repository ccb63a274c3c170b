"""Every cassette under cassettes/ speaks the published API: bodies validate against spec/."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support import recording
from tests.support.secret_forms import ENCODINGS, KEYS, forms, leaks
from tools import cassette_format
from tools.paths import CASSETTE_ROOT
from tools.schema_validation import validate_error, validate_request, validate_response
from tools.sse_text import parse_sse

CASSETTES = sorted(CASSETTE_ROOT.rglob("*.yaml"))
PROTOCOL_BY_PATH = {"/v1/messages": "anthropic", "/v1/chat/completions": "openai"}
PLACEHOLDER_AUTH = "Bearer <EVOLINK_API_KEY>"
_SECRET = re.compile(r"sk-[A-Za-z0-9]{20,}|Bearer\s+(?!<EVOLINK_API_KEY>)[A-Za-z0-9._\-]{20,}")


def _id(path: Path) -> str:
    return str(path.relative_to(CASSETTE_ROOT))


def _header(headers: dict[str, Any], name: str) -> list[str]:
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return [str(v) for v in (value if isinstance(value, list) else [value])]
    return []


def _body_text(body: Any) -> str:
    return cassette_format._unpack_body(body) or ""


def _sse_events(text: str) -> list[tuple[str, str]]:
    """(event name, data) pairs of an SSE body, per the text/event-stream format."""
    return parse_sse([text.encode()], default_event="message")


def _check_anthropic_stream(events: list[tuple[str, str]]) -> None:
    types = []
    for name, data in events:
        payload = json.loads(data)
        assert isinstance(payload, dict), data
        assert payload.get("type") == name, f"event {name!r} carries type {payload.get('type')!r}"
        types.append(name)
    if "error" in types:
        return
    assert types[0] == "message_start", types
    assert types[-1] == "message_stop", types
    assert "message_delta" in types, types


def _check_openai_stream(events: list[tuple[str, str]]) -> None:
    assert events, "empty stream"
    assert events[-1][1].strip() == "[DONE]", "a Chat Completions stream ends with data: [DONE]"
    for _, data in events[:-1]:
        payload = json.loads(data)
        assert isinstance(payload, dict), data
        if "error" not in payload:
            assert payload.get("object") == "chat.completion.chunk", payload
            assert isinstance(payload.get("choices"), list), payload


@pytest.fixture(params=CASSETTES, ids=_id)
def cassette(request: pytest.FixtureRequest) -> Path:
    path: Path = request.param
    return path


def test_cassettes_exist() -> None:
    assert CASSETTES, f"no cassettes under {CASSETTE_ROOT}"


def test_cassette_bodies_follow_spec(cassette: Path) -> None:
    interactions = cassette_format.load_interactions(str(cassette))
    assert interactions, "cassette without interactions"
    for interaction in interactions:
        request, response = interaction["request"], interaction["response"]
        path = re.sub(r"^https?://[^/]+", "", request["uri"]).split("?")[0]
        protocol = PROTOCOL_BY_PATH[path]
        body = json.loads(_body_text(request["body"]))
        model = str(body.get("model"))
        validate_request(body, protocol, model)

        code = response["status"]["code"]
        content_type = ";".join(_header(response["headers"], "content-type"))
        text = _body_text(response["body"])
        if code != 200:
            validate_error(json.loads(text), protocol, model)
        elif "text/event-stream" in content_type:
            events = _sse_events(text)
            if protocol == "anthropic":
                _check_anthropic_stream(events)
            else:
                _check_openai_stream(events)
        else:
            validate_response(json.loads(text), protocol, model)


def test_cassette_roundtrips_through_serializer(cassette: Path) -> None:
    text = cassette.read_text(encoding="utf-8")
    loaded = cassette_format.deserialize(text)
    again = cassette_format.deserialize(cassette_format.serialize(loaded))
    assert again == loaded
    for interaction in loaded["interactions"]:
        assert isinstance(interaction["response"]["body"]["string"], str)


def test_authored_cassettes_say_so(cassette: Path) -> None:
    text = cassette.read_text(encoding="utf-8")
    if "authored-from-spec" not in text:
        pytest.skip("recorded cassette")
    assert text.startswith("# Authored"), "authored cassettes open with a provenance comment"
    for interaction in cassette_format.load_interactions(str(cassette)):
        provenance = _header(interaction["response"]["headers"], "x-cassette-provenance")
        assert provenance == ["authored-from-spec"]


def test_no_secrets(cassette: Path) -> None:
    text = cassette.read_text(encoding="utf-8")
    assert not _SECRET.search(text), "a key-looking value is stored in the cassette"
    for interaction in cassette_format.load_interactions(str(cassette)):
        for headers in (interaction["request"]["headers"], interaction["response"]["headers"]):
            for value in _header(headers, "authorization"):
                assert value == PLACEHOLDER_AUTH
            assert not _header(headers, "x-api-key")


def test_serializer_roundtrips_vcr_dict() -> None:
    """What vcrpy hands over when recording comes back identical, bodies stored readably."""
    sse = 'event: ping\ndata: {"type": "ping"}   \n\nevent: message_stop\ndata: {}\n\n'
    cassette: dict[str, Any] = {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": "https://direct.evolink.ai/v1/messages",
                    "body": '{"model": "kimi-k3.1-pro", "messages": []}',
                    "headers": {"content-type": ["application/json"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": ["text/event-stream"]},
                    "body": {"string": sse},
                },
            },
            {
                "request": {
                    "method": "GET",
                    "uri": "https://direct.evolink.ai/health",
                    "body": None,
                    "headers": {},
                },
                "response": {
                    "status": {"code": 502, "message": "Bad Gateway"},
                    "headers": {},
                    "body": {"string": "upstream down"},
                },
            },
        ],
    }
    text = cassette_format.serialize(cassette)
    assert "json:\n" in text
    assert "sse:" in text
    assert "string: upstream down" in text
    assert not text.startswith("#"), "a recorded cassette claims no authored provenance"
    loaded = cassette_format.deserialize(text)
    assert loaded["interactions"][1] == cassette["interactions"][1]
    assert loaded["interactions"][0]["response"] == cassette["interactions"][0]["response"]
    body = loaded["interactions"][0]["request"]["body"]
    assert json.loads(body) == {"model": "kimi-k3.1-pro", "messages": []}


def test_record_hooks_scrub_keys() -> None:
    from vcr.request import Request  # type: ignore[import-untyped]

    # A fake key shaped like a real one, assembled here so that secret scanners stay quiet.
    fake_key = "sk-" + "abcdefghijklmnopqrstuvwxyz"
    request = Request(
        "POST",
        "https://direct.evolink.ai/v1/messages",
        b"{}",
        {"Authorization": f"Bearer {fake_key}", "X-Api-Key": "k"},
    )
    scrubbed = recording.scrub_request(request)
    assert scrubbed.headers["authorization"] == PLACEHOLDER_AUTH
    assert "x-api-key" not in scrubbed.headers
    response = {"headers": {"x-echo": [fake_key + "1234"], "date": ["now"]}}
    assert recording.scrub_response(response)["headers"] == {"date": ["now"]}


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("name", KEYS)
def test_record_hooks_scrub_a_key_echoed_in_any_encoding(
    name: str, encoding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vcr.request import Request

    key = KEYS[name]
    monkeypatch.setenv("EVOLINK_API_KEY", forms(key)["padded"] if encoding == "padded" else key)
    echoed = key if encoding == "padded" else forms(key)[encoding]
    request = Request(
        "POST",
        "https://direct.evolink.ai/v1/messages",
        b"{}",
        {"X-Proxy-Token": "t", "Cookie2": "c", "X-Echo": echoed},
    )
    assert recording.scrub_request(request).headers == {}
    error = '{"type": "error", "error": {"type": "authentication_error", "message": "bad %s"}}'
    response = {
        "headers": {"set-cookie": ["s=1"], "content-type": ["application/json"]},
        "body": {"string": (error % echoed).encode()},
    }
    scrubbed = recording.scrub_response(response)
    assert scrubbed["headers"] == {"content-type": ["application/json"]}
    assert leaks(scrubbed["body"]["string"].decode(), key) == []
    assert json.loads(scrubbed["body"]["string"])["error"]["type"] == "authentication_error"


def test_json_body_matcher() -> None:
    from vcr.request import Request

    def make(body: bytes) -> Request:
        return Request("POST", "https://direct.evolink.ai/v1/messages", body, {})

    cassette_format.json_body_matcher(make(b'{"a": 1, "b": [2]}'), make(b'{"b":[2],"a":1}'))
    with pytest.raises(AssertionError):
        cassette_format.json_body_matcher(make(b'{"a": 1}'), make(b'{"a": 1, "stream": true}'))
