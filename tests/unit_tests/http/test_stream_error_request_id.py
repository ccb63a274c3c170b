"""A stream that fails after its 200 headers still names the request: the gateway's request id
(from the `x-request-id` / `request-id` header) is on every error the stream raises — a cut, an
unreadable event, an error event without an id of its own — sync and async, both protocols.
"""

from __future__ import annotations

from typing import Any

import pytest

from langchain_kimi import KimiError, KimiStreamError
from langchain_kimi.testing import FakeKimiGateway

REQUEST_ID = "req-stream-42"

CUT = {
    "openai": b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"kimi-k3",'
    b'"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n',
    "anthropic": b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1",'
    b'"type":"message","role":"assistant","model":"kimi-k3","content":[],"usage":{}}}\n\n',
}
UNREADABLE = {
    "openai": b'data: {"choices":[{"delta":{"tool_calls":7}}]}\n\n',
    "anthropic": b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    b'"content_block":{"type":"text","text":7}}\n\n',
}
ERROR_EVENT = {
    "openai": b'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n',
    "anthropic": b'event: error\ndata: {"type":"error","error":{"type":"api_error",'
    b'"message":"overloaded"}}\n\n',
}


def _model(protocol: str, raw: bytes, header: str) -> Any:
    headers = {"content-type": "text/event-stream", header: REQUEST_ID}
    gateway = FakeKimiGateway().add_raw(raw, headers=headers, repeat=True)
    return gateway.chat_model(protocol=protocol)


@pytest.mark.parametrize("header", ["x-request-id", "request-id"])
@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("case", "expected"),
    [("cut", KimiStreamError), ("unreadable", KimiStreamError), ("error event", KimiError)],
)
async def test_a_failed_stream_carries_the_request_id(
    protocol: str, header: str, case: str, expected: type[KimiError]
) -> None:
    raw = {"cut": CUT, "unreadable": UNREADABLE, "error event": ERROR_EVENT}[case][protocol]
    model = _model(protocol, raw, header)
    with pytest.raises(expected) as sync_error:
        for _ in model.stream("hi"):
            pass
    with pytest.raises(expected) as async_error:
        async for _ in model.astream("hi"):
            pass
    for error in (sync_error.value, async_error.value):
        assert error.request_id == REQUEST_ID
        assert f"request id {REQUEST_ID}" in str(error)
