"""bind_tools / tool_choice / tool-call parsing / tool history, end to end through ChatKimi.

Every request goes through an `httpx.MockTransport` that records the JSON body, so the tests
check the wire body ChatKimi really sends (and validate it against spec/); nothing is networked.
"""

from __future__ import annotations

import json
import warnings
from typing import Any, NotRequired

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from langchain_kimi._request import resolve as _resolve
from langchain_kimi._request.options import (
    FunctionToolSpec,
    OutputFormat,
    ToolChoice,
    WebSearchToolSpec,
)
from langchain_kimi._request.tools import (
    output_format_from_response_format,
    resolve_tool_choice,
    schema_name_and_json,
    schema_parts,
    spec_to_bindable,
    to_tool_spec,
    to_tool_specs,
)
from tests.support.wire import ANTHROPIC_OK, OPENAI_OK, Wire
from tools.schema_validation import validate_response

K31, K3 = "kimi-k3.1-pro", "kimi-k3"


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"sunny in {city}"


@tool
def get_time() -> str:
    """Get the current UTC time."""
    return "12:00"


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


class Person(BaseModel):
    """A person to greet."""

    name: str = Field(description="the person's name")


class Move(TypedDict):
    """A chess move in algebraic notation."""

    san: str


JSON_SCHEMA_TOOL = {
    "title": "search_docs",
    "description": "Search the documentation.",
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
}
OPENAI_TOOL = {
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Look up an order by id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "integer"}}},
    },
}
ANTHROPIC_TOOL = {
    "name": "convert_currency",
    "description": "Convert an amount between currencies.",
    "input_schema": {
        "type": "object",
        "properties": {"amount": {"type": "number"}, "to": {"type": "string"}},
        "required": ["amount", "to"],
    },
}
ALL_FORMS: list[Any] = [
    get_weather,
    add,
    Person,
    Move,
    JSON_SCHEMA_TOOL,
    OPENAI_TOOL,
    ANTHROPIC_TOOL,
]


# ------------------------------------------------------------------ declarations


def test_every_tool_form_declared_like_chat_openai() -> None:
    wire = Wire("openai")
    wire.model.bind_tools(ALL_FORMS).invoke("hi")
    oracle = ChatOpenAI(model="gpt-4o", api_key="x").bind_tools(ALL_FORMS)  # type: ignore[arg-type]
    assert wire.body["tools"] == oracle.kwargs["tools"]  # type: ignore[attr-defined]
    names = [t["function"]["name"] for t in wire.body["tools"]]
    assert names[:5] == ["get_weather", "add", "Person", "Move", "search_docs"]
    assert names[5:] == ["lookup_order", "convert_currency"]


@pytest.mark.parametrize("model", [K31, K3])
def test_every_tool_form_declared_like_chat_anthropic(model: str) -> None:
    wire = Wire("anthropic", model)
    wire.model.bind_tools(ALL_FORMS).invoke("hi")
    oracle = ChatAnthropic(model="claude-sonnet-4-5", api_key="x")  # type: ignore[call-arg,arg-type]
    expected = oracle.bind_tools(ALL_FORMS).kwargs["tools"]  # type: ignore[attr-defined]
    assert wire.body["tools"] == expected
    assert all(set(t) <= {"name", "description", "input_schema"} for t in wire.body["tools"])
    assert wire.body["tools"][-1] == ANTHROPIC_TOOL


def test_strict_goes_on_openai_functions_only() -> None:
    openai = Wire("openai")
    openai.model.bind_tools([get_weather], strict=True).invoke("hi")
    assert openai.body["tools"][0]["function"]["strict"] is True
    anthropic = Wire("anthropic")
    anthropic.model.bind_tools([get_weather], strict=True).invoke("hi")
    assert "strict" not in anthropic.body["tools"][0]  # not in the Messages Tool schema


def test_parallel_tool_calls_is_never_sent() -> None:
    wire = Wire("openai")
    wire.model.bind_tools([get_weather], parallel_tool_calls=True).invoke("hi")
    assert "parallel_tool_calls" not in wire.body  # no such field in the Kimi schema


