"""Messages replies keep `stop_reason`, `stop_sequence` and `model` in `response_metadata` as
ChatAnthropic gives them (issue 21 item 9), beside the normalised `finish_reason`, invoked and
streamed: code written for ChatAnthropic checks `response_metadata["stop_reason"] ==
"max_tokens"`. ChatAnthropic itself (its SDK over a mock transport) is the oracle."""

from __future__ import annotations

import json
import operator
from functools import reduce
from typing import Any

import anthropic
import httpx2
import pytest
from langchain_anthropic import ChatAnthropic

from langchain_kimi.testing import FakeKimiGateway

KEYS = ("stop_reason", "stop_sequence")


def _reply(stop_reason: str, stop_sequence: str | None) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "ok"}]
    if stop_reason == "tool_use":
        content.append({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}})
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "kimi-k3.1-pro",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": {"input_tokens": 3, "output_tokens": 2},
    }


def _sse(body: dict[str, Any]) -> str:
    start = {**body, "content": [], "stop_reason": None, "stop_sequence": None}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(body["content"]):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    delta = {"stop_reason": body["stop_reason"], "stop_sequence": body["stop_sequence"]}
    events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 2}})
    events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def _chat_anthropic(body: dict[str, Any], stream: bool) -> Any:
    def handler(_request: httpx2.Request) -> httpx2.Response:
        if stream:
            headers = {"content-type": "text/event-stream"}
            return httpx2.Response(200, text=_sse(body), headers=headers)
        return httpx2.Response(200, json=body)

    peer = ChatAnthropic(model="claude-x", api_key="k")  # type: ignore[call-arg,arg-type]
    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    peer.__dict__["_client"] = anthropic.Anthropic(api_key="k", http_client=client)
    if stream:
        return reduce(operator.add, peer.stream("hi"))
    return peer.invoke("hi")


def _chat_kimi(body: dict[str, Any], stream: bool) -> Any:
    gateway = FakeKimiGateway().add_raw(_sse(body) if stream else body)
    model = gateway.chat_model(protocol="anthropic")
    if stream:
        return reduce(operator.add, model.stream("hi"))
    return model.invoke("hi")


@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])
@pytest.mark.parametrize(
    ("stop_reason", "stop_sequence", "finish_reason"),
    [
        ("end_turn", None, "stop"),
        ("stop_sequence", "END", "stop"),
        ("max_tokens", None, "length"),
        ("tool_use", None, "tool_calls"),
    ],
)
def test_stop_reason_and_sequence_as_chat_anthropic_gives_them(
    stream: bool, stop_reason: str, stop_sequence: str | None, finish_reason: str
) -> None:
    body = _reply(stop_reason, stop_sequence)
    theirs = _chat_anthropic(body, stream).response_metadata
    ours = _chat_kimi(body, stream).response_metadata
    assert {k: theirs[k] for k in KEYS} == {
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
    }
    assert {k: ours[k] for k in KEYS} == {k: theirs[k] for k in KEYS}
    assert ours["finish_reason"] == finish_reason


@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])
def test_the_model_as_chat_anthropic_names_it(stream: bool) -> None:
    """ChatAnthropic's invoke gives the model as `model` and `model_name` (its stream only
    `model_name`); ChatKimi gives both, invoked and streamed, so that code reading either key
    works and an aggregated stream still equals the invoke result (issue 51 item 17)."""
    body = _reply("end_turn", None)
    theirs = _chat_anthropic(body, stream).response_metadata
    ours = _chat_kimi(body, stream).response_metadata
    peer_keys = {"model", "model_name"} if not stream else {"model_name"}
    assert {k: theirs[k] for k in peer_keys} == dict.fromkeys(peer_keys, "kimi-k3.1-pro")
    assert "model" not in theirs or not stream
    assert {k: ours[k] for k in ("model", "model_name")} == {
        "model": "kimi-k3.1-pro",
        "model_name": "kimi-k3.1-pro",
    }
