"""bind_tools / tool_choice / tool-call parsing / tool history, end to end through ChatKimi.

Every request goes through an `httpx.MockTransport` that records the JSON body, so the tests
check the wire body ChatKimi really sends (and validate it against spec/); nothing is networked.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from langchain_kimi import ChatKimi
from tests.schema_validation import validate_request, validate_response

K31, K31_FAST, K3 = "kimi-k3.1-pro", "kimi-k3.1-pro-highspeed", "kimi-k3"
ANTHROPIC_OK = {
    "id": "msg_01Ok",
    "type": "message",
    "role": "assistant",
    "model": K31,
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
OPENAI_OK = {
    "id": "chatcmpl-ok",
    "object": "chat.completion",
    "created": 1,
    "model": K31,
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
}


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


class Wire:
    """A ChatKimi whose HTTP traffic goes to `reply`; `bodies` holds every request body sent."""

    def __init__(self, protocol: str, model: str = K31, reply: Any = None) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.protocol = protocol
        default = ANTHROPIC_OK if protocol == "anthropic" else OPENAI_OK
        self.reply = reply if reply is not None else {**default, "model": model}

        def handler(request: httpx.Request) -> httpx.Response:
            body = json.loads(request.content)
            self.bodies.append(body)
            validate_request(body, protocol, model)
            if isinstance(self.reply, str):
                return httpx.Response(
                    200, text=self.reply, headers={"content-type": "text/event-stream"}
                )
            return httpx.Response(200, json=self.reply)

        self.model = ChatKimi(  # type: ignore[call-arg]
            model=model,
            protocol=protocol,  # type: ignore[arg-type]
            api_key="test-key-not-real",  # type: ignore[arg-type]
            max_retries=0,
            http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        )

    @property
    def body(self) -> dict[str, Any]:
        assert len(self.bodies) == 1
        return self.bodies[0]


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

NAMED_OPENAI = {"type": "function", "function": {"name": "get_weather"}}
ABSENT = object()
# (protocol, model, tool_choice) -> (declared tool names, wire tool_choice or ABSENT)
CHOICES: list[tuple[str, str, Any, list[str], Any]] = [
    *[
        (p, m, c, ["get_weather", "get_time"], w)
        for p, m in [("openai", K31), ("openai", K31_FAST), ("openai", K3)]
        for c, w in [
            ("auto", "auto"),
            ("any", "required"),
            ("required", "required"),
            (True, "required"),
            ("none", "none"),
            ("get_weather", NAMED_OPENAI),
            (NAMED_OPENAI, NAMED_OPENAI),
            ({"type": "tool", "name": "get_weather"}, NAMED_OPENAI),
        ]
    ],
    *[
        (p, m, c, names, w)
        for p, m in [("anthropic", K31), ("anthropic", K31_FAST)]
        for c, names, w in [
            ("auto", ["get_weather", "get_time"], {"type": "auto"}),
            ("any", ["get_weather", "get_time"], {"type": "any"}),
            ("required", ["get_weather", "get_time"], {"type": "any"}),
            (True, ["get_weather", "get_time"], {"type": "any"}),
            ("none", ["get_weather", "get_time"], {"type": "none"}),
            # K3.1 documents no named form: only that tool is offered, with `any`.
            ("get_weather", ["get_weather"], {"type": "any"}),
            (NAMED_OPENAI, ["get_weather"], {"type": "any"}),
            ({"type": "tool", "name": "get_weather"}, ["get_weather"], {"type": "any"}),
        ]
    ],
    *[
        ("anthropic", K3, c, names, w)
        for c, names, w in [
            ("auto", ["get_weather", "get_time"], {"type": "auto"}),
            ("any", ["get_weather", "get_time"], {"type": "any"}),
            (True, ["get_weather", "get_time"], {"type": "any"}),
            # kimi-k3 documents no `none`: the tools are not sent at all.
            ("none", [], ABSENT),
            ("get_weather", ["get_weather", "get_time"], {"type": "tool", "name": "get_weather"}),
            (NAMED_OPENAI, ["get_weather", "get_time"], {"type": "tool", "name": "get_weather"}),
        ]
    ],
]


@pytest.mark.parametrize(
    ("protocol", "model", "choice", "names", "wire_choice"),
    CHOICES,
    ids=[f"{p}-{m}-{c!r}" for p, m, c, _, _ in CHOICES],
)
def test_tool_choice_mapping(
    protocol: str, model: str, choice: Any, names: list[str], wire_choice: Any
) -> None:
    wire = Wire(protocol, model)
    wire.model.bind_tools([get_weather, get_time], tool_choice=choice).invoke("hi")
    sent = wire.body.get("tools", [])
    declared = [t["function"]["name"] if "function" in t else t["name"] for t in sent]
    assert declared == names
    if wire_choice is ABSENT:
        assert "tool_choice" not in wire.body
    else:
        assert wire.body["tool_choice"] == wire_choice


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
    history = [ASKED, ANTHROPIC_TURN, ToolMessage(parts, tool_call_id="toolu_01A")]  # type: ignore[arg-type]
    wire.model.invoke(history)
    (result,) = wire.body["messages"][-1]["content"]
    assert result == {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "4 degrees"}
    with pytest.raises(ValueError, match="image"):
        wire.model.invoke([ASKED, ANTHROPIC_TURN, ToolMessage([PNG], tool_call_id="toolu_01A")])
    assert len(wire.bodies) == 1


def test_openai_tool_messages_carry_tool_call_id() -> None:
    wire = Wire("openai")
    reply = Wire("openai", reply=OPENAI_CALLS).model.invoke("hi")
    wire.model.invoke(
        [
            ASKED,
            reply,
            ToolMessage("4 degrees", tool_call_id="functions.get_weather:0"),
            ToolMessage("12:00", tool_call_id="functions.get_time:1"),
        ]
    )
    assistant, *tools = wire.body["messages"][1:]
    # Echoed unchanged: reasoning, null content, every call with its ORIGINAL arguments string.
    assert assistant == OPENAI_CALLS["choices"][0]["message"]  # type: ignore[index]
    assert tools == [
        {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "4 degrees"},
        {"role": "tool", "tool_call_id": "functions.get_time:1", "content": "12:00"},
    ]


def test_unknown_tool_call_id_is_refused_before_sending() -> None:
    for protocol in ("openai", "anthropic"):
        wire = Wire(protocol)
        with pytest.raises(ValueError, match="tool_call_id"):
            wire.model.invoke([ASKED, ANTHROPIC_TURN, ToolMessage("x", tool_call_id="call_zz")])
        assert wire.bodies == []