PARALLEL_WARNING = (
    "parallel_tool_calls=False has no documented field on either Kimi protocol and is not sent; "
    "the model may still return several tool calls"
)


def _parallel_warnings(caught: list[warnings.WarningMessage]) -> list[tuple[type, str]]:
    return [(w.category, str(w.message)) for w in caught if "parallel_tool" in str(w.message)]


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_parallel_tool_calls_false_warns_once_and_is_not_sent(
    protocol: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The warning is once per process (docs/tools.md): start from a process that has not warned,
    # whatever ran before this test.
    monkeypatch.setattr(_resolve, "_parallel_warned", False)
    wire = Wire(protocol)
    with warnings.catch_warnings(record=True) as first:
        warnings.simplefilter("always")
        bound = wire.model.bind_tools([get_weather], parallel_tool_calls=False)
    assert _parallel_warnings(first) == [(UserWarning, PARALLEL_WARNING)]
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        bound.invoke("hi")
    assert _parallel_warnings(again) == []
    assert "parallel_tool_calls" not in wire.body
    assert [t.get("name") or t["function"]["name"] for t in wire.body["tools"]] == ["get_weather"]


@pytest.mark.parametrize("protocol", ["openai"])  # 004's maxItems; Messages has no limit
def test_128_tools_accepted_129_refused_before_sending(protocol: str) -> None:
    schemas = [
        {"name": f"tool_{i}", "description": "d", "parameters": {"type": "object"}}
        for i in range(129)
    ]
    wire = Wire(protocol)
    with pytest.raises(ValueError, match="128"):
        wire.model.bind_tools(schemas)
    with pytest.raises(ValueError, match="128"):
        wire.model.invoke("hi", tools=schemas)
    assert wire.bodies == []
    wire.model.bind_tools(schemas[:128]).invoke("hi")
    assert len(wire.body["tools"]) == 128


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"name": "f", "input_schema": {"type": "array"}}, "type 'object'"),
        ({"name": "f", "input_schema": "not a schema"}, "JSON-schema object"),
        (
            {"type": "function", "function": {"name": "f", "parameters": {"type": "string"}}},
            "type 'object'",
        ),
        (42, "cannot use"),
        ("no_such_builtin", "unknown tool"),
    ],
)
def test_malformed_tools_are_refused_at_bind_time(bad: Any, match: str) -> None:
    wire = Wire("openai")
    with pytest.raises(ValueError, match=match):
        wire.model.bind_tools([bad])
    assert wire.bodies == []


# ------------------------------------------------------------------ tool_choice

# LangChain's tool_choice forms -> the neutral ToolChoice. What each ToolChoice becomes on the
# wire, per model, is tested once, in test_openai_request.py / test_anthropic_request.py.
NAMED = ToolChoice("named", "get_weather")
CHOICES: list[tuple[Any, ToolChoice]] = [
    ("auto", ToolChoice("auto")),
    ("any", ToolChoice("any")),
    ("required", ToolChoice("any")),
    (True, ToolChoice("any")),
    ("none", ToolChoice("none")),
    (False, ToolChoice("none")),
    ("get_weather", NAMED),
    ({"type": "function", "function": {"name": "get_weather"}}, NAMED),
    ({"type": "tool", "name": "get_weather"}, NAMED),
    ({"type": "auto"}, ToolChoice("auto")),
    ({"type": "any"}, ToolChoice("any")),
]


@pytest.mark.parametrize(("choice", "neutral"), CHOICES, ids=[repr(c) for c, _ in CHOICES])
def test_tool_choice_forms(choice: Any, neutral: ToolChoice) -> None:
    specs = to_tool_specs([get_weather, get_time])
    assert resolve_tool_choice(choice, specs) == neutral


