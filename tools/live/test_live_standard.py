"""LangChain's standard integration suites, live: one class per model x protocol.

The same suite, flags and usage helpers as the replayed `tests/integration_tests/test_standard.py`,
but sent to the gateway in `EVOLINK_BASE_URL` (or the default) with the caller's key: no
cassette, no pinned download, no pinned tool-call ids.
"""

from __future__ import annotations

from typing import Any

import pytest

from langchain_kimi._request.profiles import capabilities
from tools.live.rows import models, protocols
from tools.standard_suite import KimiIntegrationSuite

pytestmark = pytest.mark.live


class _LiveSuite(KimiIntegrationSuite):
    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"model": self.model_id, "protocol": self.protocol}

    @property
    def enable_vcr_tests(self) -> bool:
        return False

    @property
    def supported_usage_metadata_details(self) -> Any:
        details = ["reasoning_output", "cache_read_input"]
        if capabilities(self.model_id, self.protocol).cache_ttl:
            details.append("cache_creation_input")
        return {"invoke": list(details), "stream": list(details)}


def _class_name(model: str, protocol: str) -> str:
    return "TestLive_" + model.replace("-", "_").replace(".", "") + "_" + protocol


for _model in models():
    for _protocol in protocols():
        _name = _class_name(_model, _protocol)
        globals()[_name] = type(_name, (_LiveSuite,), {"model_id": _model, "protocol": _protocol})
