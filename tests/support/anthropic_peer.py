"""ChatAnthropic (the peer, an oracle) talking to an in-memory handler or to a FakeKimiGateway.

The anthropic SDK speaks `httpx2`, not `httpx`: its client takes an `httpx2.MockTransport`.
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import httpx2
from langchain_anthropic import ChatAnthropic

from langchain_kimi.testing import FakeKimiGateway

PEER_KEY = "test-key-not-real"

TEXT_REPLY: dict[str, Any] = {
    "id": "msg_peer_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-x",
    "content": [{"type": "text", "text": "Hi."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
"""A documented Messages reply with one text block."""


def recording_chat_anthropic(sent: list[httpx2.Request], **fields: Any) -> ChatAnthropic:
    """A ChatAnthropic whose every request lands in `sent` and gets `TEXT_REPLY`."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        request.read()
        sent.append(request)
        return httpx2.Response(200, json=TEXT_REPLY)

    peer = ChatAnthropic(model="claude-x", api_key=PEER_KEY, max_retries=0, **fields)  # type: ignore[call-arg]
    client = httpx2.Client(transport=httpx2.MockTransport(answer))
    peer.__dict__["_client"] = anthropic.Anthropic(api_key=PEER_KEY, http_client=client)
    return peer


def chat_anthropic_on(gateway: FakeKimiGateway, model: str = "kimi-k3.1-pro") -> ChatAnthropic:
    """A ChatAnthropic served by a `FakeKimiGateway` (its Messages replies and checks): each
    `httpx2` request is handed to the gateway's `httpx` transport, with the bearer key the
    gateway asks for (ChatAnthropic sends `x-api-key`)."""

    def forward(request: httpx2.Request) -> httpx2.Response:
        request.read()
        headers = {"content-type": "application/json", "authorization": f"Bearer {PEER_KEY}"}
        reply = gateway.transport.handle_request(
            httpx.Request("POST", str(request.url), headers=headers, content=request.content)
        )
        reply.read()
        content_type = reply.headers.get("content-type", "application/json")
        return httpx2.Response(
            reply.status_code, headers={"content-type": content_type}, content=reply.content
        )

    peer = ChatAnthropic(model=model, api_key=PEER_KEY, max_retries=0)  # type: ignore[call-arg]
    client = httpx2.Client(transport=httpx2.MockTransport(forward))
    peer.__dict__["_client"] = anthropic.Anthropic(
        api_key=PEER_KEY, base_url="https://direct.evolink.ai", http_client=client
    )
    return peer
