"""LangChain's standard integration suite with the Kimi flags and usage helpers, shared by the
replayed suite (`tests/integration_tests/test_standard.py`) and the live one
(`tools/live/test_live_standard.py`)."""

from __future__ import annotations

import os
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_tests.integration_tests import ChatModelIntegrationTests

from langchain_kimi import ChatKimi
from tools.authoring._shared import (
    CACHE_CONTEXT,
    CACHE_READ_PROMPT,
    CACHE_WRITE_PROMPT,
    REASONING_PROMPT,
)
from tools.standard_flags import KimiStandardFlags

PLACEHOLDER_KEY = "test-key-not-real"
"""The key of a replay: cassettes store no key (the authorization header is filtered)."""


def _api_key() -> str:
    recording = os.environ.get("VCR_RECORD_MODE", "none") != "none"
    return os.environ["EVOLINK_API_KEY"] if recording else PLACEHOLDER_KEY


class KimiIntegrationSuite(KimiStandardFlags, ChatModelIntegrationTests):
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