def test_bound_tool_choice_reaches_the_adapter() -> None:
    wire = Wire("openai", calls=["get_weather"])  # "required": the reply calls a tool
    wire.model.bind_tools([get_weather, get_time], tool_choice="required").invoke("hi")
    assert wire.body["tool_choice"] == "required"
    assert [t["function"]["name"] for t in wire.body["tools"]] == ["get_weather", "get_time"]


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize(
    "choice", ["get_population", {"type": "function", "function": {"name": "x"}}, {"type": "?"}]
)
def test_bad_tool_choice_refused_at_bind_time(protocol: str, choice: Any) -> None:
    wire = Wire(protocol)
    with pytest.raises(ValueError, match="tool_choice"):
        wire.model.bind_tools([get_weather], tool_choice=choice)
    assert wire.bodies == []


# ------------------------------------------------------------------ parsing replies


def _openai_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


OPENAI_CALLS = {
    **OPENAI_OK,
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "reasoning_content": "Two lookups at once.",
                "tool_calls": [
                    _openai_call("functions.get_weather:0", "get_weather", '{"city":  "Paris"}'),
                    _openai_call("functions.get_time:1", "get_time", ""),
                    _openai_call("functions.get_time:2", "get_time", "{}"),
                    _openai_call("functions.get_weather:3", "get_weather", '{"city": "Par'),
                    _openai_call("functions.get_weather:4", "get_weather", '["Rome"]'),
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
}


def test_openai_tool_calls_parsed_ids_as_received() -> None:
    validate_response(OPENAI_CALLS, "openai", K31)
    reply = Wire("openai", reply=OPENAI_CALLS).model.invoke("hi")
    assert [(c["id"], c["name"], c["args"]) for c in reply.tool_calls] == [
        ("functions.get_weather:0", "get_weather", {"city": "Paris"}),
        ("functions.get_time:1", "get_time", {}),
        ("functions.get_time:2", "get_time", {}),
    ]
    assert [(c["id"], c["args"]) for c in reply.invalid_tool_calls] == [
        ("functions.get_weather:3", '{"city": "Par'),
        ("functions.get_weather:4", '["Rome"]'),
    ]
    raw = OPENAI_CALLS["choices"][0]["message"]["tool_calls"]  # type: ignore[index]
    assert reply.additional_kwargs["tool_calls"] == raw
    assert reply.response_metadata["finish_reason"] == "tool_calls"


ANTHROPIC_CALLS = {
    **ANTHROPIC_OK,
    "content": [
        {"type": "thinking", "thinking": "Two lookups.", "signature": "c2lnbmF0dXJl"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Oslo"}},
        {"type": "tool_use", "id": "toolu_01B", "name": "get_time", "input": {}},
    ],
    "stop_reason": "tool_use",
}


def test_anthropic_parallel_tool_calls_parsed() -> None:
    validate_response(ANTHROPIC_CALLS, "anthropic", K31)
    reply = Wire("anthropic", reply=ANTHROPIC_CALLS).model.invoke("hi")
    assert [(c["id"], c["name"], c["args"]) for c in reply.tool_calls] == [
        ("toolu_01A", "get_weather", {"city": "Oslo"}),
        ("toolu_01B", "get_time", {}),
    ]
    assert reply.content == "Checking."
    assert reply.response_metadata["finish_reason"] == "tool_calls"


def _sse(events: list[tuple[str | None, dict[str, Any] | str]]) -> str:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return "".join(out)


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-s",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": K31,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _tc(index: int, **fields: Any) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, **fields}]}


