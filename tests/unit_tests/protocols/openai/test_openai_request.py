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
    ChatMessage,
    FunctionMessage,
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


# --- the exact refusals and roles (pinned for the mutation sample) ------------------------------


@pytest.mark.parametrize(
    ("messages", "refusal"),
    [
        ([], "messages must not be empty (the Chat Completions schema requires minItems: 1)"),
        (
            [*HI, ToolMessage("x", tool_call_id="nope")],
            "ToolMessage with tool_call_id 'nope' answers no tool call of a preceding AIMessage",
        ),
        (
            [ChatMessage(role="assistant", content="x")],
            "unsupported message type ChatMessage for Chat Completions",
        ),
        (
            [FunctionMessage(name="f", content="x")],
            "unsupported message type FunctionMessage for Chat Completions",
        ),
        (
            [SystemMessage([{"type": "image", "url": "https://x/a.png"}]), *HI],
            "a system message may hold text only, got a 'image' block",
        ),
    ],
)
def test_refusals_say_exactly_what_is_wrong(messages: list[BaseMessage], refusal: str) -> None:
    with pytest.raises(ValueError) as refused:
        build_request(messages, opts())
    assert str(refused.value) == refusal


@pytest.mark.parametrize(
    ("role", "sent"), [("system", "system"), ("developer", "system"), ("user", "user")]
)
def test_chat_messages_by_role(role: str, sent: str) -> None:
    body = build([ChatMessage(role=role, content="x"), *HI])
    assert body["messages"][0] == {"role": sent, "content": "x"}


def test_a_named_choice_without_tools_and_a_schema_less_format_are_refused() -> None:
    with pytest.raises(ValueError) as refused:
        build_request(HI, opts(tool_choice=ToolChoice("named", "f")))
    assert str(refused.value) == "tool_choice 'named' needs at least one tool"
    no_schema = OutputFormat(kind="json_schema", name="x", schema=None)
    with pytest.raises(ValueError) as refused:
        build_request(HI, opts(output_format=no_schema))
    assert str(refused.value) == "output_format json_schema needs a schema"


def test_web_search_and_functions_are_all_declared_whatever_their_order() -> None:
    body = build(HI, tools=(WebSearchToolSpec(), WEATHER))
    assert [tool["type"] for tool in body["tools"]] == ["web_search", "function"]


def test_the_builtin_answers_follow_the_tool_messages_run_only() -> None:
    """The caller's ToolMessages right after the mixed reply are read up to the first other
    message; a later ToolMessage of another turn does not count as an answer."""
    search, client = _search_call("s1", '{"q":1}'), CLIENT_CALL
    ai = AIMessage("", additional_kwargs={"tool_calls": [search, client]}, tool_calls=[_call("c1")])
    body = build([*HI, ai, ToolMessage("sunny", tool_call_id="c1"), HumanMessage("thanks")])
    assert [m.get("tool_call_id") for m in body["messages"][2:]] == ["s1", "c1", None]


# --- content mapping, pinned for the mutation sample of openai_chat/content.py ------------------


def _replayed(ai: AIMessage) -> dict[str, Any]:
    body: dict[str, Any] = build_request([*HI, ai], opts())
    return body["messages"][1]  # type: ignore[no-any-return]


def test_reasoning_is_read_from_thinking_blocks_when_no_reasoning_content() -> None:
    thinking = [{"type": "thinking"}, {"type": "thinking", "thinking": "hmm", "signature": "s"}]
    ai = AIMessage("ok", additional_kwargs={"thinking_blocks": thinking})
    assert _replayed(ai)["reasoning_content"] == "hmm"


def test_reasoning_is_read_from_content_blocks_among_plain_strings() -> None:
    ai = AIMessage(["plain ", {"type": "reasoning"}, {"type": "reasoning", "reasoning": "r"}])
    assert _replayed(ai) == {"role": "assistant", "content": "plain ", "reasoning_content": "r"}


