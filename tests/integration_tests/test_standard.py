"""LangChain's standard integration suite, once per protocol, replayed from authored cassettes.

Cassettes: `cassettes/standard/<protocol>/<test name>.yaml`, written by
`python -m tools.authoring.write_standard` from request bodies written out by hand (vcr matches
the JSON body, so each test also checks what ChatKimi sends). Skips and xfails, with reasons,
are listed in `docs/standard-tests.md`.

Two suite inputs cannot come from a cassette and are pinned by fixtures here (the suite's tests
themselves are not overridden):
- the image tests download a PNG from GitHub with `httpx.get`: a 1x1 PNG is served instead;
- `tool_example_to_messages` (few-shot test) makes random `uuid4` tool call ids: a counter.
"""

from __future__ import annotations

import base64
import itertools
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from langchain_core.utils import function_calling

from tools.authoring._shared import IMAGE_URL, PNG_1X1
from tools.paths import CASSETTE_ROOT
from tools.standard_suite import KimiIntegrationSuite

pytestmark = pytest.mark.vcr


@pytest.fixture(scope="module")
def vcr_config(vcr_config: dict[str, Any]) -> dict[str, Any]:
    # test_stream_time hands one stream to pytest-benchmark, which runs it several rounds.
    return {**vcr_config, "allow_playback_repeats": True}


@pytest.fixture(scope="module")
def vcr_cassette_dir() -> str:
    return str(CASSETTE_ROOT / "standard")


@pytest.fixture
def default_cassette_name(request: pytest.FixtureRequest) -> str:
    protocol = getattr(request.cls, "protocol", "none")
    return f"{protocol}/{request.node.name}"


@pytest.fixture(autouse=True)
def _offline_suite_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    png = base64.b64decode(PNG_1X1)

    def fake_get(url: str, **_: Any) -> httpx.Response:
        assert url == IMAGE_URL, f"unexpected download {url}"
        return httpx.Response(200, content=png, request=httpx.Request("GET", url))

    monkeypatch.setattr(httpx, "get", fake_get)
    ids = (uuid.UUID(int=(0x4000 << 64) | (0x8000 << 48) | n) for n in itertools.count(1))
    monkeypatch.setattr(function_calling, "uuid", SimpleNamespace(uuid4=lambda: next(ids)))


class TestKimiOpenAIStandard(KimiIntegrationSuite):
    protocol = "openai"


class TestKimiAnthropicStandard(KimiIntegrationSuite):
    protocol = "anthropic"


def test_every_cassette_is_used() -> None:
    """No stale cassette: each file under cassettes/standard/ belongs to a collected test."""
    root = Path(CASSETTE_ROOT / "standard")
    names = {p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.yaml")}
    tests = {
        f"{cls.protocol}/{name}"
        for cls in (TestKimiOpenAIStandard, TestKimiAnthropicStandard)
        for name in dir(cls)
        if name.startswith("test_")
    }
    stale = {n for n in names if n.split("[")[0] not in tests}
    assert not stale, f"cassettes without a test: {sorted(stale)}"
