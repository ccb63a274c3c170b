"""Bad input gets a clear ValueError before any network call: one test per case.

Every model here uses an httpx transport that fails the test if it is ever called, so each case
also proves that nothing was sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel, ValidationError

from langchain_kimi import ChatKimi


def _never_called(request: httpx.Request) -> httpx.Response:
    pytest.fail(f"a request was sent: {request.method} {request.url}")


def _model(**fields: Any) -> ChatKimi:
    fields.setdefault("api_key", "test-key-not-real")
    fields.setdefault("max_retries", 0)
    return ChatKimi(
        http_client=httpx.Client(transport=httpx.MockTransport(_never_called)), **fields
    )


def _image(mime: str = "image/png") -> HumanMessage:
    return HumanMessage(
        content=[
            {"type": "text", "text": "what?"},
            {"type": "image", "base64": "AAAA", "mime_type": mime},
        ]
    )


def _video() -> HumanMessage:
    return HumanMessage(
        content=[
            {"type": "text", "text": "what?"},
            {"type": "video", "url": "https://x.test/v.mp4"},
        ]
    )


def _tool(name: str = "get_weather") -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "d",
            "parameters": {"type": "object", "properties": {}},
        },
    }


class _Weather(BaseModel):
    city: str


_orphan_history = [
    HumanMessage("weather?"),
    AIMessage("", tool_calls=[{"name": "get_weather", "args": {}, "id": "call_1"}]),
    ToolMessage("sunny", tool_call_id="call_unknown"),
]

# (case id, construct + call, fragment the message must contain)
CASES: list[tuple[str, Callable[[], object], str]] = [
    ("unknown protocol", lambda: ChatKimi(protocol="grpc", api_key="k"), "protocol"),
    ("empty message list", lambda: _model().invoke([]), "at least one message"),
    (
        "only a system message (anthropic)",
        lambda: _model(protocol="anthropic").invoke([SystemMessage("s")]),
        "message",
    ),
    ("max_tokens zero field", lambda: _model(max_tokens=0), "max_tokens"),
    ("max_tokens too large field", lambda: _model(max_tokens=1_048_577), "max_tokens"),
    ("max_tokens zero per call", lambda: _model().invoke("hi", max_tokens=0), "max_tokens"),
    (
        "max_tokens too large per call (anthropic)",
        lambda: _model(protocol="anthropic").invoke("hi", max_tokens=2_000_000),
        "max_tokens",
    ),
    ("max_tokens not an int", lambda: _model().invoke("hi", max_tokens="many"), "max_tokens"),
    ("129 tools", lambda: _model().bind_tools([_tool(f"t{i}") for i in range(129)]), "128"),
    (
        "129 tools per call",
        lambda: _model().invoke("hi", tools=[_tool(f"t{i}") for i in range(129)]),
        "128",
    ),
    (
        "tool schema not an object",
        lambda: _model().bind_tools([{"name": "x", "input_schema": {"type": "string"}}]),
        "object",
    ),
    (
        "tool schema not a dict",
        lambda: _model().bind_tools([{"name": "x", "input_schema": "nope"}]),
        "schema",
    ),
    ("unknown tool string", lambda: _model().bind_tools(["calculator"]), "calculator"),
    (
        "web search max_uses zero",
        lambda: _model().bind_tools(
            [{"type": "web_search_20250305", "name": "web_search", "max_uses": 0}]
        ),
        "max_uses",
    ),
    (
        "tool_choice names an unbound tool",
        lambda: _model().bind_tools([_tool()], tool_choice="get_time"),
        "get_time",
    ),
    (
        "tool_choice unsupported value",
        lambda: _model().bind_tools([_tool()], tool_choice=3.5),
        "tool_choice",
    ),
    ("bad effort value", lambda: _model(reasoning_effort="extreme"), "reasoning_effort"),
    (
        "effort low on kimi-k3 (openai)",
        lambda: _model(model="kimi-k3", reasoning_effort="low"),
        "kimi-k3",
    ),
    (
        "effort alias medium on kimi-k3 per call",
        lambda: _model(model="kimi-k3", protocol="anthropic").invoke("hi", effort="medium"),
        "max",
    ),
    ("bad cache ttl", lambda: _model(cache_ttl="2h"), "ttl"),
    ("cache ttl on kimi-k3 (openai)", lambda: _model(model="kimi-k3", cache_ttl="1h"), "cache"),
    (
        "cache ttl on kimi-k3 per call (anthropic)",
        lambda: _model(model="kimi-k3", protocol="anthropic").invoke("hi", cache_ttl="5m"),
        "cache",
    ),
    (
        "six stop sequences on K3.1 anthropic",
        lambda: _model(protocol="anthropic").invoke("hi", stop=list("abcdef")),
        "at most 5",
    ),
    (
        "stop sequence over 32 bytes",
        lambda: _model(protocol="anthropic").invoke("hi", stop=["é" * 17]),
        "32",
    ),
    ("empty stop string", lambda: _model().invoke("hi", stop=[""]), "stop"),
    ("temperature 0.2 on kimi-k3", lambda: _model(model="kimi-k3", temperature=0.2), "temperature"),
    (
        "top_p 0.5 on kimi-k3 per call",
        lambda: _model(model="kimi-k3").invoke("hi", top_p=0.5),
        "top_p",
    ),
    ("video on anthropic", lambda: _model(protocol="anthropic").invoke([_video()]), "video"),
    (
        "image on kimi-k3 anthropic",
        lambda: _model(model="kimi-k3", protocol="anthropic").invoke([_image()]),
        "image",
    ),
    (
        "unsupported image type on anthropic",
        lambda: _model(protocol="anthropic").invoke([_image("image/bmp")]),
        "image/bmp",
    ),
    (
        "web search on kimi-k3 anthropic",
        lambda: _model(model="kimi-k3", protocol="anthropic").bind_tools(["web_search"]),
        "web search",
    ),
    (
        "json mode on anthropic without schema",
        lambda: _model(protocol="anthropic").with_structured_output(None, method="json_mode"),
        "json mode",
    ),
    (
        "json_object response_format on anthropic",
        lambda: _model(protocol="anthropic").invoke("hi", response_format={"type": "json_object"}),
        "JSON mode",
    ),
    (
        "structured output method unknown",
        lambda: _model().with_structured_output(_Weather, method="xml"),
        "method",
    ),
    ("json_schema without a schema", lambda: _model().with_structured_output(None), "schema"),
    (
        "tool message answering no call (openai)",
        lambda: _model().invoke(_orphan_history),
        "call_unknown",
    ),
    (
        "tool message answering no call (anthropic)",
        lambda: _model(protocol="anthropic").invoke(_orphan_history),
        "call_unknown",
    ),
    ("unknown call kwarg", lambda: _model().invoke("hi", frequency_penalty=1), "extra_body"),
    ("negative max_retries", lambda: _model(max_retries=-1), "max_retries"),
    ("zero max_builtin_rounds", lambda: _model(max_builtin_rounds=0), "max_builtin_rounds"),
    (
        "insecure http base url",
        lambda: ChatKimi(api_key="k", base_url="http://gateway.example.com").invoke("hi"),
        "http",
    ),
]


@pytest.mark.parametrize(("case", "call", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_refused_before_sending(case: str, call: Callable[[], object], fragment: str) -> None:
    with pytest.raises((ValueError, ValidationError)) as info:
        call()
    assert fragment.lower() in str(info.value).lower(), f"{case}: unclear message {info.value}"


def test_there_are_at_least_thirty_cases() -> None:
    assert len(CASES) >= 30


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    model = ChatKimi(http_client=httpx.Client(transport=httpx.MockTransport(_never_called)))
    with pytest.raises(ValueError, match="EVOLINK_API_KEY"):
        model.invoke("hi")
