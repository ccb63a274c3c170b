"""The `kimi_cassette` fixture's recorder: vcrpy, set up for Kimi calls and for secrets.

Record once with a key, replay offline for ever: requests match on method, path and JSON body
(the base URL may differ between recording and replay). Before anything is written, the
package's one scrubber (`_secrets.py`) removes the key (`EVOLINK_API_KEY` and any bearer token
the calls sent): credential-named headers (`Authorization`, `x-api-key`, cookies, ...) go whole,
and every echo of the key in a body, header value or URL is replaced, raw, JSON-escaped or
URL-encoded; the written file is read back and deleted if a key still shows. In replay, a
request with no recording fails the test with how to record it.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import vcr  # type: ignore[import-untyped]
from vcr.cassette import Cassette  # type: ignore[import-untyped]

from langchain_kimi._secrets import Scrubber, is_credential_name

KEY_ENV = "EVOLINK_API_KEY"
REPLAY_KEY = "kimi-cassette-replay-key"
"""The key replayed tests see in `EVOLINK_API_KEY` (nothing is sent anywhere)."""
_MATCH_ON = ("method", "path", "kimi_json_body")


class NoRecordingError(AssertionError):
    """A replayed test sent a request its cassette holds no recording for."""


class Secrets:
    """The secrets of one recording (the key from the environment and every bearer token the
    calls sent), removed by the package's one scrubber: in any encoding, key-shaped strings too,
    credential-named headers whole."""

    def __init__(self, key: str | None) -> None:
        self.scrubber = Scrubber.for_key(key)

    def add_bearer(self, authorization: str) -> None:
        token = authorization.removeprefix("Bearer ").strip()
        if token and token not in self.scrubber.secrets:
            self.scrubber = Scrubber((*self.scrubber.secrets, token))

    def body(self, body: Any) -> Any:
        if isinstance(body, bytes):
            text = body.decode("utf-8", "replace")
            cleaned = self.scrubber.text(text)
            return body if cleaned == text else cleaned.encode("utf-8")
        return self.scrubber.text(body) if isinstance(body, str) else body


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
    secrets = Secrets(os.environ.get(KEY_ENV))

    def before_request(request: Any) -> Any:
        for name in list(request.headers):
            if name.lower() == "authorization":
                secrets.add_bearer(str(request.headers[name]))
            if is_credential_name(name):
                del request.headers[name]
            else:
                request.headers[name] = secrets.scrubber.text(str(request.headers[name]))
        request.uri = secrets.scrubber.url(request.uri)
        request.body = secrets.body(request.body)
        return request

    def before_response(response: dict[str, Any]) -> dict[str, Any]:
        headers = response.get("headers", {})
        for name in list(headers):
            if is_credential_name(name):
                del headers[name]
            else:
                headers[name] = [secrets.scrubber.text(str(v)) for v in _as_list(headers[name])]
        body = response.get("body", {})
        if isinstance(body, dict) and "string" in body:
            scrubbed = secrets.body(body["string"])
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
    if secrets.scrubber.text(text) != text:
        path.unlink()
        raise AssertionError(f"kimi_cassette: {path} held the API key; it was deleted")
