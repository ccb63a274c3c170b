"""Thin conveniences over the public `FakeKimiGateway`, the project's one fake gateway: a model
answering "ok" to every request, and one that fails the test if anything is sent."""

from __future__ import annotations

from typing import Any

from langchain_kimi import ChatKimi
from langchain_kimi.testing import FakeKimiGateway

PLACEHOLDER_KEY = "test-key-not-real"
"""The key the replayed tests see in `EVOLINK_API_KEY` (never a real one)."""
K31 = "kimi-k3.1-pro"


def answering(text: str = "ok", **gateway: Any) -> FakeKimiGateway:
    """A gateway answering `text` to every request (one repeating reply)."""
    return FakeKimiGateway(**gateway).add_reply(text=text, repeat=True)


def offline(**fields: Any) -> ChatKimi:
    """A ChatKimi whose gateway fails the test if anything is sent (recorded first). Its retries
    stay at ChatKimi's default, so a refusal cannot hide behind "no retries configured"."""
    return FakeKimiGateway(offline=True).chat_model(**{"max_retries": 2, **fields})


def only_request(gw: FakeKimiGateway) -> dict[str, Any]:
    """The body of the one request sent (fails unless exactly one was)."""
    assert len(gw.requests) == 1, f"{len(gw.requests)} requests were sent"
    return gw.requests[0]
