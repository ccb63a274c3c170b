"""Bad input gets a clear ValueError before any network call: one test per case.

Every model here uses an offline `FakeKimiGateway` (`tests/support/gateways.py` `offline`), which
fails the test if anything is sent, so each case also proves that nothing was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel, ValidationError

from langchain_kimi import ChatKimi
from tests.support.gateways import offline

# Nothing may be sent: the transport of `_model` fails the test when called. Its retries stay at
# the default, so a refusal cannot hide behind "no retries configured".
_model = offline


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

# case -> (exception type, exact message). Fields refused at construction surface as pydantic's
# ValidationError (a ValueError) wrapping our message; call-time refusals are plain ValueErrors.
EXACT: dict[str, tuple[type[ValueError], str]] = {
    "unknown protocol": (ValidationError, "protocol must be 'openai' or 'anthropic', got 'grpc'"),
    "empty message list": (ValueError, "ChatKimi needs at least one message"),
    "only a system message (anthropic)": (
        ValueError,
        "at least one user or assistant message is required besides system messages",
    ),
    "max_tokens zero field": (ValidationError, "max_tokens must be between 1 and 1,048,576, got 0"),
    "max_tokens too large field": (
        ValidationError,
        "max_tokens must be between 1 and 1,048,576, got 1,048,577",
    ),
    "max_tokens zero per call": (ValueError, "max_tokens must be between 1 and 1,048,576, got 0"),
    "max_tokens too large per call (anthropic)": (
        ValueError,
        "max_tokens must be between 1 and 1,048,576, got 2,000,000",
    ),
    "max_tokens not an int": (ValueError, "max_tokens must be an integer, got 'many'"),
    "129 tools": (ValueError, "at most 128 tools may be bound on the openai protocol; got 129"),
    "129 tools per call": (
        ValueError,
        "at most 128 tools may be bound on the openai protocol; got 129",
    ),
    "tool schema not an object": (
        ValueError,
        "tool 'x': the parameters schema must have type 'object', got 'string'",
    ),
    "tool schema not a dict": (
        ValueError,
        "tool 'x': the parameters schema must be a JSON-schema object (a dict)",
    ),
    "unknown tool string": (
        ValueError,
        "unknown tool 'calculator': pass a tool object, a schema, or 'web_search'",
    ),
    "web search max_uses zero": (
        ValueError,
        "web_search max_uses must be a positive integer, got 0; the documented form is "
        '{"type": "web_search_20250305", "name": "web_search"} with an optional '
        '"max_uses": <int >= 1>',
    ),
    "tool_choice names an unbound tool": (
        ValueError,
        "tool_choice names 'get_time', which is not among the bound tools ['get_weather']",
    ),
    "tool_choice unsupported value": (ValueError, "unsupported tool_choice 3.5"),
    "bad effort value": (
        ValidationError,
        "reasoning_effort must be one of low, high, max, medium, xhigh, minimal, none; got 'extreme'",
    ),
    "effort low on kimi-k3 (openai)": (
        ValidationError,
        "kimi-k3 accepts reasoning_effort max only; got 'low'",
    ),
    "effort alias medium on kimi-k3 per call": (
        ValueError,
        "kimi-k3 accepts reasoning_effort max only; got 'medium' (= 'high')",
    ),
    "bad cache ttl": (ValidationError, "Input should be '5m' or '1h'"),
    "cache ttl on kimi-k3 (openai)": (
        ValidationError,
        "kimi-k3 has no cache TTL option on the openai protocol; drop cache_ttl",
    ),
    "cache ttl on kimi-k3 per call (anthropic)": (
        ValueError,
        "kimi-k3 has no cache TTL option on the anthropic protocol; drop cache_ttl",
    ),
    "six stop sequences on K3.1 anthropic": (
        ValueError,
        "at most 5 stop sequences are allowed, got 6",
    ),
    "stop sequence over 32 bytes": (
        ValueError,
        "stop sequence 'ééééééééééééééééé' is 34 bytes in UTF-8; the limit is 32",
    ),
    "empty stop string": (ValueError, "stop must be a list of non-empty strings, got ['']"),
    "temperature 0.2 on kimi-k3": (
        ValidationError,
        "kimi-k3 only accepts temperature=1.0 (fixed by the model); got 0.2",
    ),
    "top_p 0.5 on kimi-k3 per call": (
        ValueError,
        "kimi-k3 only accepts top_p=0.95 (fixed by the model); got 0.5",
    ),
    "video on anthropic": (
        ValueError,
        "video input needs protocol='openai' (the Messages protocol has no video blocks)",
    ),
    "image on kimi-k3 anthropic": (
        ValueError,
        "image input is not supported by kimi-k3 on the anthropic protocol",
    ),
    "unsupported image type on anthropic": (
        ValueError,
        "image media type 'image/bmp' is not accepted by kimi-k3.1-pro on the anthropic protocol (allowed: image/jpeg, image/png, image/gif, image/webp)",
    ),
    "web search on kimi-k3 anthropic": (
        ValueError,
        "built-in web search is not available for kimi-k3 on the anthropic protocol; use protocol='openai' (all models) or a K3.1 model",
    ),
    "json mode on anthropic without schema": (
        ValueError,
        "JSON mode without a schema is not documented on the anthropic protocol (only response_format json_object on Chat Completions); pass a schema or use protocol='openai'",
    ),
    "json_object response_format on anthropic": (
        ValueError,
        "JSON mode (response_format json_object) is not documented on the anthropic protocol; pass a schema, or use protocol='openai'",
    ),
    "structured output method unknown": (
        ValueError,
        "method must be one of json_schema, function_calling, json_mode; got 'xml'",
    ),
    "json_schema without a schema": (
        ValueError,
        "method='json_schema' needs a schema (only method='json_mode' works without one)",
    ),
    "tool message answering no call (openai)": (
        ValueError,
        "ToolMessage with tool_call_id 'call_unknown' answers no tool call of a preceding AIMessage",
    ),
    "tool message answering no call (anthropic)": (
        ValueError,
        "ToolMessage tool_call_id 'call_unknown' matches no tool call in the preceding AI messages",
    ),
    "unknown call kwarg": (
        ValueError,
        "unexpected call arguments ['frequency_penalty']; pass undocumented body fields via extra_body={...} (per call) or model_kwargs={...} (on the model)",
    ),
    "negative max_retries": (ValidationError, "max_retries must be >= 0"),
    "zero max_builtin_rounds": (ValidationError, "max_builtin_rounds must be >= 1"),
    # Refused at construction now (issue 12 item 3 / issue 16 item 5), not at the first call.
    "insecure http base url": (
        ValidationError,
        "base_url 'http://gateway.example.com' uses plain http://, which would send the API key unencrypted. Use https://, or set allow_insecure_http=True if you really mean it.",
    ),
}


@pytest.mark.parametrize(("case", "call", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_refused_before_sending(case: str, call: Callable[[], object], fragment: str) -> None:
    kind, message = EXACT[case]
    with pytest.raises(ValueError) as info:
        call()
    assert type(info.value) is kind
    assert _message(info.value) == message
    assert fragment.lower() in str(info.value).lower(), f"{case}: the error must name {fragment!r}"


def _message(error: ValueError) -> str:
    """Our message: pydantic wraps a validator's ValueError in one ValidationError error."""
    if isinstance(error, ValidationError):
        (detail,) = error.errors()
        return str(detail.get("ctx", {}).get("error", detail["msg"]))
    return str(error)


def test_every_case_has_its_exact_outcome() -> None:
    assert [case for case, _, _ in CASES] == list(EXACT)


def test_there_are_at_least_thirty_cases() -> None:
    assert len(CASES) >= 30


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    model = offline(api_key=None)
    with pytest.raises(ValueError, match="EVOLINK_API_KEY"):
        model.invoke("hi")
