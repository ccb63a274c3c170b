"""build_request for Chat Completions: options, tools, content mapping, replay, refusals."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from types import FrameType
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langchain_kimi._contract import FOREIGN_TURN_REASONING
from langchain_kimi._request.options import (
    FunctionToolSpec,
    OutputFormat,
    RequestOptions,
    ToolChoice,
    WebSearchToolSpec,
)
from langchain_kimi._request.profiles import K3, K31_PRO, K31_PRO_HIGHSPEED, capabilities
from langchain_kimi.protocols.interfaces import SingleRound
from langchain_kimi.protocols.openai_chat import ADAPTER, build_request, web_search
from tools.schema_validation import validate_request

MODELS = [K31_PRO, K3]
WEATHER = FunctionToolSpec(
    name="get_weather",
    description="Weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def opts(model: str = K31_PRO, **kwargs: Any) -> RequestOptions:
    return RequestOptions(caps=capabilities(model, "openai"), **kwargs)


def build(messages: Sequence[BaseMessage], model: str = K31_PRO, **kwargs: Any) -> dict[str, Any]:
    body = build_request(messages, opts(model, **kwargs))
    validate_request(body, "openai", model)
    return body


HI: list[BaseMessage] = [HumanMessage("hi")]


def test_adapter_shape() -> None:
    assert ADAPTER.path == "/v1/chat/completions"
    assert ADAPTER.build_request(HI, opts()) == build_request(HI, opts())
    assert ADAPTER.new_decoder().feed("message", "[DONE]")[0].chunk_position == "last"


def _files_run(action: Callable[[], object]) -> set[str]:
    """The source files whose code ran during `action` (a profiler sees every call)."""
    files: set[str] = set()

    def profile(frame: FrameType, _event: str, _arg: object) -> None:
        files.add(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return files


def test_a_call_without_web_search_never_enters_the_web_search_module() -> None:
    """The adapter picks the rounds; only a call that declared web search reaches the loop."""
    plain = _files_run(lambda: ADAPTER.new_rounds(opts(tools=(WEATHER,)), 8))
    assert web_search.__file__ not in plain
    searching = _files_run(
        lambda: ADAPTER.new_rounds(opts(tools=(WebSearchToolSpec(max_uses=2),)), 8)
    )
    assert web_search.__file__ in searching
    assert isinstance(ADAPTER.new_rounds(opts(), 8), SingleRound)
    assert isinstance(
        ADAPTER.new_rounds(opts(tools=(WebSearchToolSpec(),)), 8), web_search.WebSearchRounds
    )


@pytest.mark.parametrize("model", [*MODELS, K31_PRO_HIGHSPEED])
def test_minimal_body(model: str) -> None:
    body = build(HI, model)
    assert body == {"model": model, "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize("model", MODELS)
def test_full_options_body(model: str) -> None:
    extra = {"prompt_cache_options": {"mode": "implicit", "ttl": "1h"}} if model != K3 else {}
    body = build(
        HI,
        model,
        max_tokens=1024,
        stream=True,
        reasoning_effort="max",
        temperature=1.0,
        top_p=0.95,
        stop=("END",),
        tools=(WEATHER, WebSearchToolSpec(max_uses=3)),
        tool_choice=ToolChoice("auto"),
        cache_ttl="1h" if model != K3 else None,
        output_format=OutputFormat("json_object"),
    )
    assert body["max_completion_tokens"] == 1024
    assert "max_tokens" not in body
    assert body["stream"] is True
    assert "stream_options" not in body
    assert "stop" not in body
    assert "parallel_tool_calls" not in body
    assert body["reasoning_effort"] == "max"
    assert body["temperature"] == 1.0
    assert body["top_p"] == 0.95
    assert body["tools"][1] == {"type": "web_search"}
    assert body["tool_choice"] == "auto"
    assert body["response_format"] == {"type": "json_object"}
    for key, value in extra.items():
        assert body[key] == value
    # Exactly these fields: no `max_tokens`, `stream_options`, `stop`, `parallel_tool_calls`, and
    # no `prompt_cache_options` for kimi-k3.
    assert set(body) == {
        "model",
        "messages",
        "max_completion_tokens",
        "stream",
        "reasoning_effort",
        "temperature",
        "top_p",
        "tools",
        "tool_choice",
        "response_format",
        *extra,
    }


def test_function_tool_forms() -> None:
    strict_tool = FunctionToolSpec("f", "", {"type": "object", "properties": {}}, strict=True)
    body = build(HI, tools=(WEATHER, strict_tool))
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": WEATHER.parameters,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {"type": "object", "properties": {}},
                "strict": True,
            },
        },
    ]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (ToolChoice("auto"), "auto"),
        (ToolChoice("any"), "required"),
        (ToolChoice("none"), "none"),
        (
            ToolChoice("named", "get_weather"),
            {"type": "function", "function": {"name": "get_weather"}},
        ),
    ],
)
@pytest.mark.parametrize("model", MODELS)
def test_tool_choice(model: str, choice: ToolChoice, wire: Any) -> None:
    assert build(HI, model, tools=(WEATHER,), tool_choice=choice)["tool_choice"] == wire


def test_json_schema_response_format() -> None:
    schema = {"type": "object", "properties": {"r": {"type": "string"}}, "required": ["r"]}
    body = build(
        HI, output_format=OutputFormat("json_schema", name="result", schema=schema, strict=True)
    )
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "result", "strict": True, "schema": schema},
    }
    body = build(HI, K3, output_format=OutputFormat("json_schema", name="r", schema=schema))
    assert "strict" not in body["response_format"]["json_schema"]


def test_extra_body_merged_last() -> None:
    body = build_request(HI, opts(max_tokens=5, extra_body={"max_completion_tokens": 7, "x": 1}))
    assert body["max_completion_tokens"] == 7
    assert body["x"] == 1


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "kwargs", "needle"),
    [
        (K31_PRO, {"tools": (WEATHER,), "tool_choice": ToolChoice("named", "nope")}, "nope"),
        (K31_PRO, {"tool_choice": ToolChoice("any")}, "at least one tool"),
        (K31_PRO, {"output_format": OutputFormat("json_schema")}, "schema"),
    ],
)
def test_refused_options(model: str, kwargs: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        build_request(HI, opts(model, **kwargs))


def test_refusals_follow_the_capability_row() -> None:
    caps = replace(
        capabilities(K31_PRO, "openai"),
        image_inputs=False,
        video_inputs=False,
        image_tool_message=False,
    )
    # Content capabilities are checked while mapping content; the option refusals (web search,
    # JSON mode, structured output...) live in _resolve: test_capability_refusals.py.
    cases: list[tuple[Sequence[BaseMessage], dict[str, Any], str]] = [
        ([HumanMessage([{"type": "image_url", "image_url": "http://x/a.png"}])], {}, "image"),
        ([HumanMessage([{"type": "video", "url": "http://x/v.mp4"}])], {}, "video"),
    ]
    for messages, kwargs, needle in cases:
        with pytest.raises(ValueError, match=needle):
            build_request(messages, RequestOptions(caps=caps, **kwargs))


def test_unknown_model_skips_capability_checks() -> None:
    with pytest.warns(UserWarning, match="Unknown Kimi model"):
        caps = capabilities("kimi-k9-test", "openai")
    body = build_request(HI, RequestOptions(caps=caps, reasoning_effort="low", cache_ttl="5m"))
    assert body["reasoning_effort"] == "low"
    assert body["prompt_cache_options"] == {"mode": "implicit", "ttl": "5m"}


def test_empty_messages_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        build_request([], opts())


# --- user / system / tool content ---------------------------------------------------------


@pytest.mark.parametrize("model", MODELS)
def test_image_and_video_forms(model: str) -> None:
    blocks: list[Any] = [
        "plain",
        {"type": "text", "text": "look", "cache_control": {"type": "ephemeral"}},
        {"type": "image", "base64": "AAAA", "mime_type": "image/png"},
        {"type": "image", "url": "https://x/a.jpg"},
        {"type": "image_url", "image_url": "https://x/b.jpg"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,BBBB"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": "CC"}},
        {"type": "image", "source": {"type": "url", "url": "https://x/c.gif"}},
        {"type": "image", "source_type": "base64", "data": "DD", "mime_type": "image/gif"},
        {"type": "video", "base64": "VV", "mime_type": "video/mp4"},
        {"type": "video", "url": "https://x/v.mp4", "mime_type": "video/mp4"},
        {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,WW"}},
    ]
    body = build([HumanMessage(blocks)], model)
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "plain"},
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "image_url", "image_url": {"url": "https://x/a.jpg"}},
        {"type": "image_url", "image_url": "https://x/b.jpg"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,BBBB"}},
        {"type": "image_url", "image_url": {"url": "data:image/webp;base64,CC"}},
        {"type": "image_url", "image_url": {"url": "https://x/c.gif"}},
        {"type": "image_url", "image_url": {"url": "data:image/gif;base64,DD"}},
        {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,VV"}},
        {"type": "video_url", "video_url": {"url": "https://x/v.mp4"}},
        {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,WW"}},
    ]


@pytest.mark.parametrize(
    ("block", "needle"),
    [
        ({"type": "audio", "base64": "AA", "mime_type": "audio/wav"}, "'audio'"),
        ({"type": "file", "base64": "AA", "mime_type": "application/pdf"}, "'file'"),
        ({"type": "input_audio", "input_audio": {}}, "'input_audio'"),
        ({"type": "image", "base64": "AA", "mime_type": "application/pdf"}, "image type"),
        ({"type": "image", "base64": "AA"}, "image type"),
        ({"type": "image", "file_id": "f1"}, "base64 data or a url"),
    ],
)
def test_unsupported_user_blocks(block: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        build_request([HumanMessage([block])], opts())


def test_system_message_forms() -> None:
    body = build(
        [SystemMessage("be brief"), SystemMessage(["a", {"type": "text", "text": "b"}]), *HI]
    )
    assert body["messages"][:2] == [
        {"role": "system", "content": "be brief"},
        {"role": "system", "content": "a\n\nb"},
    ]
    with pytest.raises(ValueError, match="text only"):
        build_request([SystemMessage([{"type": "image_url", "image_url": "x"}])], opts())


def _call(
    call_id: str = "c1", name: str = "get_weather", args: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {"id": call_id, "name": name, "args": args if args is not None else {"city": "Paris"}}


def test_tool_message_forms() -> None:
    ai = AIMessage("", tool_calls=[_call("c1"), _call("c2")])
    image = {"type": "image", "base64": "AA", "mime_type": "image/png"}
    body = build(
        [
            *HI,
            ai,
            ToolMessage("sunny", tool_call_id="c1"),
            ToolMessage([{"type": "text", "text": "a"}, "b", image], tool_call_id="c2"),
        ]
    )
    assert body["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "sunny"}
    assert body["messages"][3]["content"] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
    ]
    body = build([*HI, ai, ToolMessage([{"type": "text", "text": "x"}, "y"], tool_call_id="c1")])
    assert body["messages"][2]["content"] == "xy"
    caps = replace(capabilities(K31_PRO, "openai"), image_tool_message=False)
    with pytest.raises(ValueError, match="images in tool results"):
        build_request([*HI, ai, ToolMessage([image], tool_call_id="c1")], RequestOptions(caps=caps))


def test_orphan_tool_message_refused() -> None:
    with pytest.raises(ValueError, match="'zz'"):
        build_request([*HI, ToolMessage("x", tool_call_id="zz")], opts())
    ai = AIMessage("", tool_calls=[_call("c1")])
    with pytest.raises(ValueError, match="'c2'"):
        build_request([*HI, ai, ToolMessage("x", tool_call_id="c2")], opts())


# --- assistant replay ---------------------------------------------------------------------


def test_unchanged_reply_replays_raw_calls() -> None:
    raw: list[dict[str, Any]] = [
        {
            "id": "c1",
            "type": "function",
            "index": 0,
            "function": {"name": "get_weather", "arguments": '{"city":  "Paris"}'},
        },
        {"id": "c2", "type": "function", "function": {"name": "now", "arguments": ""}},
    ]
    ai = AIMessage(
        "checking",
        additional_kwargs={"reasoning_content": "think", "tool_calls": raw},
        tool_calls=[_call("c1"), _call("c2", "now", {})],
    )
    body = build(
        [*HI, ai, ToolMessage("sunny", tool_call_id="c1"), ToolMessage("9", tool_call_id="c2")]
    )
    assert body["messages"][1] == {
        "role": "assistant",
        "content": "checking",
        "reasoning_content": "think",
        "tool_calls": [{k: v for k, v in raw[0].items() if k != "index"}, raw[1]],
    }


def test_edited_call_is_rebuilt_and_new_call_appended() -> None:
    raw = [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
        }
    ]
    ai = AIMessage(
        "",
        additional_kwargs={"tool_calls": raw},
        tool_calls=[_call("c1", args={"city": "Zürich"}), _call("c9", "now", {})],
    )
    body = build(
        [*HI, ai, ToolMessage("a", tool_call_id="c1"), ToolMessage("b", tool_call_id="c9")]
    )
    assistant = body["messages"][1]
    assert assistant["content"] is None
    assert assistant["reasoning_content"] == FOREIGN_TURN_REASONING  # no reasoning of its own
    assert assistant["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'},
        },
        {"id": "c9", "type": "function", "function": {"name": "now", "arguments": "{}"}},
    ]


def test_renamed_call_is_rebuilt_and_removed_call_dropped() -> None:
    raw = [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
        },
        {"id": "c2", "type": "function", "function": {"name": "gone", "arguments": "{}"}},
    ]
    ai = AIMessage("", additional_kwargs={"tool_calls": raw}, tool_calls=[_call("c1", "weather")])
    body = build([*HI, ai, ToolMessage("a", tool_call_id="c1")])
    assert [c["function"]["name"] for c in body["messages"][1]["tool_calls"]] == ["weather"]


def test_invalid_tool_call_replayed_raw() -> None:
    raw = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{oops"}}]
    ai = AIMessage(
        "",
        additional_kwargs={"tool_calls": raw},
        invalid_tool_calls=[
            {"type": "invalid_tool_call", "id": "c1", "name": "f", "args": "{oops", "error": None}
        ],
    )
    body = build([*HI, ai, ToolMessage("error: bad args", tool_call_id="c1")])
    assert body["messages"][1]["tool_calls"] == raw


def test_plain_ai_message_and_no_empty_tool_calls() -> None:
    body = build([*HI, AIMessage("hello"), HumanMessage("again")])
    assert body["messages"][1] == {"role": "assistant", "content": "hello"}
    body = build([*HI, AIMessage("", additional_kwargs={"tool_calls": []}), HumanMessage("again")])
    assert body["messages"][1] == {"role": "assistant", "content": ""}


def _search_call(call_id: str, arguments: str) -> dict[str, Any]:
    function = {"name": "$web_search", "arguments": arguments}
    return {"id": call_id, "type": "builtin_function", "function": function}


CLIENT_CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
}


def test_mixed_builtin_and_client_calls() -> None:
    search, client = _search_call("s1", '{"q":1}'), CLIENT_CALL
    ai = AIMessage("", additional_kwargs={"tool_calls": [search, client]}, tool_calls=[_call("c1")])
    body = build([*HI, ai, ToolMessage("sunny", tool_call_id="c1")])
    assert body["messages"][1]["tool_calls"] == [search, client]
    assert body["messages"][2:] == [
        {"role": "tool", "tool_call_id": "s1", "content": '{"q":1}'},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    # The caller answered the builtin call itself: no duplicate answer.
    body = build(
        [*HI, ai, ToolMessage("x", tool_call_id="s1"), ToolMessage("y", tool_call_id="c1")]
    )
    assert [m["tool_call_id"] for m in body["messages"][2:]] == ["s1", "c1"]


def test_one_ai_message_replays_as_search_rounds_then_client_calls() -> None:
    """A reply that ran two `$web_search` rounds, then asked for a client call mixed with one
    more search, is ONE AIMessage; on the wire it is every round verbatim, the final assistant
    message with only its own reasoning, the builtin answer, then the caller's tool result."""
    rounds: list[dict[str, Any]] = []
    for n in (1, 2):
        call = _search_call(f"s{n}", f'{{"q":{n}}}')
        rounds += [
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": f"r{n}. ",
                "tool_calls": [call],
            },
            {"role": "tool", "tool_call_id": f"s{n}", "content": f'{{"q":{n}}}'},
        ]
    search, client = _search_call("s3", '{"q":3}'), CLIENT_CALL
    ai = AIMessage(
        "",
        additional_kwargs={
            "reasoning_content": "r1. r2. final.",
            "builtin_rounds": rounds,
            "tool_calls": [search, client],
        },
        tool_calls=[_call("c1")],
    )
    body = build([*HI, ai, ToolMessage("sunny", tool_call_id="c1")])
    assert body["messages"] == [
        {"role": "user", "content": "hi"},
        *rounds,
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "final.",
            "tool_calls": [search, client],
        },
        {"role": "tool", "tool_call_id": "s3", "content": '{"q":3}'},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]


