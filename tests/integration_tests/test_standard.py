"""LangChain's standard integration suite, once per protocol, replayed from authored cassettes.

Cassettes: `cassettes/standard/<protocol>/<test name>.yaml`, written by
`python -m tests.authoring.write_standard` from request bodies written out by hand (vcr matches
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
import os
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.utils import function_calling
from langchain_tests.integration_tests import ChatModelIntegrationTests

from langchain_kimi import ChatKimi
from tests.authoring._shared import (
    CACHE_CONTEXT,
    CACHE_READ_PROMPT,
    CACHE_WRITE_PROMPT,
    IMAGE_URL,
    PNG_1X1,
    REASONING_PROMPT,
)
from tests.conftest import CASSETTE_ROOT, PLACEHOLDER_KEY
from tests.standard_flags import KimiStandardFlags

pytestmark = pytest.mark.vcr


def _api_key() -> str:
    recording = os.environ.get("VCR_RECORD_MODE", "none") != "none"
    return os.environ["EVOLINK_API_KEY"] if recording else PLACEHOLDER_KEY


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


class _KimiIntegrationTests(KimiStandardFlags, ChatModelIntegrationTests):
    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"model": "kimi-k3.1-pro", "protocol": self.protocol, "api_key": _api_key()}

    @property
    def enable_vcr_tests(self) -> bool:
        return True

    @property
    def model_override_value(self) -> str:
        return "kimi-k3.1-pro-highspeed"

    @property
    def supported_usage_metadata_details(self) -> Any:
        details = ["reasoning_output", "cache_read_input", "cache_creation_input"]
        return {"invoke": list(details), "stream": list(details)}

    # --- the suite's usage-detail helpers: each one call with its own cassette interaction

    def _helper_model(self, **extra: Any) -> ChatKimi:
        return ChatKimi(**{**self.chat_model_params, **extra})

    @staticmethod
    def _call(model: ChatKimi, messages: list[BaseMessage], stream: bool) -> AIMessage:
        if not stream:
            return model.invoke(messages)
        chunks: list[AIMessageChunk] = list(model.stream(messages))
        total = chunks[0] + chunks[1:]
        return AIMessage(**total.model_dump(exclude={"type", "tool_call_chunks", "chunk_position"}))

    def invoke_with_reasoning_output(self, *, stream: bool = False) -> AIMessage:
        return self._call(self._helper_model(), [HumanMessage(REASONING_PROMPT)], stream)

    def invoke_with_cache_read_input(self, *, stream: bool = False) -> AIMessage:
        messages = [SystemMessage(CACHE_CONTEXT), HumanMessage(CACHE_READ_PROMPT)]
        return self._call(self._helper_model(), messages, stream)

    def invoke_with_cache_creation_input(self, *, stream: bool = False) -> AIMessage:
        # A 1h cache write (K3.1): the service reports it in the cache-write usage field.
        messages = [SystemMessage(CACHE_CONTEXT), HumanMessage(CACHE_WRITE_PROMPT)]
        return self._call(self._helper_model(cache_ttl="1h"), messages, stream)


class TestKimiOpenAIStandard(_KimiIntegrationTests):
    protocol = "openai"


class TestKimiAnthropicStandard(_KimiIntegrationTests):
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
