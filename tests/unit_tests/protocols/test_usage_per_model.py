"""Usage per model x protocol, as the published documents define it (issue 11 items 1 and 9).

000 (K3.1, Messages) `input_tokens`: "Tokens de entrada normal, excluidas lecturas y escrituras de
caché. Las tres categorías son excluyentes" -> all input = plain + reads + writes.
001 (kimi-k3, Messages) `input_tokens`: "Tokens de entrada no servidos desde caché" -> cache writes
are not served from cache, so they are already inside `input_tokens`: all input = plain + reads.
004 (Chat Completions) `cache_write_tokens`: "La serie K3.1 los factura por separado sin volver a
cobrarlos como entrada normal; `kimi-k3` no los distingue y los factura como entrada normal" ->
kimi-k3's writes are not reported as `cache_creation` (they would be priced as cache writes).
The raw usage stays in `response_metadata` (`usage` / `token_usage`, as ChatAnthropic / ChatOpenAI).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessageChunk

from langchain_kimi import ChatKimi
from langchain_kimi._request.profiles import K3, K31_PRO
from langchain_kimi.protocols.anthropic_messages import parse_response as parse_messages
from langchain_kimi.protocols.anthropic_messages.stream import StreamDecoder as MessagesDecoder
from langchain_kimi.protocols.openai_chat import parse_response as parse_chat
from langchain_kimi.protocols.openai_chat.stream import StreamDecoder as ChatDecoder
from tests.support.messages_stream import aggregate
from tests.support.wire import ANTHROPIC_OK, OPENAI_OK
from tools.schema_validation import validate_response

# Issue 31: each test also runs on replies without the optional keys that say nothing.
pytestmark = pytest.mark.usefixtures("both_reply_forms")

MESSAGES_USAGE = {
    "input_tokens": 100,
    "cache_read_input_tokens": 30,
    "cache_creation_input_tokens": 20,
    "output_tokens": 7,
}
CHAT_USAGE = {
    "prompt_tokens": 150,
    "completion_tokens": 7,
    "total_tokens": 157,
    "prompt_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 20},
}


def messages_body(model: str, usage: dict[str, Any]) -> dict[str, Any]:
    body = {**ANTHROPIC_OK, "id": "msg_u", "model": model, "usage": usage}
    validate_response(body, "anthropic", model)
    return body


def chat_body(model: str, usage: dict[str, Any]) -> dict[str, Any]:
    body = {**OPENAI_OK, "model": model, "usage": usage}
    validate_response(body, "openai", model)
    return body


def messages_stream(model: str, usage: dict[str, Any]) -> list[tuple[str, str]]:
    head = {"id": "msg_u", "model": model, "content": [], "usage": {"input_tokens": 1}}
    text = {"type": "text", "text": "ok"}  # the whole text in the start event (no deltas)
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": head},
        {"type": "content_block_start", "index": 0, "content_block": text},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage},
        {"type": "message_stop"},
    ]
    return [(event["type"], json.dumps(event)) for event in events]


def chat_stream(model: str, usage: dict[str, Any]) -> list[tuple[str, str]]:
    head = {"id": "chatcmpl-u", "object": "chat.completion.chunk", "created": 1, "model": model}
    deltas = [({"role": "assistant", "content": "ok"}, None), ({}, "stop")]
    payloads: list[dict[str, Any]] = [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        for delta, finish in deltas
    ]
    payloads[-1]["usage"] = usage
    return [*(("", json.dumps(p)) for p in payloads), ("", "[DONE]")]


def streamed(decoder: Any, events: list[tuple[str, str]]) -> AIMessageChunk:
    chunks = [c for event, data in events for c in decoder.feed(event, data)]
    return aggregate([*chunks, *decoder.finish()])


@pytest.mark.parametrize("style", ["invoke", "stream"])
@pytest.mark.parametrize(
    ("model", "input_tokens", "details"),
    [
        # 001: `input_tokens` are "no servidos desde caché" (writes included) + 30 cache reads.
        (K3, 130, {"cache_read": 30}),
        # 000: "Las tres categorías son excluyentes" -> 100 + 30 + 20.
        (K31_PRO, 150, {"cache_read": 30, "cache_creation": 20}),
    ],
)
def test_messages_usage_per_model(
    style: str, model: str, input_tokens: int, details: dict[str, int]
) -> None:
    if style == "invoke":
        message: Any = parse_messages(messages_body(model, MESSAGES_USAGE))
    else:
        message = streamed(MessagesDecoder(), messages_stream(model, MESSAGES_USAGE))
    assert message.usage_metadata == {
        "input_tokens": input_tokens,
        "output_tokens": 7,
        "total_tokens": input_tokens + 7,
        "input_token_details": details,
    }
    assert message.response_metadata["usage"] == MESSAGES_USAGE


@pytest.mark.parametrize("style", ["invoke", "stream"])
@pytest.mark.parametrize(
    ("model", "details"),
    [
        (K3, {"cache_read": 30}),
        (K31_PRO, {"cache_read": 30, "cache_creation": 20}),
    ],
)
def test_chat_cache_writes_per_model(style: str, model: str, details: dict[str, int]) -> None:
    if style == "invoke":
        message: Any = parse_chat(chat_body(model, CHAT_USAGE))
    else:
        message = streamed(ChatDecoder(), chat_stream(model, CHAT_USAGE))
    assert message.usage_metadata["input_tokens"] == 150  # prompt_tokens: all input, both models
    assert message.usage_metadata["input_token_details"] == details
    assert message.response_metadata["token_usage"] == CHAT_USAGE


def _peer_chat_anthropic(body: dict[str, Any]) -> Any:
    """ChatAnthropic's own parse of the same body (its SDK speaks another httpx)."""
    import anthropic
    from langchain_anthropic import ChatAnthropic

    peer = ChatAnthropic(model="claude-x", api_key="k")  # type: ignore[call-arg]
    result = peer._format_output(anthropic.types.Message.model_validate(body))
    message = result.generations[0].message
    # BaseChatModel.invoke merges llm_output into response_metadata the same way.
    message.response_metadata = {**(result.llm_output or {}), **message.response_metadata}
    return message