def test_message_from_anthropic_protocol() -> None:
    ai = AIMessage(
        [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "Searching."},
            {"type": "server_tool_use", "id": "srv", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "srv", "content": []},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
        additional_kwargs={
            "thinking_blocks": [{"type": "thinking", "thinking": "hmm", "signature": "sig"}]
        },
        tool_calls=[_call("toolu_1")],
    )
    body = build([*HI, ai, ToolMessage("sunny", tool_call_id="toolu_1")])
    assert body["messages"][1] == {
        "role": "assistant",
        "content": "Searching.",
        "reasoning_content": "hmm",
        "tool_calls": [
            {
                "id": "toolu_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }


def test_v1_content_blocks_map_back() -> None:
    ai = AIMessage(
        [
            {"type": "reasoning", "reasoning": "step "},
            {"type": "reasoning", "reasoning": "two"},
            {"type": "text", "text": "ok"},
            {"type": "tool_call", "id": "c1", "name": "get_weather", "args": {"city": "Oslo"}},
        ]
    )
    body = build([*HI, ai, ToolMessage("cold", tool_call_id="c1")])
    assistant = body["messages"][1]
    assert assistant["reasoning_content"] == "step two"
    assert assistant["content"] == "ok"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"city": "Oslo"}


def test_call_without_id_refused() -> None:
    ai = AIMessage("", tool_calls=[{"id": None, "name": "f", "args": {}}])
    with pytest.raises(ValueError, match="no id"):
        build_request([*HI, ai], opts())
