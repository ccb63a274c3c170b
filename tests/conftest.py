"""Cassette replay (vcrpy through pytest-recording) and a placeholder environment.

Cassettes live in the top-level ``cassettes/<test module without "test_">/<test name>.yaml`` in
the readable "kimiyaml" format (``tests/cassette_format.py``). CI replays only (record mode
``none``: a missing cassette or an unmatched request fails, nothing reaches the network).
``VCR_RECORD_MODE=rewrite EVOLINK_API_KEY=... pytest --force-enable-socket`` re-records.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import vcr.request  # type: ignore[import-untyped]
from vcr import VCR

from langchain_kimi import ChatKimi
from tests import cassette_format
from tests.fake_gateway import PLACEHOLDER_KEY, FakeGateway, offline

CASSETTE_ROOT = Path(__file__).resolve().parent.parent / "cassettes"
PLACEHOLDER_AUTH = "Bearer <EVOLINK_API_KEY>"

_SECRET_HEADERS = ("authorization", "x-api-key", "api-key", "proxy-authorization")
_KEYLIKE = re.compile(r"(sk-[A-Za-z0-9_\-]{16,}|Bearer\s+\S{16,})")


def _record_mode() -> str:
    mode = os.environ.get("VCR_RECORD_MODE", "none")
    # pytest-recording maps "rewrite" to deleting `<name>.<serializer>`, which misses our
    # `.yaml` files; vcrpy's own "all" re-records every interaction and rewrites the file.
    return "all" if mode == "rewrite" else mode


def _scrub_request(request: vcr.request.Request) -> vcr.request.Request:
    for name in list(request.headers):
        lowered = name.lower()
        if lowered == "authorization":
            request.headers[name] = PLACEHOLDER_AUTH
        elif lowered in _SECRET_HEADERS or _KEYLIKE.search(str(request.headers[name])):
            del request.headers[name]
    return request


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers", {})
    for name in list(headers):
        values = headers[name] if isinstance(headers[name], list) else [headers[name]]
        if name.lower() in _SECRET_HEADERS or any(_KEYLIKE.search(str(v)) for v in values):
            del headers[name]
    return response


def pytest_recording_configure(config: pytest.Config, vcr: VCR) -> None:
    vcr.register_serializer("kimiyaml", cassette_format)
    vcr.register_matcher("json_body", cassette_format.json_body_matcher)


@pytest.fixture(scope="module")
def vcr_config() -> dict[str, Any]:
    return {
        "filter_headers": [("authorization", PLACEHOLDER_AUTH), ("x-api-key", None)],
        "record_mode": _record_mode(),
        "match_on": cassette_format.MATCH_ON,
        "decode_compressed_response": True,
        "serializer": "kimiyaml",
        # pytest-recording would otherwise name files after the serializer (`.kimiyaml`).
        "path_transformer": VCR.ensure_suffix(".yaml"),
        "before_record_request": _scrub_request,
        "before_record_response": _scrub_response,
    }


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    module = Path(str(request.node.fspath)).stem
    return str(CASSETTE_ROOT / module.removeprefix("test_"))


@pytest.fixture(autouse=True)
def _placeholder_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real key or base URL from the developer's shell leaks into a replayed test."""
    monkeypatch.delenv("EVOLINK_BASE_URL", raising=False)
    if _record_mode() == "none":
        monkeypatch.setenv("EVOLINK_API_KEY", PLACEHOLDER_KEY)


ReplayModel = Callable[..., ChatKimi]


@pytest.fixture
def replay_model() -> ReplayModel:
    """`replay_model(protocol, model="kimi-k3.1-pro", **fields)`: a ChatKimi for cassette tests.

    The placeholder key on replay (the real `EVOLINK_API_KEY` when re-recording) and
    `max_retries=0`: each request is exactly one recorded interaction, so a cassette that does
    not match fails at once instead of being retried. Fields override every default.
    """

    def make(protocol: str, model: str = "kimi-k3.1-pro", **fields: Any) -> ChatKimi:
        key = os.environ["EVOLINK_API_KEY"] if _record_mode() != "none" else PLACEHOLDER_KEY
        settings: dict[str, Any] = {
            "model": model,
            "protocol": protocol,
            "api_key": key,
            "max_retries": 0,
        }
        return ChatKimi(**{**settings, **fields})

    return make


@pytest.fixture
def gateway() -> FakeGateway:
    """A fresh fake gateway (tests/fake_gateway.py): `gateway.model(protocol, model, **fields)`
    talks to it, `gateway.bodies` holds what was sent."""
    return FakeGateway()


@pytest.fixture
def offline_model() -> Callable[..., ChatKimi]:
    """`offline_model(protocol, model, **fields)`: a ChatKimi that fails the test if it sends."""
    return offline
