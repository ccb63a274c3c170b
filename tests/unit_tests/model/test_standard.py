"""LangChain's standard unit suite, once per protocol."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_tests.unit_tests import ChatModelUnitTests

from langchain_kimi import ChatKimi
from tools.standard_flags import KimiStandardFlags


class _KimiUnitTests(KimiStandardFlags, ChatModelUnitTests):
    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"model": "kimi-k3.1-pro", "protocol": self.protocol, "api_key": "test"}

    @property
    def init_from_env_params(self) -> tuple[dict[str, str], dict[str, Any], dict[str, Any]]:
        return (
            {"EVOLINK_API_KEY": "env-key-not-real", "EVOLINK_BASE_URL": "https://example.test"},
            {"protocol": self.protocol},
            {"api_key": "env-key-not-real", "base_url": "https://example.test"},
        )

    # Only load()'s refusal is expected (a ValueError): the snapshot assertion before it must
    # pass, or its AssertionError fails the test instead of counting as the expected failure.
    @pytest.mark.xfail(
        reason="suite limitation: langchain-core's load() only deserializes classes on its own "
        "allow-list (core + listed partners); test_serialization_round_trip covers ChatKimi",
        raises=ValueError,
        strict=True,
    )
    def test_serdes(self, model: BaseChatModel, snapshot: Any) -> None:
        super().test_serdes(model, snapshot)


class TestKimiOpenAIUnit(_KimiUnitTests):
    protocol = "openai"


class TestKimiAnthropicUnit(_KimiUnitTests):
    protocol = "anthropic"


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_profile_comes_from_the_capability_table(protocol: str) -> None:
    model = ChatKimi(protocol=protocol, api_key="test")
    assert model.profile is not None
    assert model.profile["max_input_tokens"] == 1_048_576
    assert model.profile["reasoning_output"] is True
    assert model.profile["video_inputs"] is (protocol == "openai")


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_serialization_round_trip(protocol: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_core.load import dumpd, dumps, load

    monkeypatch.setenv("EVOLINK_API_KEY", "env-key-not-real")
    model = ChatKimi(protocol=protocol, reasoning_effort="low", cache_ttl="1h")
    assert "env-key-not-real" not in dumps(model)
    loaded = load(
        dumpd(model),
        allowed_objects=[ChatKimi],
        valid_namespaces=["langchain_kimi"],
        secrets_from_env=True,
    )
    assert isinstance(loaded, ChatKimi)
    assert loaded.model_dump() == model.model_dump()
    assert loaded.api_key is not None
    assert loaded.api_key.get_secret_value() == "env-key-not-real"