OPENAI_TOOL_STREAM = _sse(
    [
        (None, _chunk({"role": "assistant", "reasoning_content": "Two lookups"})),
        (None, _chunk({"reasoning_content": " at once."})),
        (
            None,
            _chunk(_tc(0, id="functions.get_weather:0", type="function", function={"name": ""})),
        ),
        (None, _chunk(_tc(0, function={"name": "get_weather", "arguments": '{"ci'}))),
        (None, _chunk(_tc(1, id="functions.get_time:1", type="function", function={"name": "ge"}))),
        (None, _chunk(_tc(0, function={"arguments": 'ty":  "Par'}))),
        (None, _chunk(_tc(1, function={"name": "t_time", "arguments": ""}))),
        (None, _chunk(_tc(0, function={"arguments": 'is"}'}))),
        (None, _chunk(_tc(2, id="functions.get_weather:2", type="function"))),
        (None, _chunk(_tc(2, function={"name": "get_weather", "arguments": '{"city": '}))),
        (None, _chunk(_tc(2, function={"arguments": "Rome}"}))),
        (None, _chunk({}, finish="tool_calls")),
        (None, "[DONE]"),
    ]
)
OPENAI_TOOL_STREAM_AS_BODY = {
    **OPENAI_CALLS,
    "id": "chatcmpl-s",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "reasoning_content": "Two lookups at once.",
                "tool_calls": [
                    _openai_call("functions.get_weather:0", "get_weather", '{"city":  "Paris"}'),
                    _openai_call("functions.get_time:1", "get_time", ""),
                    _openai_call("functions.get_weather:2", "get_weather", '{"city": Rome}'),
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
}


def _aggregate(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    assert len(chunks) > 1
    return chunks[0] + chunks[1:]


def _same_calls(streamed: AIMessage, invoked: AIMessage) -> None:
    assert streamed.tool_calls == invoked.tool_calls
    strip = [{k: v for k, v in c.items() if k != "error"} for c in streamed.invalid_tool_calls]
    assert strip == [
        {k: v for k, v in c.items() if k != "error"} for c in invoked.invalid_tool_calls
    ]
    for key in ("reasoning_content", "tool_calls", "anthropic_blocks", "thinking_blocks"):
        assert streamed.additional_kwargs.get(key) == invoked.additional_kwargs.get(key), key
    assert streamed.content == invoked.content


def test_openai_streamed_tool_calls_aggregate_to_invoke_result() -> None:
    chunks = list(Wire("openai", reply=OPENAI_TOOL_STREAM).model.stream("hi"))
    indexes = {c["index"] for chunk in chunks for c in chunk.tool_call_chunks}
    assert indexes == {0, 1, 2}
    streamed = _aggregate(chunks)
    invoked = Wire("openai", reply=OPENAI_TOOL_STREAM_AS_BODY).model.invoke("hi")
    _same_calls(streamed, invoked)
    assert [c["id"] for c in streamed.tool_calls] == [
        "functions.get_weather:0",
        "functions.get_time:1",
    ]
    assert streamed.tool_calls[1]["args"] == {}
    assert streamed.invalid_tool_calls[0]["args"] == '{"city": Rome}'


def _block_event(kind: str, index: int, **payload: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"type": kind, "index": index, **payload}


def _delta(index: int, **delta: Any) -> tuple[str, dict[str, Any]]:
    return _block_event("content_block_delta", index, delta=delta)


ANTHROPIC_TOOL_STREAM = _sse(
    [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {**ANTHROPIC_OK, "content": [], "stop_reason": None},
            },
        ),
        _block_event("content_block_start", 0, content_block={"type": "thinking", "thinking": ""}),
        _delta(0, type="thinking_delta", thinking="Two "),
        _delta(0, type="thinking_delta", thinking="lookups."),
        _delta(0, type="signature_delta", signature="c2lnbmF0dXJl"),
        _block_event("content_block_stop", 0),
        _block_event("content_block_start", 1, content_block={"type": "text", "text": ""}),
        _delta(1, type="text_delta", text="Checking."),
        _block_event("content_block_stop", 1),
        _block_event(
            "content_block_start",
            2,
            content_block={
                "type": "tool_use",
                "id": "toolu_01A",
                "name": "get_weather",
                "input": {},
            },
        ),
        _delta(2, type="input_json_delta", partial_json='{"city'),
        _delta(2, type="input_json_delta", partial_json='": "Oslo"}'),
        _block_event("content_block_stop", 2),
        _block_event(
            "content_block_start",
            3,
            content_block={"type": "tool_use", "id": "toolu_01B", "name": "get_time", "input": {}},
        ),
        _block_event("content_block_stop", 3),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
)


def test_anthropic_streamed_tool_calls_aggregate_to_invoke_result() -> None:
    chunks = list(Wire("anthropic", reply=ANTHROPIC_TOOL_STREAM).model.stream("hi"))
    assert {c["index"] for chunk in chunks for c in chunk.tool_call_chunks} == {2, 3}
    streamed = _aggregate(chunks)
    invoked = Wire("anthropic", reply=ANTHROPIC_CALLS).model.invoke("hi")
    _same_calls(streamed, invoked)
    assert streamed.additional_kwargs["reasoning_content"] == "Two lookups."


# ------------------------------------------------------------------ sending tool results back

ASKED = HumanMessage("Weather in Oslo, and the time?")
ANTHROPIC_TURN = AIMessage(
    content="",
    tool_calls=[
        {"id": "toolu_01A", "name": "get_weather", "args": {"city": "Oslo"}},
        {"id": "toolu_01B", "name": "get_time", "args": {}},
    ],
)
PNG = {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"}


def test_anthropic_k31_tool_results_merged_into_one_user_turn() -> None:
    wire = Wire("anthropic", K31)
    wire.model.invoke(
        [
            ASKED,
            ANTHROPIC_TURN,
            ToolMessage([{"type": "text", "text": "radar:"}, PNG], tool_call_id="toolu_01A"),
            ToolMessage("clock offline", tool_call_id="toolu_01B", status="error"),
        ]
    )
    last = wire.body["messages"][-1]
    assert last["role"] == "user"
    assert last["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01A",
            "content": [
                {"type": "text", "text": "radar:"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
            ],
        },
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01B",
            "content": "clock offline",
            "is_error": True,
        },
    ]
    assert [m["role"] for m in wire.body["messages"]] == ["user", "assistant", "user"]


def test_anthropic_k3_tool_result_content_is_a_string() -> None:
    wire = Wire("anthropic", K3)
    parts = [{"type": "text", "text": "4 "}, {"type": "text", "text": "degrees"}]
    # Every call answered, the tools declared: the gateway refuses a history without either.
    model = wire.model.bind_tools([get_weather, get_time])
    time = ToolMessage("12:00", tool_call_id="toolu_01B")
    history = [ASKED, ANTHROPIC_TURN, ToolMessage(parts, tool_call_id="toolu_01A"), time]  # type: ignore[arg-type]
    model.invoke(history)
    results = [
        block
        for message in wire.body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert results[0] == {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "4 degrees"}
    with pytest.raises(ValueError, match="image"):
        model.invoke([ASKED, ANTHROPIC_TURN, ToolMessage([PNG], tool_call_id="toolu_01A"), time])
    assert len(wire.bodies) == 1


UNANSWERED = ("get_time:2", "get_weather:3", "get_weather:4")


def test_openai_tool_messages_carry_tool_call_id() -> None:
    wire = Wire("openai")
    reply = Wire("openai", reply=OPENAI_CALLS).model.invoke("hi")
    wire.model.invoke(
        [
            ASKED,
            reply,
            ToolMessage("4 degrees", tool_call_id="functions.get_weather:0"),
            ToolMessage("12:00", tool_call_id="functions.get_time:1"),
            # Every call answered: the gateway refuses a history that leaves one unanswered.
            *[ToolMessage("?", tool_call_id=f"functions.{n}") for n in UNANSWERED],
        ]
    )
    assistant, *tools = wire.body["messages"][1:]
    # Echoed unchanged: reasoning, null content, every call with its ORIGINAL arguments string.
    assert assistant == OPENAI_CALLS["choices"][0]["message"]  # type: ignore[index]
    assert tools == [
        {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "4 degrees"},
        {"role": "tool", "tool_call_id": "functions.get_time:1", "content": "12:00"},
        *[{"role": "tool", "tool_call_id": f"functions.{n}", "content": "?"} for n in UNANSWERED],
    ]


def test_unknown_tool_call_id_is_refused_before_sending() -> None:
    for protocol in ("openai", "anthropic"):
        wire = Wire(protocol)
        with pytest.raises(ValueError, match="tool_call_id"):
            wire.model.invoke([ASKED, ANTHROPIC_TURN, ToolMessage("x", tool_call_id="call_zz")])
        assert wire.bodies == []


# The conversions themselves, called directly (the tests above go through ChatKimi).
FORM = (
    '{"type": "web_search_20250305", "name": "web_search"} with an optional "max_uses": <int >= 1>'
)
MESSAGES_SEARCH = {"type": "web_search_20250305", "name": "web_search"}


@pytest.mark.parametrize(
    ("tool", "spec"),
    [
        ("web_search", WebSearchToolSpec()),
        ({"type": "web_search"}, WebSearchToolSpec()),
        ({"type": "web_search", "max_uses": 1}, WebSearchToolSpec(max_uses=1)),
        ({"type": "web_search", "max_uses": None}, WebSearchToolSpec()),
        (
            {**MESSAGES_SEARCH, "max_uses": 2},
            WebSearchToolSpec(2, {**MESSAGES_SEARCH, "max_uses": 2}),
        ),
        (
            {**MESSAGES_SEARCH, "max_uses": None, "allowed_domains": None},
            WebSearchToolSpec(raw=MESSAGES_SEARCH),
        ),
    ],
)
def test_web_search_spellings_and_their_spec(tool: Any, spec: WebSearchToolSpec) -> None:
    assert to_tool_spec(tool) == spec


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        (
            {"type": "web_search", "max_uses": 0},
            "web_search max_uses must be a positive integer, got 0",
        ),
        (
            {"type": "web_search", "max_uses": True},
            "web_search max_uses must be a positive integer, got True",
        ),
        (
            {"type": "web_search", "max_uses": "2"},
            "web_search max_uses must be a positive integer, got '2'",
        ),
        (
            {**MESSAGES_SEARCH, "max_uses": 2.0},
            f"web_search max_uses must be a positive integer, got 2.0; the documented form is {FORM}",
        ),
        (
            {**MESSAGES_SEARCH, "user_location": {}, "allowed_domains": ["a.example"]},
            "web search option 'allowed_domains', 'user_location' is not documented;"
            f" the documented form is {FORM}",
        ),
        (
            {"type": "web_search_20250305", "name": "search"},
            "unsupported web search tool {'type': 'web_search_20250305', 'name': 'search'};"
            f" the documented form is {FORM}",
        ),
        (
            {"type": "web_search_20250305"},
            f"unsupported web search tool {{'type': 'web_search_20250305'}}; the documented form is {FORM}",
        ),
    ],
)
def test_a_web_search_outside_the_documented_form_is_refused_saying_why(
    tool: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        to_tool_spec(tool)
    assert str(caught.value) == message


class Answer(BaseModel):
    value: int


def test_dict_tools_default_their_description_and_pass_strict() -> None:
    anthropic = {"name": "f", "input_schema": {"type": "object", "properties": {}}}
    assert to_tool_spec(anthropic, strict=True) == FunctionToolSpec(
        "f", "", {"type": "object", "properties": {}}, strict=True
    )
    assert to_tool_spec({"name": "g"}) == FunctionToolSpec("g", "", {"type": "object"})
    assert to_tool_spec({"name": "h", "parameters": {"properties": {}}}).parameters == {
        "properties": {}
    }, "a schema without a type is an object schema"
    strict = to_tool_spec(Answer, strict=True)
    assert (strict.strict, strict.parameters["additionalProperties"]) == (True, False)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ({"type": "file_search"}, "unsupported tool type 'file_search'"),
        ({"type": "function", "function": "f"}, "unsupported tool type 'function'"),
        (
            {"type": "function", "function": {"name": ""}},
            "tool {'type': 'function', 'function': {'name': ''}} has no name",
        ),
        (
            {"name": "f", "parameters": {"type": "array"}},
            "tool 'f': the parameters schema must have type 'object', got 'array'",
        ),
    ],
)
def test_tools_that_are_no_function_are_refused_saying_why(
    tool: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        to_tool_spec(tool)
    assert str(caught.value) == message


def test_duplicates_are_sent_once_and_the_tools_after_them_still_are() -> None:
    @tool
    def get_weather_again(city: str) -> str:
        """Another weather tool."""
        return city

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same tool twice is no surprise: no warning
        specs = to_tool_specs(
            ["web_search", get_weather, {"type": "web_search"}, get_weather, get_time]
        )
    assert [getattr(s, "name", "web search") for s in specs] == [
        "web search",
        "get_weather",
        "get_time",
    ]
    renamed = {"name": "get_weather", "input_schema": {"type": "object"}}
    with pytest.warns(UserWarning, match="two tools") as caught:
        specs = to_tool_specs([get_weather, renamed, get_weather_again])
    assert [str(w.message) for w in caught] == [
        "two tools are named 'get_weather'; sending only the first"
    ]
    assert specs == (to_tool_spec(get_weather), to_tool_spec(get_weather_again))


def test_bindable_forms_of_web_search() -> None:
    assert spec_to_bindable(WebSearchToolSpec()) == {"type": "web_search"}
    assert spec_to_bindable(WebSearchToolSpec(max_uses=3)) == {"type": "web_search", "max_uses": 3}
    raw = {**MESSAGES_SEARCH, "max_uses": 1}
    bound = spec_to_bindable(WebSearchToolSpec(max_uses=1, raw=raw))
    assert bound == raw
    assert bound is not raw, "a copy: editing the bound form leaves the spec as it was"


@pytest.mark.parametrize(
    "choice", [{"type": "function"}, {"type": "tool", "name": 5}, {"type": "tool"}, 7]
)
def test_a_tool_choice_without_a_name_is_unsupported(choice: Any) -> None:
    with pytest.raises(ValueError, match=r"^unsupported tool_choice "):
        resolve_tool_choice(choice, to_tool_specs([get_weather]))


class Untitled(BaseModel):
    model_config = ConfigDict(title="")
    value: int


@pytest.mark.parametrize(
    ("schema", "name", "body"),
    [
        (
            {
                "type": "function",
                "function": {"name": "f", "parameters": {"type": "object", "x": 1}},
            },
            "f",
            {"type": "object", "x": 1},
        ),
        ({"type": "function", "function": {"name": "f"}}, "f", {"type": "object"}),
        (
            {"name": "a", "input_schema": {"type": "object", "y": 2}},
            "a",
            {"type": "object", "y": 2},
        ),
        ({"name": "p", "parameters": {"type": "object", "z": 3}}, "p", {"type": "object", "z": 3}),
        (
            {"title": "", "type": "object", "properties": {}},
            "output",
            {"title": "", "type": "object", "properties": {}},
        ),
    ],
)
def test_schema_name_and_json_of_each_dict_form(
    schema: dict[str, Any], name: str, body: dict[str, Any]
) -> None:
    assert schema_name_and_json(schema) == (name, body)


def test_a_model_with_an_empty_title_is_named_after_its_class() -> None:
    assert schema_name_and_json(Untitled)[0] == "Untitled"
    assert schema_name_and_json(Answer)[0] == "Answer"


PROPS = {"a": {"type": "integer"}}


class Partial(TypedDict):
    """Some fields may be left out."""

    city: NotRequired[str]
    days: int


@pytest.mark.parametrize(
    ("schema", "parts"),
    [
        (
            {
                "type": "json_schema",
                "json_schema": {"name": "n", "description": "d", "schema": {"type": "object"}},
            },
            ("n", "d", {"type": "object"}),
        ),
        ({"name": "n", "schema": {"type": "object"}}, ("n", "", {"type": "object"})),
        (
            {
                "type": "function",
                "function": {"name": "f", "description": "fd", "parameters": {"type": "object"}},
            },
            ("f", "fd", {"type": "object"}),
        ),
        (
            {"title": "T", "description": "", "type": "object", "properties": PROPS},
            ("T", "", {"title": "T", "type": "object", "properties": PROPS}),
        ),
        (
            {"title": "T", "description": "td", "type": "object", "properties": PROPS},
            ("T", "td", {"title": "T", "description": "td", "type": "object", "properties": PROPS}),
        ),
    ],
)
def test_schema_parts_of_each_form(
    schema: dict[str, Any], parts: tuple[str, str, dict[str, Any]]
) -> None:
    assert schema_parts(schema) == parts


def test_schema_parts_of_a_dict_without_a_name_is_refused() -> None:
    with pytest.raises(ValueError, match="Unsupported function"):
        schema_parts({"schema": {"type": "object"}})


def test_schema_parts_of_a_typeddict_langchain_core_cannot_convert() -> None:
    name, description, body = schema_parts(Partial)
    assert (name, description) == ("Partial", "Some fields may be left out.")
    assert body["properties"]["city"] == {"title": "City", "type": "string"}
    assert body["required"] == ["days"]


@pytest.mark.parametrize(
    ("value", "output"),
    [
        (None, None),
        ({"type": "text"}, None),
        ({"type": "json_object"}, OutputFormat("json_object")),
        (
            {
                "type": "json_schema",
                "json_schema": {"name": "n", "schema": {"type": "object"}, "strict": True},
            },
            OutputFormat("json_schema", name="n", schema={"type": "object"}, strict=True),
        ),
        (
            {"type": "json_schema", "json_schema": {"schema": {"type": "object"}}},
            OutputFormat("json_schema", name="output", schema={"type": "object"}),
        ),
    ],
)
def test_response_format_forms(value: Any, output: OutputFormat | None) -> None:
    assert output_format_from_response_format(value) == output


def test_a_response_format_model_and_an_output_format_pass() -> None:
    ready = OutputFormat("json_object")
    assert output_format_from_response_format(ready) is ready
    made = output_format_from_response_format(Answer)
    assert made == OutputFormat(
        "json_schema", name="Answer", schema=schema_name_and_json(Answer)[1]
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("json", "unsupported response_format 'json'"),
        ({"type": "xml"}, "unsupported response_format {'type': 'xml'}"),
        ({"type": "json_schema"}, "unsupported response_format {'type': 'json_schema'}"),
        (
            {"type": "json_schema", "json_schema": {"name": "n"}},
            "response_format json_schema needs a 'schema' object",
        ),
    ],
)
def test_unsupported_response_formats_are_refused(value: Any, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        output_format_from_response_format(value)
    assert str(caught.value) == message


def test_strict_reaches_an_openai_format_tool_that_has_none() -> None:
    """langchain-core passes an OpenAI-format dict through without the `strict` it was given."""
    openai = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    assert to_tool_spec(openai, strict=True).strict is True  # type: ignore[union-attr]
    given = {"type": "function", "function": {**openai["function"], "strict": False}}  # type: ignore[dict-item]
    assert to_tool_spec(given, strict=True).strict is False  # type: ignore[union-attr]


class Retitled(TypedDict):
    __pydantic_config__ = ConfigDict(title="Other")  # type: ignore[misc]
    city: NotRequired[str]


class Blank(TypedDict):
    __pydantic_config__ = ConfigDict(title="")  # type: ignore[misc]
    city: NotRequired[str]


def test_a_typeddict_pydantic_converts_is_named_by_its_title_else_its_class() -> None:
    assert schema_parts(Retitled)[0] == "Other"
    assert schema_parts(Blank)[0] == "Blank"


def test_an_openai_function_without_a_description_has_an_empty_one() -> None:
    function = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    assert schema_parts(function) == ("f", "", {"type": "object"})
