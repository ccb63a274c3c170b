"""The waits between the attempts of one call in the peers' own SDKs (`openai`, `anthropic`),
for a gateway that answers every request 429 with the given headers: the oracle for how long a
lone call's 429 waits.

Each SDK is driven whole (its client, its retry loop, its header parsing) against an in-memory
transport; only its sleep (the `time` module it reads) and its jitter draw (`random`) are
replaced, so the waits it asks for are recorded instead of slept. The SDKs use `httpx2`.
"""

from __future__ import annotations

import time
import types
from typing import Literal

import anthropic
import anthropic._base_client
import httpx2
import openai
import openai._base_client
import pytest

Jitter = Literal["none", "most"]
"""`none`: every backoff waited whole; `most`: cut by the most jitter takes off."""


def peer_waits(
    sdk: Literal["openai", "anthropic"],
    headers: dict[str, str],
    *,
    max_retries: int,
    jitter: Jitter,
    monkeypatch: pytest.MonkeyPatch,
) -> list[float]:
    """The seconds the SDK waits before each retry of one call refused 429 every time."""
    waits: list[float] = []
    base_client = openai._base_client if sdk == "openai" else anthropic._base_client
    # Both draw `random()` in [0, 1) and wait `backoff * (1 - 0.25 * draw)`.
    monkeypatch.setattr(base_client, "random", lambda: 0.0 if jitter == "none" else 1.0)
    monkeypatch.setattr(
        base_client, "time", types.SimpleNamespace(**{**vars(time), "sleep": waits.append})
    )

    def refuse(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(429, json={"error": {"message": "slow down"}}, headers=headers)

    http = httpx2.Client(transport=httpx2.MockTransport(refuse))
    messages = [{"role": "user", "content": "hi"}]
    if sdk == "openai":
        client = openai.OpenAI(
            api_key="k", base_url="http://peer/v1", http_client=http, max_retries=max_retries
        )
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    else:
        peer = anthropic.Anthropic(
            api_key="k", base_url="http://peer", http_client=http, max_retries=max_retries
        )
        with pytest.raises(anthropic.RateLimitError):
            peer.messages.create(model="m", max_tokens=1, messages=messages)  # type: ignore[arg-type]
    return waits
