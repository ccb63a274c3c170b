"""Fixtures of the integration tests: ChatKimi replaying the cassettes."""

from __future__ import annotations

import os
from typing import Any

import pytest

from langchain_kimi import ChatKimi
from tests.support.gateways import PLACEHOLDER_KEY
from tests.support.recording import ReplayModel, record_mode


@pytest.fixture
def replay_model() -> ReplayModel:
    """`replay_model(protocol, model="kimi-k3.1-pro", **fields)`: a ChatKimi for cassette tests.

    The placeholder key on replay (the real `EVOLINK_API_KEY` when re-recording) and
    `max_retries=0`: each request is exactly one recorded interaction, so a cassette that does
    not match fails at once instead of being retried. Fields override every default.
    """

    def make(protocol: str, model: str = "kimi-k3.1-pro", **fields: Any) -> ChatKimi:
        key = os.environ["EVOLINK_API_KEY"] if record_mode() != "none" else PLACEHOLDER_KEY
        settings: dict[str, Any] = {
            "model": model,
            "protocol": protocol,
            "api_key": key,
            "max_retries": 0,
        }
        return ChatKimi(**{**settings, **fields})

    return make
