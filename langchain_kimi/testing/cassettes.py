"""The `kimi_cassette` fixture's recorder: vcrpy, set up for Kimi calls and for secrets.

Record once with a key, replay offline for ever: requests match on method, path and JSON body
(the base URL may differ between recording and replay). Before anything is written, the key
(`EVOLINK_API_KEY` and any bearer token the calls sent), `Authorization`, `x-api-key` and
cookies leave the request and response headers, and every echo of the key leaves the bodies and
header values, raw, JSON-escaped or URL-encoded; the written file is read back and deleted if a
key still shows. In replay, a request with no recording fails the test with how to record it.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import vcr  # type: ignore[import-untyped]
from vcr.cassette import Cassette  # type: ignore[import-untyped]

KEY_ENV = "EVOLINK_API_KEY"
REPLAY_KEY = "kimi-cassette-replay-key"
"""The key replayed tests see in `EVOLINK_API_KEY` (nothing is sent anywhere)."""
SCRUBBED = "<EVOLINK_API_KEY>"
_SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "api-key", "proxy-authorization", "cookie", "set-cookie"}
)
_MATCH_ON = ("method", "path", "kimi_json_body")


class NoRecordingError(AssertionError):
    """A replayed test sent a request its cassette holds no recording for."""


@dataclass
class Secrets:
    """The secrets of one recording: the key from the environment and every bearer token sent."""

    values: set[str] = field(default_factory=set)

    def add(self, value: str | None) -> None:
        if value and len(value) >= 8:  # shorter strings would corrupt unrelated text
            self.values.add(value)

    def forms(self) -> list[str]:
        """Each secret as it may appear: raw, JSON-escaped, URL-encoded (longest first)."""
        found: set[str] = set()
        for value in self.values:
            escaped = json.dumps(value)[1:-1]
            found |= {
                value,
                escaped,
                escaped.replace("/", "\\/"),
                quote(value, safe=""),
                quote_plus(value),
            }
        return sorted(found, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for form in self.forms():
            text = text.replace(form, SCRUBBED)
        return text

    def scrub_body(self, body: Any) -> Any:
        if isinstance(body, bytes):
            return (
                self.scrub(body.decode("utf-8", "replace")).encode("utf-8")
                if self._in(body)
                else body
            )
        return self.scrub(body) if isinstance(body, str) else body

    def _in(self, body: bytes) -> bool:
        return any(form.encode("utf-8") in body for form in self.forms())


@dataclass(frozen=True)
class Plan:
    path: Path
    record: bool
    nodeid: str


def cassette_path(rootdir: Path, module_path: Path, nodeid: str) -> Path:
    """`<rootdir>/tests/cassettes/<module>/<test>.yaml`; a test in a class is `<Class>.<test>`,
    parameters are kept (`test_x[a-1]` -> `test_x_a-1`)."""
    test = nodeid.split("::", 1)[-1].replace("::", ".")
    name = re.sub(r"[^\w.\-]+", "_", test).strip("_")
    return rootdir / "tests" / "cassettes" / module_path.stem / f"{name}.yaml"


def plan(rootdir: Path, module_path: Path, nodeid: str, *, force_record: bool) -> Plan:
    path = cassette_path(rootdir, module_path, nodeid)
    has_key = bool(os.environ.get(KEY_ENV))
    if force_record and not has_key:
        raise NoRecordingError(f"--kimi-record needs {KEY_ENV} set: it calls the real service")
    return Plan(path=path, record=force_record or (has_key and not path.exists()), nodeid=nodeid)


def _json_body_matcher(r1: Any, r2: Any) -> None:
    def parse(body: Any) -> Any:
        if isinstance(body, bytes):
            body = body.decode("utf-8")
        try:
            return json.loads(body) if body else None
        except ValueError:
            return body

    if parse(r1.body) != parse(r2.body):
        raise AssertionError("request bodies differ")


class _KimiCassette(Cassette):  # type: ignore[misc]
    """Replay: a request without a recording raises `NoRecordingError` (vcrpy's own error names no
    way out); nothing is sent."""

    replay_hint = ""

    def can_play_response_for(self, request: Any) -> bool:
        playable = bool(super().can_play_response_for(request))
        if not playable and self.write_protected:
            raise NoRecordingError(
                f"kimi_cassette: no recording of {request.method} {request.path} in {self._path}"
                f" (or the request body changed since it was recorded). {self.replay_hint}"
            )
        return playable


@contextmanager
def use(plan: Plan) -> Iterator[Any]:
    """Record (`plan.record`) or replay `plan.path` around a test."""
    secrets = Secrets()
    secrets.add(os.environ.get(KEY_ENV))

    def before_request(request: Any) -> Any:
        for name in list(request.headers):
            if name.lower() == "authorization":
                secrets.add(str(request.headers[name]).removeprefix("Bearer ").strip())
            if name.lower() in _SECRET_HEADERS:
                del request.headers[name]
        for name in list(request.headers):
            request.headers[name] = secrets.scrub(str(request.headers[name]))
        request.uri = secrets.scrub(request.uri)
        request.body = secrets.scrub_body(request.body)
        return request

    def before_response(response: dict[str, Any]) -> dict[str, Any]:
        headers = response.get("headers", {})
        for name in list(headers):
            if name.lower() in _SECRET_HEADERS:
                del headers[name]
            else:
                headers[name] = [secrets.scrub(str(v)) for v in _as_list(headers[name])]
        body = response.get("body", {})
        if isinstance(body, dict) and "string" in body:
            scrubbed = secrets.scrub_body(body["string"])
            if scrubbed is not body["string"]:  # the recorded length must match the new body
                body["string"] = scrubbed
                for name in [n for n in headers if n.lower() == "content-length"]:
                    headers[name] = [str(len(_as_bytes(scrubbed)))]
        return response

    recorder = vcr.VCR(
        record_mode="all" if plan.record else "none",
        match_on=_MATCH_ON,
        decode_compressed_response=True,
        before_record_request=before_request,
        before_record_response=before_response,
    )
    recorder.register_matcher("kimi_json_body", _json_body_matcher)
    if not plan.record and not plan.path.exists():
        raise NoRecordingError(f"kimi_cassette: no cassette {plan.path}. {_how_to_record(plan)}")
    config = recorder.get_merged_config(path=str(plan.path))
    cassette_class: Any = type(
        "KimiCassette", (_KimiCassette,), {"replay_hint": _how_to_record(plan)}
    )
    with cassette_class.use(**config) as cassette:
        yield cassette
    if plan.record and plan.path.exists():
        _check_no_secret(plan.path, secrets)


def discard(plan: Plan) -> None:
    """Delete a recording (its test failed), saying so."""
    if plan.path.exists():
        plan.path.unlink()
        warnings.warn(
            f"kimi_cassette: {plan.nodeid} failed while recording; {plan.path} was not kept",
            stacklevel=1,
        )


def _as_bytes(body: Any) -> bytes:
    return body if isinstance(body, bytes) else str(body).encode("utf-8")


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _how_to_record(plan: Plan) -> str:
    return f"Record it with a key: {KEY_ENV}=... pytest --kimi-record '{plan.nodeid}'"


def _check_no_secret(path: Path, secrets: Secrets) -> None:
    text = path.read_text(encoding="utf-8")
    if any(form in text for form in secrets.forms()):
        path.unlink()
        raise AssertionError(f"kimi_cassette: {path} held the API key; it was deleted")