def test_rounds_without_reasoning_leave_the_final_reasoning_whole() -> None:
    rounds = [
        {"role": "assistant", "content": None, "tool_calls": [_search_call("s1", "{}")]},
        {"role": "tool", "tool_call_id": "s1", "content": "{}"},
    ]
    ai = AIMessage("done", additional_kwargs={"reasoning_content": "r", "builtin_rounds": rounds})
    body = build([*HI, ai])
    assert body["messages"][3] == {"role": "assistant", "content": "done", "reasoning_content": "r"}


def test_an_edited_reasoning_that_no_longer_starts_with_the_rounds_is_sent_whole() -> None:
    rounds = [
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "r1. ",
            "tool_calls": [_search_call("s1", "{}")],
        },
        {"role": "tool", "tool_call_id": "s1", "content": "{}"},
    ]
    kwargs = {"reasoning_content": "edited", "builtin_rounds": rounds}
    body = build([*HI, AIMessage("done", additional_kwargs=kwargs)])
    assert body["messages"][3]["reasoning_content"] == "edited"


def test_tool_call_blocks_are_replayed_when_tool_calls_are_empty() -> None:
    block = {"type": "tool_call", "id": "c1", "name": "get_weather", "args": {"city": "Oslo"}}
    ai = AIMessage([block], additional_kwargs={"reasoning_content": "r"})
    ai.tool_calls = []  # a message whose calls live only in its content blocks
    assert _replayed(ai)["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
        }
    ]


def _raw(call_id: str, arguments: str, **extra: Any) -> dict[str, Any]:
    return {"id": call_id, "function": {"name": "get_weather", "arguments": arguments}, **extra}


def test_raw_calls_keep_their_order_invalid_ones_included() -> None:
    bad, good = _raw("b1", "oops", type="function"), _raw("c1", '{"city":"Paris"}')
    ai = AIMessage(
        "",
        additional_kwargs={"tool_calls": [bad, good]},
        tool_calls=[_call("c1")],
        invalid_tool_calls=[{"id": "b1", "name": "get_weather", "args": "oops", "error": "e"}],
    )
    assert _replayed(ai)["tool_calls"] == [bad, {**good, "type": "function"}]


def test_a_call_the_caller_removed_is_not_sent_and_the_rest_keep_their_strings() -> None:
    removed, kept = _raw("c1", '{"city":"Paris"}'), _raw("c2", '{"city":"Oslo"}')
    ai = AIMessage(
        "",
        additional_kwargs={"tool_calls": [removed, kept]},
        tool_calls=[_call("c2", args={"city": "Oslo"})],
    )
    assert _replayed(ai)["tool_calls"] == [{**kept, "type": "function"}]


