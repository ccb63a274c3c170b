"""Cassette replay (vcrpy through pytest-recording) and a placeholder environment.

Cassettes live in the top-level ``cassettes/<test module without "test_">/<test name>.yaml`` in
the readable "kimiyaml" format (``tools/cassette_format.py``). CI replays only (record mode
``none``: a missing cassette or an unmatched request fails, nothing reaches the network).
``VCR_RECORD_MODE=rewrite EVOLINK_API_KEY=... pytest --force-enable-socket`` re-records (the
settings and scrub hooks: ``tests/support/recording.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from vcr import VCR

from tests.support.gateways import PLACEHOLDER_KEY
from tests.support.recording import (
    PLACEHOLDER_AUTH,
    record_mode,
    scrub_request,
    scrub_response,
)
from tools import cassette_format
from tools.paths import CASSETTE_ROOT


def pytest_recording_configure(config: pytest.Config, vcr: VCR) -> None:
    vcr.register_serializer("kimiyaml", cassette_format)
    vcr.register_matcher("json_body", cassette_format.json_body_matcher)


@pytest.fixture(scope="module")
def vcr_config() -> dict[str, Any]:
    return {
        "filter_headers": [("authorization", PLACEHOLDER_AUTH), ("x-api-key", None)],
        "record_mode": record_mode(),
        "match_on": cassette_format.MATCH_ON,
        "decode_compressed_response": True,
        "serializer": "kimiyaml",
        # pytest-recording would otherwise name files after the serializer (`.kimiyaml`).
        "path_transformer": VCR.ensure_suffix(".yaml"),
        "before_record_request": scrub_request,
        "before_record_response": scrub_response,
    }


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    module = Path(str(request.node.fspath)).stem
    return str(CASSETTE_ROOT / module.removeprefix("test_"))


@pytest.fixture(autouse=True)
def _placeholder_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real key or base URL from the developer's shell leaks into a replayed test."""
    monkeypatch.delenv("EVOLINK_BASE_URL", raising=False)
    if record_mode() == "none":
        monkeypatch.setenv("EVOLINK_API_KEY", PLACEHOLDER_KEY)


@pytest.fixture(params=["full", "cut"])
def both_reply_forms(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test on the fake's default replies and again on replies cut to what the documents
    promise (`reply-optional-fields` strict), so a parser needing an optional key fails. A test
    choosing the row itself keeps its choice."""
    if request.param == "cut":
        from langchain_kimi.testing import FakeKimiGateway

        real = FakeKimiGateway.__init__

        def cut(self: FakeKimiGateway, *, assume: Any = None, **given: Any) -> None:
            real(self, assume={"reply-optional-fields": "strict", **(assume or {})}, **given)

        monkeypatch.setattr(FakeKimiGateway, "__init__", cut)
    return str(request.param)
