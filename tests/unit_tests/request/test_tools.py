"""bind_tools / tool_choice / tool-call parsing / tool history, end to end through ChatKimi.

Every request goes through an `httpx.MockTransport` that records the JSON body, so the tests
check the wire body ChatKimi really sends (and validate it against spec/); nothing is networked.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from langchain_kimi._request import resolve as _resolve
from langchain_kimi._request.options import ToolChoice
from langchain_kimi._request.tools import resolve_tool_choice, to_tool_specs
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
