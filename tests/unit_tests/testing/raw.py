"""Raw requests to a `FakeKimiGateway`'s transport: what the service would be sent, exactly."""

from __future__ import annotations

from typing import Any

import httpx

from langchain_kimi.testing import FakeKimiGateway

PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
MESSAGES_HEADERS = {"authorization": "Bearer k", "anthropic-version": "2023-06-01"}


def post(
    gw: FakeKimiGateway,
    protocol: str,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    """`body` posted to the gateway as a client would (Bearer key unless `headers` say else)."""
    with httpx.Client(transport=gw.transport) as client:
        return client.post(
            f"https://direct.evolink.ai{PATHS[protocol]}",
            json=body,
            headers=headers if headers is not None else {"authorization": "Bearer k"},
        )


def user(text: str, *, model: str = "kimi-k3.1-pro", protocol: str = "openai") -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": text}]}
    if protocol == "anthropic":
        body["max_tokens"] = 1024
    return body


def error_message(response: httpx.Response) -> str:
    return str(response.json()["error"]["message"])
