"""The `kimi_cassette` fixture's recorder: vcrpy, set up for Kimi calls and for secrets.

Record once with a key, replay offline for ever: requests match on method, path and JSON body
(the base URL may differ between recording and replay). Before anything is written, the
package's one scrubber (`_secrets.py`) removes the key (`EVOLINK_API_KEY` and any bearer token
the calls sent): credential-named headers (`Authorization`, `x-api-key`, cookies, ...) go whole,
and every echo of the key in a body, header value or URL is replaced, raw, JSON-escaped or
URL-encoded; the written file is read back and deleted if a key still shows. In replay, a
request with no recording fails the test with the nearest recorded request, a diff of the two
bodies and how to record it; an unreadable cassette names its file and line.
"""

from __future__ import annotations

import difflib
import hashlib
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
import yaml
from vcr.cassette import Cassette  # type: ignore[import-untyped]
from vcr.matchers import requests_match  # type: ignore[import-untyped]
from vcr.persisters.filesystem import (  # type: ignore[import-untyped]
    CassetteDecodeError,
    CassetteNotFoundError,
    FilesystemPersister,
)

from langchain_kimi._secrets import Scrubber, is_credential_name

KEY_ENV = "EVOLINK_API_KEY"
REPLAY_KEY = "kimi-cassette-replay-key"
"""The key replayed tests see in `EVOLINK_API_KEY` (nothing is sent anywhere)."""
_MATCH_ON = ("method", "path", "kimi_json_body")
_UNSAFE = re.compile(r"[^\w.\-\[\]]+")
"""Kept in a cassette's file name: word characters, `.`, `-` and the brackets of parameters."""
_MAX_NAME = 150
_MAX_DIFF_LINES = 60
_REPLAY_ADVICE = (
    "If your code changed this request on purpose, record the cassette again; if not, the diff"
    " shows what your code now sends differently (recording again would keep that bug)."
)


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


def cassette_path(rootdir: Path, nodeid: str) -> Path:
    """The test's own file, from its full node id: `tests/a/test_x.py::TestAgent::test_y[p-1]` ->
    `<rootdir>/tests/cassettes/a/test_x/TestAgent.test_y[p-1].yaml`. A module outside
    `<rootdir>/tests/` records under `tests/cassettes/@rootdir/<its path>/`. Characters a file
    name cannot hold become `_`, and then a hash of the node id keeps two tests apart."""
    module, _, test = nodeid.partition("::")
    parts = [
        "@parent" if part == ".." else _safe(part) for part in module.removesuffix(".py").split("/")
    ]
    parts = parts[1:] if parts[0] == "tests" and len(parts) > 1 else ["@rootdir", *parts]
    name = _safe(test.replace("::", ".")) or "module"
    if name != test.replace("::", ".") or len(name) > _MAX_NAME:
        digest = hashlib.sha256(nodeid.encode("utf-8")).hexdigest()[:8]
        name = f"{name[:_MAX_NAME]}~{digest}"
    return rootdir.joinpath("tests", "cassettes", *parts, f"{name}.yaml")


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text)


def plan(rootdir: Path, nodeid: str, *, force_record: bool) -> Plan:
    path = cassette_path(rootdir, nodeid)
    has_key = bool(os.environ.get(KEY_ENV))
    if force_record and not has_key:
        raise NoRecordingError(f"--kimi-record needs {KEY_ENV} set: it calls the real service")
    return Plan(path=path, record=force_record or (has_key and not path.exists()), nodeid=nodeid)


def _json_body_matcher(r1: Any, r2: Any) -> None:
    def parse(body: Any) -> Any:
        if isinstance(body, bytes):
            try:
                body = body.decode("utf-8")
            except UnicodeDecodeError:
                return body  # no text, so no JSON: compared byte for byte
        try:
            return json.loads(body) if body else None
        except ValueError:
            return body

    if parse(r1.body) != parse(r2.body):
        raise AssertionError("request bodies differ")


class UnreadableCassetteError(ValueError):
    """A cassette file that is not valid YAML or not a vcrpy cassette; names the file (and line)."""


class _Persister(FilesystemPersister):  # type: ignore[misc]
    """vcrpy's file persister, whose errors name the file: vcrpy's own say `"<unicode string>",
    line 71` (invalid YAML) or nothing (a broken encoding makes an empty cassette)."""

    @classmethod
    def load_cassette(cls, cassette_path: Any, serializer: Any) -> Any:
        try:
            return super().load_cassette(cassette_path, serializer)
        except CassetteNotFoundError:
            raise
        except (CassetteDecodeError, ValueError, KeyError, TypeError, yaml.YAMLError) as error:
            raise UnreadableCassetteError(
                f"kimi_cassette: cannot read {cassette_path}{_where(error)}. Restore it from"
                " version control, or delete it and record it again with a key."
            ) from error


class _FreshPersister(FilesystemPersister):  # type: ignore[misc]
    """Recording starts from an empty cassette: vcrpy's "all" mode would keep the old file's
    interactions this run did not send again (and could not start over an unreadable file)."""

    @classmethod
    def load_cassette(cls, cassette_path: Any, serializer: Any) -> Any:  # noqa: ARG003
        raise CassetteNotFoundError(cassette_path)