def test_unreadable_raw_arguments_are_rebuilt_from_the_current_call() -> None:
    ai = AIMessage(
        "", additional_kwargs={"tool_calls": [_raw("c1", "oops")]}, tool_calls=[_call("c1")]
    )
    assert _replayed(ai)["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'


def test_an_invalid_call_without_raw_form_or_name_or_arguments_is_rebuilt_empty() -> None:
    invalid = {"id": "b1", "name": None, "args": None, "error": "e"}
    ai = AIMessage("", invalid_tool_calls=[invalid])
    assert _replayed(ai)["tool_calls"] == [
        {"id": "b1", "type": "function", "function": {"name": "", "arguments": ""}}
    ]


def test_a_call_without_id_is_refused_by_name() -> None:
    ai = AIMessage("", tool_calls=[{"name": "get_weather", "args": {}, "id": None}])
    with pytest.raises(ValueError) as refused:
        _replayed(ai)
    assert str(refused.value) == (
        "tool call 'get_weather' has no id; Chat Completions needs one to replay it"
    )


def test_empty_text_parts_are_empty_strings() -> None:
    body = build([SystemMessage([{"type": "text"}, "s"]), HumanMessage([{"type": "text"}, "h"])])
    assert body["messages"][0]["content"] == "\n\ns"
    assert body["messages"][1]["content"][0] == {"type": "text", "text": ""}


@pytest.mark.parametrize(
    ("caps_change", "message", "refusal"),
    [
        (
            {"image_inputs": False},
            HumanMessage([{"type": "image", "url": "data:image/png;base64,AA"}]),
            "kimi-k3.1-pro does not support image inputs on the Chat Completions protocol",
        ),
        (
            {"video_inputs": False},
            HumanMessage([{"type": "video_url", "video_url": "data:video/mp4;base64,AA"}]),
            "kimi-k3.1-pro does not support video inputs on the Chat Completions protocol",
        ),
        (
            {"image_media_types": ("image/png", "image/gif")},
            HumanMessage([{"type": "image", "base64": "AA", "mime_type": "image/jpeg"}]),
            "unsupported image type 'image/jpeg' for kimi-k3.1-pro: allowed image/png, image/gif",
        ),
    ],
)
def test_content_refusals_name_what_the_row_lacks(
    caps_change: dict[str, Any], message: BaseMessage, refusal: str
) -> None:
    caps = replace(capabilities(K31_PRO, "openai"), **caps_change)
    with pytest.raises(ValueError) as refused:
        build_request([message], RequestOptions(caps=caps))
    assert str(refused.value) == refusal


def test_an_allowed_image_type_and_videos_pass_a_row_with_a_type_list() -> None:
    caps = replace(capabilities(K31_PRO, "openai"), image_media_types=("image/png",))
    parts = [
        {"type": "image", "base64": "AA", "mime_type": "image/png"},
        {"type": "video", "base64": "VV", "mime_type": "video/mp4"},
    ]
    body = build_request([HumanMessage(parts)], RequestOptions(caps=caps))
    assert [p["type"] for p in body["messages"][0]["content"]] == ["image_url", "video_url"]


def test_images_in_tool_results_are_refused_in_these_words() -> None:
    caps = replace(capabilities(K31_PRO, "openai"), image_tool_message=False)
    ai = AIMessage("", tool_calls=[_call("c1")])
    image = {"type": "image", "base64": "AA", "mime_type": "image/png"}
    with pytest.raises(ValueError) as refused:
        build_request([*HI, ai, ToolMessage([image], tool_call_id="c1")], RequestOptions(caps=caps))
    assert str(refused.value) == (
        "kimi-k3.1-pro does not support images in tool results on the Chat Completions protocol"
    )


def test_a_web_url_warning_quotes_the_document_and_the_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain_kimi.protocols.openai_chat import content

    monkeypatch.setattr(content, "_warned_media_urls", set())
    url = "https://example.com/" + "a" * 100 + ".png"
    with pytest.warns(UserWarning, match="Chat Completions documents images") as caught:
        build([HumanMessage([{"type": "image", "url": url}])])
    (said,) = [str(w.message) for w in caught]
    assert said == (
        "Chat Completions documents images as base64 data URLs only "
        '("Contenido de imagen como URL data Base64 (data:image/png;base64,...)"); sending the '
        f"image URL {url[:80]!r} as is, the service may not fetch it"
    )


def test_a_url_part_without_a_url_string_is_refused() -> None:
    part = {"type": "image_url", "image_url": {"url": None}}
    with pytest.raises(ValueError, match="a image_url part needs a url"):
        build_request([HumanMessage([part])], opts())


def test_a_part_that_is_neither_text_nor_a_block_is_refused_by_its_type() -> None:
    """Content assigned after construction is not validated by langchain-core."""
    system, human = SystemMessage("s"), HumanMessage("h")
    system.content = [5]  # type: ignore[list-item]
    human.content = [5]  # type: ignore[list-item]
    with pytest.raises(ValueError) as refused:
        build_request([system, *HI], opts())
    assert str(refused.value) == "a system message may hold text only, got a 'int' block"
    with pytest.raises(ValueError) as refused:
        build_request([human], opts())
    assert str(refused.value) == (
        "unsupported content block type None (text, image and video only)"
    )