def _peer_chat_openai(client: httpx.Client) -> Any:
    import openai
    from langchain_openai import ChatOpenAI

    peer = ChatOpenAI(model="gpt-x", api_key="k", base_url="http://127.0.0.1:1/v1")  # type: ignore[arg-type]
    peer.client = openai.OpenAI(api_key="k", http_client=client).chat.completions
    return peer.invoke("hi")


@pytest.mark.parametrize(("protocol", "key"), [("anthropic", "usage"), ("openai", "token_usage")])
def test_raw_usage_matches_peer_keys(protocol: str, key: str) -> None:
    """ChatAnthropic keeps `usage`, ChatOpenAI `token_usage` in response_metadata: same here."""
    if protocol == "anthropic":
        body = messages_body(K31_PRO, MESSAGES_USAGE)
    else:
        body = chat_body(K31_PRO, CHAT_USAGE)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=body)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    ours = ChatKimi(model=K31_PRO, protocol=protocol, http_client=client).invoke("hi")
    theirs = _peer_chat_anthropic(body) if protocol == "anthropic" else _peer_chat_openai(client)
    assert ours.response_metadata[key] == body["usage"]
    # The peer fills the same key (its SDK adds the fields it knows as None, hence a subset).
    peer_usage = dict(theirs.response_metadata[key])
    assert {k: peer_usage[k] for k in body["usage"] if k.endswith("_tokens")} == {
        k: v for k, v in body["usage"].items() if k.endswith("_tokens")
    }


def _sse(events: list[tuple[str, str]]) -> str:
    return "".join(f"event: {e}\ndata: {d}\n\n" if e else f"data: {d}\n\n" for e, d in events)


def _without_model(body: dict[str, Any], reply_model: str | None) -> dict[str, Any]:
    if reply_model is None:
        return {k: v for k, v in body.items() if k != "model"}
    return {**body, "model": reply_model}


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
@pytest.mark.parametrize("style", ["invoke", "stream"])
@pytest.mark.parametrize(
    ("requested", "reply_model", "accounted_as"),
    [
        (K3, None, K3),  # the reply names no model: the requested one decides
        (K3, "kimi-k3-0901", K3),  # a dated id of the kimi-k3 family
        (K3, "evolink-route-7", K3),  # a name of no known family: the requested one decides
        (K31_PRO, "kimi-k3.1-pro-0901", K31_PRO),
        (K31_PRO, None, K31_PRO),
        # The reply names a known family: it served the call, its accounting applies.
        (K3, K31_PRO, K31_PRO),
        (K31_PRO, K3, K3),
    ],
)
def test_usage_accounting_follows_the_model_family(
    protocol: str, style: str, requested: str, reply_model: str | None, accounted_as: str
) -> None:
    from langchain_kimi.testing import FakeKimiGateway

    if protocol == "anthropic":
        body: Any = _without_model(messages_body(requested, MESSAGES_USAGE), reply_model)
        events = messages_stream(reply_model or "", MESSAGES_USAGE)
        expected = parse_messages(messages_body(accounted_as, MESSAGES_USAGE))
    else:
        body = _without_model(chat_body(requested, CHAT_USAGE), reply_model)
        events = chat_stream(reply_model or "", CHAT_USAGE)
        expected = parse_chat(chat_body(accounted_as, CHAT_USAGE))
    if reply_model is None:  # the stream's first event names no model either
        events = [
            (e, json.dumps(_drop_model(json.loads(d)))) if d != "[DONE]" else (e, d)
            for e, d in events
        ]
    gateway = FakeKimiGateway().add_raw(body if style == "invoke" else _sse(events))
    model = gateway.chat_model(protocol=protocol, model=requested)
    if style == "invoke":
        message: Any = model.invoke("hi")
    else:
        message = aggregate(list(model.stream("hi")))
    assert message.usage_metadata == expected.usage_metadata


def _drop_model(payload: dict[str, Any]) -> dict[str, Any]:
    payload.pop("model", None)
    if isinstance(payload.get("message"), dict):
        payload["message"].pop("model", None)
    return payload
