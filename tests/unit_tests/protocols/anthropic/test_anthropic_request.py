"""build_request for the Messages protocol: body fields, capability refusals, message mapping,
assistant replay. Every body built here is validated against the published schema."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import replace
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
from langchain_kimi._request.profiles import capabilities
from langchain_kimi.protocols.anthropic_messages import ADAPTER, build_request, parse_response
from tools.schema_validation import validate_request

K31 = "kimi-k3.1-pro"
K31_HS = "kimi-k3.1-pro-highspeed"
K3 = "kimi-k3"
PNG = "iVBORw0KGgo="
WEATHER = FunctionToolSpec(
    name="get_weather",
    description="Get the weather.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    strict=True,
)
CLOCK = FunctionToolSpec(name="clock", description="", parameters={"type": "object"})


PLACEHOLDER_THINKING = {"type": "thinking", "thinking": FOREIGN_TURN_REASONING}
"""What a tool-call turn without reasoning gets (issue 11 item 10)."""


def opts(model: str = K31, **kwargs: Any) -> RequestOptions:
    return RequestOptions(caps=capabilities(model, "anthropic"), **kwargs)


def build(
    messages: Sequence[BaseMessage], model: str = K31, *, validate: bool = True, **kwargs: Any
) -> dict[str, Any]:
    body = build_request(messages, opts(model, **kwargs))
    if validate:
        validate_request(body, "anthropic", model)
    return body


HI = [HumanMessage("hi")]


# --- top-level fields ----------------------------------------------------------------------


def test_adapter_shape() -> None:
    assert ADAPTER.path == "/v1/messages"
    body = ADAPTER.build_request(HI, opts())
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert ADAPTER.new_decoder().feed("ping", "{}") == []


@pytest.mark.parametrize("model", [K31, K31_HS, K3])
def test_minimal_body(model: str) -> None:
    body = build(HI, model)
    assert body == {
        "model": model,
        "max_tokens": 131072,
        "messages": [{"role": "user", "content": "hi"}],
    }


def test_max_tokens_and_stream() -> None:
    body = build(HI, max_tokens=1000, stream=True)
    assert body["max_tokens"] == 1000
    assert body["stream"] is True


def test_sampling_never_sent() -> None:
    body = build(HI, temperature=0.3, top_p=0.5)
    assert "temperature" not in body
    assert "top_p" not in body


def test_extra_body_merged_last() -> None:
    body = build(HI, validate=False, extra_body={"max_tokens": 7, "metadata": {"x": 1}})
    assert body["max_tokens"] == 7
    assert body["metadata"] == {"x": 1}


def test_system_messages_joined_as_string() -> None:
    msgs = [SystemMessage("one"), SystemMessage("two"), HumanMessage("hi")]
    for model in (K31, K3):
        body = build(msgs, model)
        assert body["system"] == "one\n\ntwo"
        assert body["messages"] == [{"role": "user", "content": "hi"}]


def test_system_blocks_on_k31_string_on_k3() -> None:
    blocks: list[str | dict[str, Any]] = [
        {"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "more"},
    ]
    msgs = [SystemMessage(content=blocks), HumanMessage("hi")]
    assert build(msgs, K31)["system"] == [
        {"type": "text", "text": "rules"},
        {"type": "text", "text": "more"},
    ]
    assert build(msgs, K3)["system"] == "rules\n\nmore"
    with pytest.raises(ValueError, match="system"):
        build([SystemMessage(content=[{"type": "image", "url": "https://x/y.png"}]), *HI])


def test_stop_sequences_k31() -> None:
    body = build(HI, stop=("END", "ÿ" * 16))  # 32 bytes exactly
    assert body["stop_sequences"] == ["END", "ÿ" * 16]
    # Limits (5 sequences, 32 bytes) are refused in _resolve: test_capability_refusals.py.


def test_stop_not_sent_without_native_support() -> None:
    body = build(HI, K3, stop=tuple("abcdefg"))
    assert "stop_sequences" not in body


def test_effort_k31_and_k3() -> None:
    assert build(HI, reasoning_effort="low")["output_config"] == {"effort": "low"}
    body = build(HI, K3, reasoning_effort="max")
    assert "output_config" not in body


def test_structured_output() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    body = build(
        HI, reasoning_effort="high", output_format=OutputFormat("json_schema", schema=schema)
    )
    assert body["output_config"] == {
        "effort": "high",
        "format": {"type": "json_schema", "schema": schema},
    }
    # A shape the Messages wire cannot express, whatever the model: refused by the adapter.
    with pytest.raises(ValueError, match="json_object"):
        build(HI, output_format=OutputFormat("json_object"))


def test_cache_ttl() -> None:
    assert build(HI, cache_ttl="1h")["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


# --- tools ---------------------------------------------------------------------------------


def test_function_and_web_search_tools() -> None:
    body = build(HI, tools=(WEATHER, CLOCK, WebSearchToolSpec(max_uses=2)))
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Get the weather.",
            "input_schema": WEATHER.parameters,
        },
        {"name": "clock", "input_schema": {"type": "object"}},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
    ]
    assert "tool_choice" not in body


def test_web_search_raw_verbatim() -> None:
    raw = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
    assert build(HI, tools=(WebSearchToolSpec(max_uses=1, raw=raw),))["tools"] == [raw]


def test_128_tools_mapped() -> None:
    many = tuple(
        FunctionToolSpec(name=f"t{i}", description="", parameters={"type": "object"})
        for i in range(128)
    )
    assert [t["name"] for t in build(HI, tools=many)["tools"]] == [f"t{i}" for i in range(128)]


def test_no_tool_count_limit() -> None:
    # `maxItems: 128` is Chat Completions' (004); the Messages documents set none.
    many = tuple(
        FunctionToolSpec(name=f"t{i}", description="", parameters={"type": "object"})
        for i in range(129)
    )
    assert len(build(HI, tools=many)["tools"]) == 129


@pytest.mark.parametrize("mode", ["auto", "any", "none"])
def test_tool_choice_k31(mode: str) -> None:
    body = build(HI, tools=(WEATHER,), tool_choice=ToolChoice(mode))  # type: ignore[arg-type]
    assert body["tool_choice"] == {"type": mode}
    assert len(body["tools"]) == 1


def test_named_choice_k31_sends_only_that_tool_with_any() -> None:
    body = build(
        HI,
        tools=(WEATHER, CLOCK, WebSearchToolSpec()),
        tool_choice=ToolChoice("named", "clock"),
    )
    assert body["tools"] == [{"name": "clock", "input_schema": {"type": "object"}}]
    assert body["tool_choice"] == {"type": "any"}


def test_tool_choice_k3() -> None:
    named = build(HI, K3, tools=(WEATHER, CLOCK), tool_choice=ToolChoice("named", "clock"))
    assert named["tool_choice"] == {"type": "tool", "name": "clock"}
    assert len(named["tools"]) == 2
    assert build(HI, K3, tools=(WEATHER,), tool_choice=ToolChoice("any"))["tool_choice"] == {
        "type": "any"
    }
    assert build(HI, K3, tools=(WEATHER,), tool_choice=ToolChoice("auto"))["tool_choice"] == {
        "type": "auto"
    }
    none = build(HI, K3, tools=(WEATHER,), tool_choice=ToolChoice("none"))
    assert "tools" not in none
    assert "tool_choice" not in none


def test_named_choice_must_exist() -> None:
    for model in (K31, K3):
        with pytest.raises(ValueError, match="not among the tools"):
            build(HI, model, tools=(WEATHER,), tool_choice=ToolChoice("named", "nope"))
    with pytest.raises(ValueError, match="at least one tool"):
        build(HI, tool_choice=ToolChoice("any"))


def test_unknown_model_skips_checks_but_builds() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        caps = capabilities("kimi-k9", "anthropic")
    body = build_request(
        HI,
        RequestOptions(caps=caps, reasoning_effort="max", cache_ttl="5m", stop=tuple("abcdefg")),
    )
    assert body["model"] == "kimi-k9"
    assert body["output_config"] == {"effort": "max"}
    assert len(body["stop_sequences"]) == 7


# --- messages ------------------------------------------------------------------------------


def test_empty_inputs_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        build([])
    with pytest.raises(ValueError, match="user or assistant"):
        build([SystemMessage("only")])


def _call(call_id: str = "functions.get_weather:0") -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": call_id}],
    )


def test_tool_round_merges_into_one_user_turn() -> None:
    msgs: list[BaseMessage] = [
        HumanMessage("weather?"),
        AIMessage(
            content="",
            tool_calls=[
                {"name": "get_weather", "args": {"city": "Paris"}, "id": "functions.get_weather:0"},
                {"name": "get_weather", "args": {"city": "Rome"}, "id": "functions.get_weather:1"},
            ],
        ),
        ToolMessage("sunny", tool_call_id="functions.get_weather:0"),
        ToolMessage("boom", tool_call_id="functions.get_weather:1", status="error"),
        HumanMessage("and tomorrow?"),
    ]
    for model in (K31, K3):
        body = build(msgs, model)
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
        assert body["messages"][1]["content"] == [
            PLACEHOLDER_THINKING,
            {
                "type": "tool_use",
                "id": "functions.get_weather:0",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
            {
                "type": "tool_use",
                "id": "functions.get_weather:1",
                "name": "get_weather",
                "input": {"city": "Rome"},
            },
        ]
        assert body["messages"][2]["content"] == [
            {"type": "tool_result", "tool_use_id": "functions.get_weather:0", "content": "sunny"},
            {
                "type": "tool_result",
                "tool_use_id": "functions.get_weather:1",
                "content": "boom",
                "is_error": True,
            },
            {"type": "text", "text": "and tomorrow?"},
        ]


def test_consecutive_same_role_turns_merge() -> None:
    body = build([HumanMessage("a"), HumanMessage("b"), AIMessage("x"), AIMessage("y")])
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}],
        },
    ]


def test_unmatched_tool_call_id_refused() -> None:
    with pytest.raises(ValueError, match="call_9"):
        build([HumanMessage("q"), _call(), ToolMessage("r", tool_call_id="call_9")])
    with pytest.raises(ValueError, match="call_1"):
        build([HumanMessage("q"), ToolMessage("r", tool_call_id="call_1")])


def test_tool_result_blocks_k31_and_flattened_k3() -> None:
    content: list[str | dict[str, Any]] = [
        {"type": "text", "text": "chart: "},
        {"type": "image", "base64": PNG, "mime_type": "image/png"},
    ]
    history: list[BaseMessage] = [HumanMessage("q"), _call()]
    body = build([*history, ToolMessage(content=content, tool_call_id="functions.get_weather:0")])
    assert body["messages"][2]["content"][0]["content"] == [
        {"type": "text", "text": "chart: "},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ]
    texts: list[str | dict[str, Any]] = [{"type": "text", "text": "a"}, "b"]
    k3 = build([*history, ToolMessage(content=texts, tool_call_id="functions.get_weather:0")], K3)
    assert k3["messages"][2]["content"][0]["content"] == "ab"
    with pytest.raises(ValueError, match="images in tool results"):
        build([*history, ToolMessage(content=content, tool_call_id="functions.get_weather:0")], K3)


IMAGE_FORMS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (
        {"type": "image", "base64": PNG, "mime_type": "image/png"},
        {"type": "base64", "media_type": "image/png", "data": PNG},
    ),
    (
        {"type": "image", "url": "https://x.test/a.jpg"},
        {"type": "url", "url": "https://x.test/a.jpg"},
    ),
    (
        {"type": "image_url", "image_url": {"url": f"data:image/webp;base64,{PNG}"}},
        {"type": "base64", "media_type": "image/webp", "data": PNG},
    ),
    (
        {"type": "image_url", "image_url": "https://x.test/b.gif"},
        {"type": "url", "url": "https://x.test/b.gif"},
    ),
    (
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/jpeg", "data": PNG},
            "cache_control": {"type": "ephemeral"},
        },
        {"type": "base64", "media_type": "image/jpeg", "data": PNG},
    ),
]


@pytest.mark.parametrize(("part", "source"), IMAGE_FORMS)
def test_image_forms(part: dict[str, Any], source: dict[str, Any]) -> None:
    body = build([HumanMessage(content=["look", part])])
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image", "source": source},
    ]


def test_image_refusals() -> None:
    with pytest.raises(ValueError, match="image/bmp"):
        build([HumanMessage(content=[{"type": "image", "base64": PNG, "mime_type": "image/bmp"}])])
    with pytest.raises(ValueError, match="kimi-k3"):
        build([HumanMessage(content=[IMAGE_FORMS[0][0]])], K3)
    for video in (
        {"type": "video", "url": "https://x.test/v.mp4"},
        {"type": "video_url", "video_url": {"url": "https://x.test/v.mp4"}},
    ):
        with pytest.raises(ValueError, match="protocol='openai'"):
            build([HumanMessage(content=[video])])


def test_block_level_cache_control_stripped() -> None:
    msgs = [
        HumanMessage(
            content=[{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]
        )
    ]
    assert build(msgs)["messages"][0]["content"] == "x"


# --- replay --------------------------------------------------------------------------------

SIGNED = {"type": "thinking", "thinking": "Let me think.", "signature": "sig=="}
REPLY: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": K31,
    "content": [
        SIGNED,
        {"type": "text", "text": "Checking."},
        {
            "type": "tool_use",
            "id": "functions.get_weather:0",
            "name": "get_weather",
            "input": {"city": "Paris"},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 5},
}


def _replay(ai: AIMessage, model: str = K31) -> list[dict[str, Any]]:
    body = build(
        [HumanMessage("q"), ai, ToolMessage("sunny", tool_call_id="functions.get_weather:0")], model
    )
    content: list[dict[str, Any]] = body["messages"][1]["content"]
    return content


def test_unchanged_reply_is_sent_verbatim() -> None:
    ai = parse_response(REPLY)
    assert _replay(ai) == REPLY["content"]


def test_edited_text_rebuilds_keeping_signed_thinking() -> None:
    ai = parse_response(REPLY)
    edited = ai.model_copy(update={"content": "Edited."})
    assert _replay(edited) == [SIGNED, {"type": "text", "text": "Edited."}, REPLY["content"][2]]


def test_edited_tool_args_win() -> None:
    ai = parse_response(REPLY)
    call = {**ai.tool_calls[0], "args": {"city": "Lyon"}}
    edited = ai.model_copy(update={"tool_calls": [call]})
    assert _replay(edited)[2]["input"] == {"city": "Lyon"}


def test_edited_reasoning_drops_signature() -> None:
    ai = parse_response(REPLY)
    kwargs = {**ai.additional_kwargs, "reasoning_content": "New thought."}
    edited = ai.model_copy(update={"additional_kwargs": kwargs})
    assert _replay(edited)[0] == {"type": "thinking", "thinking": "New thought."}


def test_openai_origin_message_gets_unsigned_thinking() -> None:
    ai = _call().model_copy(
        update={"additional_kwargs": {"reasoning_content": "hmm"}, "content": "ok"}
    )
    for model in (K31, K3):
        assert _replay(ai, model) == [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "ok"},
            {
                "type": "tool_use",
                "id": "functions.get_weather:0",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ]


SEARCH_REPLY = {
    **REPLY,
    "content": [
        {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "q"}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srv_1",
            "content": [{"type": "web_search_result", "url": "https://a.test"}],
        },
        {
            "type": "text",
            "text": "Found.",
            "citations": [{"type": "web_search_result_location", "url": "https://a.test"}],
        },
    ],
    "stop_reason": "end_turn",
}


def test_server_blocks_replayed_on_k31_dropped_on_k3() -> None:
    ai = parse_response(SEARCH_REPLY)
    assert ai.tool_calls == []
    k31 = build([HumanMessage("q"), ai, HumanMessage("more")])
    assert k31["messages"][1]["content"] == SEARCH_REPLY["content"]
    k3 = build([HumanMessage("q"), ai, HumanMessage("more")], K3)
    # Rebuilt from the message text: the citations pointed at search results k3 cannot take.
    assert k3["messages"][1]["content"] == [{"type": "text", "text": "Found."}]


def test_v1_standard_blocks_map_back() -> None:
    ai = AIMessage(
        content=[
            {"type": "reasoning", "reasoning": "think", "extras": {"signature": "s1"}},
            {
                "type": "server_tool_call",
                "id": "srv_1",
                "name": "web_search",
                "args": {"query": "q"},
            },
            {
                "type": "server_tool_result",
                "tool_call_id": "srv_1",
                "status": "success",
                "output": [{"type": "web_search_result", "url": "https://a.test"}],
                "extras": {"block_type": "web_search_tool_result"},
            },
            {"type": "text", "text": "answer", "index": 3},
            {
                "type": "tool_call",
                "id": "functions.get_weather:0",
                "name": "get_weather",
                "args": {"city": "Paris"},
            },
        ],
        tool_calls=[
            {"name": "get_weather", "args": {"city": "Paris"}, "id": "functions.get_weather:0"}
        ],
    )
    assert _replay(ai) == [
        {"type": "thinking", "thinking": "think", "signature": "s1"},
        {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "q"}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srv_1",
            "content": [{"type": "web_search_result", "url": "https://a.test"}],
        },
        {"type": "text", "text": "answer"},
        {
            "type": "tool_use",
            "id": "functions.get_weather:0",
            "name": "get_weather",
            "input": {"city": "Paris"},
        },
    ]


def test_native_content_list_and_missing_tool_calls_appended() -> None:
    ai = AIMessage(
        content=[
            {"type": "thinking", "thinking": "t", "signature": "s", "index": 0},
            {"type": "text", "text": "hi"},
        ],
        tool_calls=[
            {"name": "get_weather", "args": {"city": "Paris"}, "id": "functions.get_weather:0"}
        ],
    )
    blocks = _replay(ai)
    assert blocks[0] == {"type": "thinking", "thinking": "t", "signature": "s"}
    assert blocks[2]["type"] == "tool_use"


def test_empty_assistant_message_dropped() -> None:
    body = build([HumanMessage("a"), AIMessage(""), HumanMessage("b")])
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]


# --- a call whose arguments were not a JSON object, from another protocol --------------------

_BAD_ARGS = '{"city": "Par'


def _invalid_call_history(content: Any) -> list[BaseMessage]:
    return [
        HumanMessage("Weather in Paris?"),
        AIMessage(
            content=content,
            invalid_tool_calls=[
                {
                    "type": "invalid_tool_call",
                    "name": "get_weather",
                    "args": _BAD_ARGS,
                    "id": "functions.get_weather:0",
                    "error": None,
                }
            ],
        ),
        ToolMessage("bad arguments", tool_call_id="functions.get_weather:0", status="error"),
    ]


@pytest.mark.parametrize(
    "content",
    [
        "",
        [
            {
                "type": "invalid_tool_call",
                "name": "get_weather",
                "args": _BAD_ARGS,
                "id": "functions.get_weather:0",
                "error": None,
            }
        ],
    ],
    ids=["default", "v1"],
)
def test_invalid_tool_call_keeps_its_turn_and_result_paired(content: Any) -> None:
    body = build(_invalid_call_history(content))
    assistant, result = body["messages"][1], body["messages"][2]
    assert assistant["content"] == [
        PLACEHOLDER_THINKING,
        {"type": "tool_use", "id": "functions.get_weather:0", "name": "get_weather", "input": {}},
    ]
    assert result["content"][0]["tool_use_id"] == "functions.get_weather:0"
    assert result["content"][0]["is_error"] is True


# --- exact refusals, roles and tool declarations (pinned for the mutation sample) --------------


def _refusal(messages: Sequence[BaseMessage], model: str = K31, **kwargs: Any) -> str:
    with pytest.raises(ValueError) as refused:
        build_request(messages, opts(model, **kwargs))
    return str(refused.value)


def test_refusals_of_the_history_say_exactly_what_is_wrong() -> None:
    assert _refusal([]) == "messages must not be empty"
    assert _refusal([SystemMessage("s")]) == (
        "at least one user or assistant message is required besides system messages"
    )
    assert _refusal([HumanMessage("hi"), ToolMessage("x", tool_call_id="nope")]) == (
        "ToolMessage tool_call_id 'nope' matches no tool call in the preceding AI messages"
    )
    for message in (ChatMessage(role="tool", content="x"), FunctionMessage(name="f", content="x")):
        assert _refusal([message]) == (
            f"unsupported message type {type(message).__name__} for the anthropic protocol"
        )
    image = {"type": "image", "url": "https://x/a.png"}
    assert _refusal([SystemMessage([image]), HumanMessage("hi")]) == (
        "system messages may only hold text on the anthropic protocol, got 'image'"
    )
    system = SystemMessage("s")
    system.content = [5]  # type: ignore[list-item]  # assigned: not validated by langchain-core
    assert _refusal([system, HumanMessage("hi")]) == (
        "system messages may only hold text on the anthropic protocol, got 'int'"
    )


@pytest.mark.parametrize(
    ("role", "sent"),
    [
        ("system", None),
        ("user", "user"),
        ("human", "user"),
        ("assistant", "assistant"),
        ("ai", "assistant"),
    ],
)
def test_chat_messages_by_role(role: str, sent: str | None) -> None:
    body = build([HumanMessage("hi"), ChatMessage(role=role, content="x"), HumanMessage("go")])
    if sent is None:
        assert body["system"] == "x"
        assert len(body["messages"]) == 1
    elif sent == "user":
        assert body["messages"] == [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "text", "text": "x"},
                    {"type": "text", "text": "go"},
                ],
            }
        ]
    else:
        assert body["messages"][1] == {
            "role": "assistant",
            "content": [{"type": "text", "text": "x"}],
        }


def test_system_string_parts_are_kept_and_empty_text_parts_dropped() -> None:
    body = build([SystemMessage(["plain", {"type": "text"}, {"type": "text", "text": "b"}]), *HI])
    assert body["system"] == [{"type": "text", "text": "plain"}, {"type": "text", "text": "b"}]


def test_output_format_refusals_say_exactly_what_is_wrong() -> None:
    json_object = OutputFormat(kind="json_object")
    assert _refusal(HI, output_format=json_object) == (
        "JSON mode (json_object) is not available on the anthropic protocol"
    )
    no_schema = OutputFormat(kind="json_schema", schema=None)
    assert _refusal(HI, output_format=no_schema) == "a json_schema output format needs a schema"


def test_tool_choice_refusals_say_exactly_what_is_wrong() -> None:
    assert _refusal(HI, tool_choice=ToolChoice("any")) == (
        "tool_choice 'any' needs at least one tool"
    )
    auto_only = replace(capabilities(K31, "anthropic"), tool_choice_forms=frozenset({"auto"}))
    for choice, refusal in [
        (ToolChoice("any"), "tool_choice 'any' is not supported by kimi-k3.1-pro on anthropic"),
        (
            ToolChoice("named", "get_weather"),
            "forcing a named tool is not supported by kimi-k3.1-pro on anthropic",
        ),
    ]:
        with pytest.raises(ValueError) as refused:
            build_request(HI, RequestOptions(caps=auto_only, tools=(WEATHER,), tool_choice=choice))
        assert str(refused.value) == refusal


def test_a_named_choice_that_would_drop_the_historys_tools_is_refused_in_full() -> None:
    call = {"name": "clock", "args": {}, "id": "c1", "type": "tool_call"}
    history = [
        *HI,
        AIMessage("", tool_calls=[call], additional_kwargs={"reasoning_content": "r"}),
        ToolMessage("noon", tool_call_id="c1"),
    ]
    refusal = _refusal(
        history, tools=(WEATHER, CLOCK), tool_choice=ToolChoice("named", "get_weather")
    )
    assert refusal == (
        "tool_choice 'get_weather' on kimi-k3.1-pro (Messages) is sent as 'any' with only that "
        "tool, but the history calls ['clock'], whose tools would then be missing; use "
        "tool_choice='any', or protocol='openai' (which names the tool)"
    )


def test_a_named_choice_sends_one_tool_even_when_two_share_its_name() -> None:
    body = build(HI, tools=(WEATHER, WEATHER), tool_choice=ToolChoice("named", "get_weather"))
    assert [tool["name"] for tool in body["tools"]] == ["get_weather"]
    assert body["tool_choice"] == {"type": "any"}


K3_NONE_WARNING = (
    'kimi-k3 on the Messages protocol cannot forbid tool calls (its tool_choice is "auto", '
    '"any" or "tool"); the tools are sent anyway because the history holds tool_use / '
    "tool_result blocks, so the model may still call one"
)


@pytest.mark.parametrize(
    ("history", "kept"),
    [
        # a call not answered yet: tool_use blocks only
        ([*HI, AIMessage("", tool_calls=[{"name": "clock", "args": {}, "id": "c1"}])], True),
        # a native tool_result in a user message: tool_result blocks only
        (
            [HumanMessage([{"type": "tool_result", "tool_use_id": "c1", "content": "noon"}])],
            True,
        ),
        # content blocks, but no tool block
        (
            [*HI, AIMessage("hello", additional_kwargs={"reasoning_content": "r"}), *HI],
            False,
        ),
    ],
)
def test_k3_none_keeps_the_tools_exactly_when_the_history_holds_a_tool_block(
    history: list[BaseMessage], kept: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_kimi.protocols.anthropic_messages import request

    monkeypatch.setattr(request, "_none_kept_tools_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        body = build(history, K3, tools=(CLOCK,), tool_choice=ToolChoice("none"), validate=False)
    assert ("tools" in body) is kept
    assert [str(w.message) for w in caught] == ([K3_NONE_WARNING] if kept else [])