def _where(error: BaseException) -> str:
    """`, line 7, column 3: <the YAML problem>`, or why the file is not a vcrpy cassette."""
    yaml_error = error if isinstance(error, yaml.YAMLError) else error.__cause__
    mark = getattr(yaml_error, "problem_mark", None)
    if mark is not None:
        problem = getattr(yaml_error, "problem", None) or "invalid YAML"
        return f", line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return f": not a vcrpy cassette ({type(error).__name__}: {error})"


class _KimiCassette(Cassette):  # type: ignore[misc]
    """Replay: a request without a recording raises `NoRecordingError` with the nearest recorded
    request and a body diff (vcrpy's own error names no way out); nothing is sent."""

    replay_hint = ""

    def can_play_response_for(self, request: Any) -> bool:
        playable = bool(super().can_play_response_for(request))
        if not playable and self.write_protected:
            raise NoRecordingError(
                f"kimi_cassette: no recording of {request.method} {request.path} in {self._path}"
                f" (or the request body changed since it was recorded).\n"
                f"{self._nearest(self._before_record_request(request))}\n{_REPLAY_ADVICE}"
                f" {self.replay_hint}"
            )
        return playable

    def _nearest(self, sent: Any) -> str:
        """The recorded request closest to `sent` (same method and path first), with the diff."""
        replayed = [
            i for i, old in enumerate(self.requests) if requests_match(sent, old, self._match_on)
        ]
        if replayed:
            return (
                f"It matches recording #{replayed[0] + 1}, already replayed: the test sends this"
                f" request more times than when it was recorded ({len(replayed)})."
            )
        if not self.requests:
            return "The cassette holds no recording."
        sent_lines = _pretty_body(sent.body)
        index, closest = max(
            enumerate(self.requests),
            key=lambda item: (
                (item[1].method, item[1].path) == (sent.method, sent.path),
                difflib.SequenceMatcher(None, _pretty_body(item[1].body), sent_lines).ratio(),
            ),
        )
        diff = list(
            difflib.unified_diff(
                _pretty_body(closest.body), sent_lines, "recorded", "sent", n=2, lineterm=""
            )
        )
        if len(diff) > _MAX_DIFF_LINES:
            more = len(diff) - _MAX_DIFF_LINES
            diff = [*diff[:_MAX_DIFF_LINES], f"... ({more} more lines)"]
        return (
            f"Nearest recorded request: #{index + 1} of {len(self.requests)},"
            f" {closest.method} {closest.path}; its body (-) and the body sent (+):\n"
            + ("\n".join(diff) if diff else "(the bodies are the same)")
        )


def _pretty_body(body: Any) -> list[str]:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        return str(body).splitlines()
    return json.dumps(parsed, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


@contextmanager
def use(plan: Plan) -> Iterator[Any]:
    """Record (`plan.record`) or replay `plan.path` around a test."""
    secrets = Secrets(os.environ.get(KEY_ENV))
    cassette_class, config = _cassette(plan, _Scrubbing(secrets))
    with cassette_class.use(**config) as cassette:
        yield cassette
    if plan.record and plan.path.exists():
        _check_no_secret(plan.path, secrets)


class _Scrubbing:
    """vcrpy's hooks before it keeps a request or a response: the secrets go (vcrpy also runs
    the request hook on each replayed request before matching it)."""

    def __init__(self, secrets: Secrets) -> None:
        self.secrets = secrets

    def request(self, request: Any) -> Any:
        for name in list(request.headers):
            if name.lower() == "authorization":
                self.secrets.add_bearer(str(request.headers[name]))
            if is_credential_name(name):
                del request.headers[name]
            else:
                request.headers[name] = self.secrets.scrubber.text(str(request.headers[name]))
        request.uri = self.secrets.scrubber.url(request.uri)
        request.body = self.secrets.body(request.body)
        return request

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """`response` as vcrpy serializes it: `{"status", "headers", "body": {"string"}}`."""
        headers = response["headers"]
        for name in list(headers):
            if is_credential_name(name):
                del headers[name]
            else:
                cleaned = [self.secrets.scrubber.text(str(v)) for v in _as_list(headers[name])]
                headers[name] = cleaned
        body = response["body"]
        scrubbed = self.secrets.body(body["string"])
        if scrubbed is not body["string"]:  # the recorded length must match the new body
            body["string"] = scrubbed
            for name in [n for n in headers if n.lower() == "content-length"]:
                headers[name] = [str(len(_as_bytes(scrubbed)))]
        return response


def _cassette(plan: Plan, scrubbing: _Scrubbing) -> tuple[Any, dict[str, Any]]:
    """The cassette class and vcrpy's settings for `plan`; a replay without its file fails."""
    recorder = vcr.VCR(
        record_mode="all" if plan.record else "none",
        match_on=_MATCH_ON,
        decode_compressed_response=True,
        before_record_request=scrubbing.request,
        before_record_response=scrubbing.response,
    )
    recorder.register_matcher("kimi_json_body", _json_body_matcher)
    recorder.register_persister(_FreshPersister if plan.record else _Persister)
    if not plan.record and not plan.path.exists():
        raise NoRecordingError(f"kimi_cassette: no cassette {plan.path}. {_how_to_record(plan)}")
    config = recorder.get_merged_config(path=str(plan.path))
    cassette_class = type("KimiCassette", (_KimiCassette,), {"replay_hint": _how_to_record(plan)})
    return cassette_class, config


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
