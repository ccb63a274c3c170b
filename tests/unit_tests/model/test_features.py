"""Kimi features end to end through `ChatKimi`, with an in-process fake transport.

Two kinds of tests:
- the refusal matrix: every combination the capability table refuses raises `ValueError` and
  NOTHING reaches the transport (its handler fails the test when called);
- request bodies: what ChatKimi puts on the wire for effort, cache TTL, stop, sampling, web search
  tools and multimodal input, captured by the fake transport and validated against `spec/`.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_kimi import ChatKimi
from langchain_kimi.testing import FakeKimiGateway
from tests.support.gateways import answering
from tools.schema_validation import validate_request

K31 = "kimi-k3.1-pro"
K31_HS = "kimi-k3.1-pro-highspeed"
K3 = "kimi-k3"
PROTOCOLS = ("anthropic", "openai")
PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQ"
    "DwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
MP4_B64 = "AAAAIGZ0eXBpc29tAAACAGlzb21pc28yYXZjMW1wNDE="

# --- the fake gateway (langchain_kimi.testing) -------------------------------------------------


def capturing(
    protocol: str, model: str = K31, answer: str = "ok", **fields: Any
) -> tuple[ChatKimi, list[Any]]:
    """A ChatKimi on the fake gateway, which records each request body and answers `answer`."""
    gateway = answering(answer)
    return gateway.chat_model(protocol=protocol, model=model, **fields), gateway.requests


def refusing(protocol: str, model: str = K31, **fields: Any) -> tuple[ChatKimi, list[Any]]:
    """A ChatKimi whose offline gateway fails the test if anything is sent (recorded first)."""
    gateway = FakeKimiGateway(offline=True)
    return gateway.chat_model(protocol=protocol, model=model, **fields), gateway.requests


PLAIN_BODY_KEYS = {
    "openai": {"model", "messages"},
    "anthropic": {"model", "max_tokens", "messages"},  # max_tokens is required on Messages
}
"""Every key of a body with nothing optional in it: "not sent" means exactly these remain."""


def body_of(protocol: str, model: str = K31, messages: Any = "hi", **call: Any) -> dict[str, Any]:
    fields = call.pop("fields", {})
    chat, sent = capturing(protocol, model, call.pop("answer", "ok"), **fields)
    tools = call.pop("tools", None)
    runnable: Any = chat.bind_tools(tools) if tools is not None else chat
    runnable.invoke(messages, **call)
    (body,) = sent
    validate_request(body, protocol, model)
    return dict(body)


# --- the refusal matrix --------------------------------------------------------------------

IMAGE_V1 = {"type": "image", "base64": PNG_B64, "mime_type": "image/png"}
IMAGE_URL_V1 = {"type": "image", "url": "https://example.com/cat.png"}
VIDEO_V1 = {"type": "video", "base64": MP4_B64, "mime_type": "video/mp4"}


def _human(*parts: dict[str, Any]) -> list[BaseMessage]:
    return [HumanMessage(content=[{"type": "text", "text": "Describe this."}, *parts])]


def _tool_image_history() -> list[BaseMessage]:
    call = {"id": "toolu_1", "name": "screenshot", "args": {}}
    return [
        HumanMessage("Take a screenshot."),
        AIMessage(content="", tool_calls=[call]),
        ToolMessage(content=[IMAGE_V1], tool_call_id="toolu_1"),
    ]


# (id, protocol, model, call kwargs, messages, expected error fragment)
REFUSED_CALLS: list[tuple[str, str, str, dict[str, Any], Any, str]] = [
    ("effort-low-k3-openai", "openai", K3, {"reasoning_effort": "low"}, "hi", "max"),
    ("effort-low-k3-anthropic", "anthropic", K3, {"reasoning_effort": "low"}, "hi", "max"),
    ("effort-medium-k3-openai", "openai", K3, {"effort": "medium"}, "hi", "max"),
    ("effort-none-k3-anthropic", "anthropic", K3, {"effort": "none"}, "hi", "max"),
    ("effort-unknown-openai", "openai", K31, {"reasoning_effort": "ultra"}, "hi", "ultra"),
    ("effort-unknown-anthropic", "anthropic", K31, {"reasoning_effort": "ultra"}, "hi", "ultra"),
    ("cache-ttl-k3-openai", "openai", K3, {"cache_ttl": "1h"}, "hi", "cache"),
    ("cache-ttl-k3-anthropic", "anthropic", K3, {"cache_ttl": "5m"}, "hi", "cache"),
    ("cache-ttl-bad-value", "openai", K31, {"cache_ttl": "2h"}, "hi", "cache_ttl"),
    ("six-stops-anthropic", "anthropic", K31, {"stop": ["a", "b", "c", "d", "e", "f"]}, "hi", "5"),
    ("stop-33-bytes-anthropic", "anthropic", K31, {"stop": ["x" * 33]}, "hi", "32"),
    ("stop-34-utf8-bytes", "anthropic", K31_HS, {"stop": ["é" * 17]}, "hi", "bytes"),
    ("max-tokens-0-openai", "openai", K31, {"max_tokens": 0}, "hi", "max_tokens"),
    ("max-tokens-0-anthropic", "anthropic", K31, {"max_tokens": 0}, "hi", "max_tokens"),
    ("max-tokens-over-openai", "openai", K3, {"max_tokens": 1_048_577}, "hi", "1,048,576"),
    ("max-tokens-over-anthropic", "anthropic", K31, {"max_tokens": 1_048_577}, "hi", "1,048,576"),
    ("temperature-k3-openai", "openai", K3, {"temperature": 0.5}, "hi", "temperature"),
    ("top-p-k3-openai", "openai", K3, {"top_p": 0.5}, "hi", "top_p"),
    ("video-v1-anthropic", "anthropic", K31, {}, _human(VIDEO_V1), "video"),
    (
        "video-url-anthropic",
        "anthropic",
        K31,
        {},
        _human({"type": "video_url", "video_url": {"url": "data:video/mp4;base64," + MP4_B64}}),
        "video",
    ),
    ("image-k3-anthropic", "anthropic", K3, {}, _human(IMAGE_V1), "image"),
    ("image-url-k3-anthropic", "anthropic", K3, {}, _human(IMAGE_URL_V1), "image"),
    (
        "openai-image-part-k3-anthropic",
        "anthropic",
        K3,
        {},
        _human({"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG_B64}}),
        "image",
    ),
    (
        "bmp-image-anthropic",
        "anthropic",
        K31,
        {},
        _human({"type": "image", "base64": PNG_B64, "mime_type": "image/bmp"}),
        "image/bmp",
    ),
    (
        "bmp-data-url-anthropic",
        "anthropic",
        K31,
        {},
        _human({"type": "image_url", "image_url": {"url": "data:image/bmp;base64," + PNG_B64}}),
        "image/bmp",
    ),
    (
        "pdf-as-image-openai",
        "openai",
        K31,
        {},
        _human({"type": "image", "base64": PNG_B64, "mime_type": "application/pdf"}),
        "application/pdf",
    ),
    ("tool-image-k3-anthropic", "anthropic", K3, {}, _tool_image_history(), "image"),
]


@pytest.mark.parametrize(
    ("protocol", "model", "kwargs", "messages", "needle"),
    [pytest.param(*case[1:], id=case[0]) for case in REFUSED_CALLS],
)
@pytest.mark.parametrize("mode", ["invoke", "stream"])
def test_refused_before_sending(
    protocol: str, model: str, kwargs: dict[str, Any], messages: Any, needle: str, mode: str
) -> None:
    chat, calls = refusing(protocol, model)

    def call() -> object:
        if mode == "invoke":
            return chat.invoke(messages, **kwargs)
        return list(chat.stream(messages, **kwargs))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=needle.replace(".", r"\.")):
            call()
    assert calls == []


@pytest.mark.parametrize(
    ("protocol", "model", "kwargs", "messages", "needle"),
    [pytest.param(*case[1:], id=case[0]) for case in REFUSED_CALLS[:8]],
)
async def test_refused_before_sending_async(
    protocol: str, model: str, kwargs: dict[str, Any], messages: Any, needle: str
) -> None:
    chat, calls = refusing(protocol, model)
    with pytest.raises(ValueError, match=needle):
        await chat.ainvoke(messages, **kwargs)
    with pytest.raises(ValueError, match=needle):
        async for _ in chat.astream(messages, **kwargs):
            pass
    assert calls == []


@pytest.mark.parametrize(
    ("protocol", "model", "fields", "needle"),
    [
        ("openai", K3, {"reasoning_effort": "high"}, "max"),
        ("anthropic", K3, {"effort": "minimal"}, "max"),
        ("openai", K3, {"cache_ttl": "5m"}, "cache"),
        ("anthropic", K3, {"cache_ttl": "1h"}, "cache"),
        ("anthropic", K31, {"stop": ["1", "2", "3", "4", "5", "6"]}, "5"),
        ("openai", K31, {"max_tokens": 2_000_000}, "max_tokens"),
        ("openai", K3, {"temperature": 0.7}, "temperature"),
    ],
)
def test_refused_model_fields_fail_at_construction(
    protocol: str, model: str, fields: dict[str, Any], needle: str
) -> None:
    with pytest.raises(ValueError, match=needle):
        refusing(protocol, model, **fields)


@pytest.mark.parametrize(
    "tool",
    ["web_search", {"type": "web_search"}, {"type": "web_search_20250305", "name": "web_search"}],
)
def test_web_search_refused_on_k3_anthropic(tool: Any) -> None:
    chat, calls = refusing("anthropic", K3)
    with pytest.raises(ValueError, match="web search"):
        chat.bind_tools([tool])
    with pytest.raises(ValueError, match="web search"):
        chat.invoke("hi", tools=[tool])
    assert calls == []


def test_refused_per_call_override_of_valid_field() -> None:
    chat, calls = refusing("openai", K3, reasoning_effort="max")
    with pytest.raises(ValueError, match="max"):
        chat.invoke("hi", reasoning_effort="high")
    assert calls == []


# --- reasoning effort ----------------------------------------------------------------------

EFFORTS = [
    ("low", "low"),
    ("high", "high"),
    ("max", "max"),
    ("medium", "high"),
    ("xhigh", "max"),
    ("minimal", "low"),
    ("none", "low"),
    ("MEDIUM", "high"),
]


@pytest.mark.parametrize(("given", "wire"), EFFORTS)
def test_effort_normalized_on_both_protocols(given: str, wire: str) -> None:
    openai = body_of("openai", fields={"reasoning_effort": given})
    assert openai["reasoning_effort"] == wire
    anthropic = body_of("anthropic", fields={"effort": given})
    assert anthropic["output_config"] == {"effort": wire}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_effort_unset_sends_nothing(protocol: str) -> None:
    assert set(body_of(protocol)) == PLAIN_BODY_KEYS[protocol]


def test_effort_per_call_override_wins() -> None:
    body = body_of("openai", fields={"reasoning_effort": "low"}, reasoning_effort="xhigh")
    assert body["reasoning_effort"] == "max"
    body = body_of("anthropic", fields={"reasoning_effort": "max"}, effort="minimal")
    assert body["output_config"] == {"effort": "low"}


def test_k3_accepts_max_and_its_alias() -> None:
    assert body_of("openai", K3, reasoning_effort="xhigh")["reasoning_effort"] == "max"
    # The kimi-k3 Messages schema has no output_config: `max` is its default and only value.
    body = body_of("anthropic", K3, reasoning_effort="max")
    assert set(body) == PLAIN_BODY_KEYS["anthropic"]


def test_effort_combines_with_structured_output_config() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    response_format = {"type": "json_schema", "json_schema": {"name": "out", "schema": schema}}
    # The fake refuses to answer "ok" under a JSON schema: the service could not.
    body = body_of("anthropic", effort="high", response_format=response_format, answer='{"a": "x"}')
    assert body["output_config"] == {
        "effort": "high",
        "format": {"type": "json_schema", "schema": schema},
    }


# --- cache TTL ---------------------------------------------------------------------------


@pytest.mark.parametrize("model", [K31, K31_HS])
@pytest.mark.parametrize("ttl", ["5m", "1h"])
def test_cache_ttl_wire_forms(model: str, ttl: str) -> None:
    body = body_of("anthropic", model, fields={"cache_ttl": ttl})
    assert body["cache_control"] == {"type": "ephemeral", "ttl": ttl}
    body = body_of("openai", model, fields={"cache_ttl": ttl})
    assert body["prompt_cache_options"] == {"mode": "implicit", "ttl": ttl}


def test_cache_ttl_unset_and_per_call_override() -> None:
    assert "cache_control" not in body_of("anthropic")
    assert "prompt_cache_options" not in body_of("openai")
    body = body_of("openai", fields={"cache_ttl": "5m"}, cache_ttl="1h")
    assert body["prompt_cache_options"] == {"mode": "implicit", "ttl": "1h"}


def test_block_level_cache_control_does_not_break_requests() -> None:
    marked = [
        HumanMessage(
            content=[
                {"type": "text", "text": "Long context.", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "Question?"},
            ]
        )
    ]
    body = body_of("anthropic", messages=marked, cache_ttl="1h")
    # Only the top-level cache_control sets the TTL (spec): the block mark is not sent.
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Long context."},
                {"type": "text", "text": "Question?"},
            ],
        }
    ]
    assert body["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    body = body_of("openai", messages=marked)
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "Long context."},
        {"type": "text", "text": "Question?"},
    ]
    body = body_of("anthropic", K3, messages=marked)
    assert "cache_control" not in json.dumps(body)


# --- stop, max_tokens, sampling ------------------------------------------------------------


def test_native_stop_sequences_on_k31_anthropic() -> None:
    stops = ["END", "x" * 32, "é" * 16]
    body = body_of("anthropic", stop=stops)
    assert body["stop_sequences"] == stops
    body = body_of("anthropic", K31_HS, fields={"stop_sequences": ["###"]})
    assert body["stop_sequences"] == ["###"]


@pytest.mark.parametrize(
    ("protocol", "model"), [("openai", K31), ("openai", K3), ("anthropic", K3)]
)
def test_emulated_stop_is_never_sent(protocol: str, model: str) -> None:
    body = body_of(protocol, model, stop=["a", "b", "c", "d", "e", "f", "x" * 40])
    assert set(body) == PLAIN_BODY_KEYS[protocol]


@pytest.mark.parametrize(("protocol", "model"), [("openai", K31), ("anthropic", K3)])
def test_emulated_stop_truncates_the_answer(protocol: str, model: str) -> None:
    chat, sent = capturing(protocol, model)
    reply = chat.invoke("hi", stop=["k"])
    assert reply.content == "o"
    assert reply.response_metadata["stop_sequence"] == "k"
    assert reply.response_metadata["finish_reason"] == "stop"
    assert len(sent) == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_max_tokens_bounds(protocol: str) -> None:
    key = "max_tokens" if protocol == "anthropic" else "max_completion_tokens"
    assert body_of(protocol, max_tokens=1)[key] == 1
    assert body_of(protocol, K3, fields={"max_tokens": 1_048_576})[key] == 1_048_576


def test_openai_never_sends_deprecated_max_tokens() -> None:
    body = body_of("openai", max_tokens=77)
    assert body["max_completion_tokens"] == 77
    assert "max_tokens" not in body


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_sampling_unset_not_sent(protocol: str) -> None:
    assert set(body_of(protocol)) == PLAIN_BODY_KEYS[protocol]


def test_sampling_on_k31_warns_that_it_is_ignored() -> None:
    with pytest.warns(UserWarning, match="ignores temperature"):
        body = body_of("openai", temperature=0.3)
    assert body["temperature"] == 0.3
    with pytest.warns(UserWarning, match="top_p=0.5 is not sent"):
        body = body_of("anthropic", top_p=0.5)
    assert set(body) == PLAIN_BODY_KEYS["anthropic"]  # the Messages schema has no sampling fields


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_sampling_fixed_values_accepted_on_k3(protocol: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        body = body_of(protocol, K3, temperature=1, top_p=0.95)
    if protocol == "openai":
        assert (body["temperature"], body["top_p"]) == (1.0, 0.95)
    else:
        assert set(body) == PLAIN_BODY_KEYS["anthropic"]


# --- web search tool forms -------------------------------------------------------------------

ANTHROPIC_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}


@pytest.mark.parametrize(
    ("tool", "anthropic_wire"),
    [
        (ANTHROPIC_SEARCH, ANTHROPIC_SEARCH),
        ("web_search", {"type": "web_search_20250305", "name": "web_search"}),
        ({"type": "web_search"}, {"type": "web_search_20250305", "name": "web_search"}),
    ],
)
def test_web_search_tool_forms(tool: Any, anthropic_wire: dict[str, Any]) -> None:
    body = body_of("anthropic", tools=[tool])
    assert body["tools"] == [anthropic_wire]
    for model in (K31, K3):
        body = body_of("openai", model, tools=[tool])
        assert body["tools"] == [{"type": "web_search"}]


def test_web_search_next_to_function_tools() -> None:
    def get_time(city: str) -> str:
        """Local time in a city."""
        return city

    body = body_of("anthropic", K31_HS, tools=[get_time, ANTHROPIC_SEARCH], tool_choice="auto")
    assert body["tools"][1] == ANTHROPIC_SEARCH
    assert body["tools"][0]["name"] == "get_time"
    assert body["tool_choice"] == {"type": "auto"}
    body = body_of("openai", tools=[get_time, "web_search"])
    assert [t["type"] for t in body["tools"]] == ["function", "web_search"]


# --- multimodal input ------------------------------------------------------------------------

HTTP_IMAGE = "https://example.com/cat.png"
DATA_URL = "data:image/png;base64," + PNG_B64

IMAGE_INPUTS = [
    (
        "v1-base64",
        IMAGE_V1,
        {"type": "base64", "media_type": "image/png", "data": PNG_B64},
        DATA_URL,
    ),
    ("v1-url", IMAGE_URL_V1, {"type": "url", "url": HTTP_IMAGE}, HTTP_IMAGE),
    (
        "openai-data-url",
        {"type": "image_url", "image_url": {"url": DATA_URL}},
        {"type": "base64", "media_type": "image/png", "data": PNG_B64},
        DATA_URL,
    ),
    (
        "openai-http-url",
        {"type": "image_url", "image_url": {"url": HTTP_IMAGE}},
        {"type": "url", "url": HTTP_IMAGE},
        HTTP_IMAGE,
    ),
    (
        "anthropic-base64",
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
        },
        {"type": "base64", "media_type": "image/png", "data": PNG_B64},
        DATA_URL,
    ),
    (
        "anthropic-url",
        {"type": "image", "source": {"type": "url", "url": HTTP_IMAGE}},
        {"type": "url", "url": HTTP_IMAGE},
        HTTP_IMAGE,
    ),
]


@pytest.mark.parametrize(
    ("part", "anthropic_source", "openai_url"),
    [pytest.param(*case[1:], id=case[0]) for case in IMAGE_INPUTS],
)
def test_image_inputs_per_protocol(
    part: dict[str, Any], anthropic_source: dict[str, Any], openai_url: str
) -> None:
    body = body_of("anthropic", messages=_human(part))
    assert body["messages"][0]["content"][1] == {"type": "image", "source": anthropic_source}
    for model in (K31, K3):
        body = body_of("openai", model, messages=_human(part))
        image = body["messages"][0]["content"][1]
        assert image["type"] == "image_url"
        url = (
            image["image_url"] if isinstance(image["image_url"], str) else image["image_url"]["url"]
        )
        assert url == openai_url


@pytest.mark.parametrize(
    "part",
    [
        VIDEO_V1,
        {"type": "video_url", "video_url": {"url": "data:video/mp4;base64," + MP4_B64}},
    ],
)
def test_video_input_on_openai(part: dict[str, Any]) -> None:
    body = body_of("openai", K3, messages=_human(part))
    video = body["messages"][0]["content"][1]
    assert video["type"] == "video_url"
    assert video["video_url"] == {"url": "data:video/mp4;base64," + MP4_B64}


def test_image_in_tool_message_on_k31_anthropic() -> None:
    body = body_of("anthropic", messages=_tool_image_history())
    result = body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == "toolu_1"
    assert result["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}
    ]


def test_image_in_tool_message_on_openai() -> None:
    body = body_of("openai", messages=_tool_image_history())
    tool = body["messages"][-1]
    assert tool["role"] == "tool"
    assert tool["content"] == [{"type": "image_url", "image_url": {"url": DATA_URL}}]


# --- one table drives the checks ---------------------------------------------------------------


def test_profile_reflects_the_capability_row() -> None:
    k31, _ = capturing("anthropic", K31)
    k3, _ = capturing("anthropic", K3)
    assert k31.profile is not None
    assert k3.profile is not None
    k31_row: dict[str, Any] = dict(k31.profile)
    k3_row: dict[str, Any] = dict(k3.profile)
    assert k31_row["image_inputs"] is True
    assert k3_row["image_inputs"] is False
    assert k31_row["structured_output"] is True
    assert k3_row["structured_output"] is False  # no output_config on kimi-k3 Messages
    assert k31_row["video_inputs"] is False
    openai_k3, _ = capturing("openai", K3)
    assert openai_k3.profile is not None
    assert openai_k3.profile["video_inputs"] is True
    assert openai_k3.profile["reasoning_effort_levels"] == ["max"]
