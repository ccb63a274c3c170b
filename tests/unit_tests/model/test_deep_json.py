"""Deeply nested JSON from the gateway (or written by the model) is refused by a named limit,
never with a bare `RecursionError`: a reply, an error body or a stream event nested deeper than
`MAX_READ_DEPTH` levels is a typed error; tool-call arguments deeper than `MAX_DEPTH` (what a
request may carry back) are an `invalid_tool_call` saying so.

About 1,000 levels (2 KB) were enough before: the standard library's parser, which reads what
orjson refuses, recurses once per level.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, AIMessageChunk

from langchain_kimi import ChatKimi, KimiAPIError, KimiStreamError, _json
from langchain_kimi.protocols.anthropic_messages import response as messages_response
from langchain_kimi.protocols.openai_chat import content_blocks as chat_blocks
from langchain_kimi.protocols.openai_chat import response as chat_response
from langchain_kimi.protocols.openai_chat.stream import StreamDecoder
from langchain_kimi.testing import FakeKimiGateway
from tools.paths import ROOT

READ = _json.MAX_READ_DEPTH
SEND = _json.MAX_DEPTH


def nested(levels: int, inner: str = "") -> str:
    return "[" * levels + inner + "]" * levels


JSON = {"content-type": "application/json"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "description": "f",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]


# -- the scan --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "levels"),
    [
        ("", 0),
        ("1", 0),
        ('"[[{"', 0),
        ("[]", 1),
        ("{}", 1),
        ("[[]]", 2),
        ('[{"a":[1,{}]}]', 4),
        ('["[[["]', 1),
        ('["\\"[[", {"k]": [2]}]', 3),
        ('["\\\\", [[]]]', 3),  # an escaped backslash ends before the quote
        ('["\\\n["]', 1),  # an escaped newline is still inside the string
        ("[[]][[[]]]", 3),
        ("]]][", 0),  # closers first: never below the top level
        ("[]]][[[[", 2),  # a running count: what closes early is not forgotten
        ('["[', 2),  # an unterminated string's brackets count
    ],
)
def test_nesting_counts_brackets_outside_strings(text: str, levels: int) -> None:
    assert _json.nesting(text) == levels
    assert _json.nesting(text.encode()) == levels


def test_nesting_reads_text_holding_a_lone_surrogate() -> None:
    assert _json.nesting('["\ud800", [1]]') == 2


@pytest.mark.parametrize(
    ("value", "levels"),
    [(1, 0), ("[[", 0), ([], 1), ({}, 1), ({"a": [1, [{}]]}, 4), ([[1], [[2]], 3], 3)],
)
def test_depth_of_a_parsed_value(value: Any, levels: int) -> None:
    assert _json.depth(value) == levels


@pytest.mark.parametrize("fallback", [False, True], ids=["orjson", "standard library"])
def test_loads_reads_up_to_the_limit_and_refuses_one_more(fallback: bool) -> None:
    # NaN is not JSON to orjson: the standard library reads that text.
    inner = "NaN" if fallback else "1"
    assert json.dumps(_json.loads(nested(READ, inner))) == nested(READ, inner)
    with pytest.raises(_json.TooDeepError, match=f"^nested deeper than {READ} levels$"):
        _json.loads(nested(READ + 1, inner))
    with pytest.raises(_json.TooDeepError, match=f"^nested deeper than {READ} levels$"):
        _json.loads(nested(5_000, inner).encode())
    assert issubclass(_json.TooDeepError, ValueError)


@pytest.mark.parametrize("as_bytes", [False, True], ids=["text", "bytes"])
def test_objects_count_as_arrays_do(as_bytes: bool) -> None:
    deep = '{"a":' * (READ + 1) + "1" + "}" * (READ + 1)
    with pytest.raises(_json.TooDeepError):
        _json.loads(deep.encode() if as_bytes else deep)
    fallback = '{"a":' * (READ + 1) + "NaN" + "}" * (READ + 1)
    with pytest.raises(_json.TooDeepError):
        _json.loads(fallback.encode() if as_bytes else fallback)


@pytest.mark.parametrize("fallback", [False, True], ids=["orjson", "standard library"])
def test_loads_takes_its_own_limit(fallback: bool) -> None:
    inner = "NaN" if fallback else "1"
    assert _json.loads(nested(3, inner), max_depth=3) is not None
    with pytest.raises(_json.TooDeepError, match=r"^nested deeper than 3 levels$"):
        _json.loads(nested(4, inner), max_depth=3)
    # Many brackets, none deep: read (the count alone refuses nothing).
    many = "[" + ",".join(["[1]"] * 10) + "]"
    assert len(_json.loads(many, max_depth=3)) == 10
    # Exactly the limit, with more brackets than it: read.
    assert _json.loads("[[[" + inner + "]],[[" + inner + "]]]", max_depth=3) is not None
    inside = json.dumps({"text": "[[[[[[" * 10, "v": float("nan") if fallback else 1})
    assert _json.loads(inside, max_depth=3)["text"].startswith("[[[")


# -- replies ---------------------------------------------------------------------------------


def _model(gw: FakeKimiGateway, protocol: str, **fields: Any) -> ChatKimi:
    return gw.chat_model(protocol=protocol, **fields)


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_deep_500_body_is_an_api_error_retried_and_moved_like_any_500(protocol: str) -> None:
    body = '{"error":{"message":"x","detail":' + nested(1_000) + "}}"
    gw = FakeKimiGateway()
    gw.add_raw(httpx.Response(500, text=body, headers={**JSON, "x-request-id": "req-9"}))
    gw.add_reply("fine")
    model = _model(gw, protocol, max_retries=1)
    assert model.invoke("hi").content == "fine"
    assert len(gw.requests) == 2  # retried, as any 500

    gw = FakeKimiGateway()
    gw.add_raw(httpx.Response(500, text=body, headers={**JSON, "x-request-id": "req-9"}))
    gw.add_reply("fine")
    model = _model(gw, protocol, fallback=True)
    assert model.invoke("hi").content == "fine"
    assert gw.hosts == ["direct.evolink.ai", "api.evolink.ai"]  # the fallback, as any 500

    gw = FakeKimiGateway()
    gw.add_raw(httpx.Response(500, text=body, headers={**JSON, "x-request-id": "req-9"}))
    with pytest.raises(KimiAPIError) as caught:
        _model(gw, protocol).invoke("hi")
    assert caught.value.status_code == 500
    assert caught.value.request_id == "req-9"


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("levels", [READ + 1, 1_000, 2_000])
def test_a_deep_200_body_is_an_api_error_naming_the_limit(protocol: str, levels: int) -> None:
    gw = FakeKimiGateway()
    reply = '{"id":"x","extra":' + nested(levels - 1) + "}"
    gw.add_raw(httpx.Response(200, text=reply, headers={**JSON, "x-request-id": "req-7"}))
    with pytest.raises(KimiAPIError) as caught:
        _model(gw, protocol).invoke("hi")
    assert caught.value.status_code == 200
    assert caught.value.request_id == "req-7"
    assert caught.value.message == (
        f"direct.evolink.ai answered HTTP 200 with a body nested deeper than {READ} levels"
        " (the most ChatKimi reads)"
    )


def _chat_event(delta: dict[str, Any]) -> str:
    payload = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "kimi-k3"}
    return "data: " + json.dumps({**payload, "choices": [{"index": 0, "delta": delta}]}) + "\n\n"


def _messages_event(payload: dict[str, Any]) -> str:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n"


MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "kimi-k3",
        "content": [],
        "usage": {"input_tokens": 1, "output_tokens": 0},
    },
}
TEXT_START = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_deep_stream_event_is_a_stream_error_naming_the_limit(protocol: str) -> None:
    if protocol == "openai":
        stream = _chat_event({"content": "Hel"}) + 'data: {"x":' + nested(1_000) + "}\n\n"
        name, wire = "message", "Chat Completions stream"
    else:
        stream = _messages_event(MESSAGE_START) + _messages_event(TEXT_START)
        stream += 'event: content_block_delta\ndata: {"x":' + nested(1_000) + "}\n\n"
        name, wire = "content_block_delta", "Messages stream"
    gw = FakeKimiGateway()
    gw.add_raw(stream)
    with pytest.raises(KimiStreamError) as caught:
        list(_model(gw, protocol).stream("hi"))
    assert caught.value.message == (
        f"the {wire} event {name!r} is nested deeper than {READ} levels (the most ChatKimi reads)"
    )


# -- tool-call arguments ---------------------------------------------------------------------


def _tool_reply(protocol: str, arguments: str) -> httpx.Response:
    if protocol == "openai":
        call = {"id": "call_1", "type": "function", "function": {"name": "f"}}
        call["function"]["arguments"] = arguments
        message = {"role": "assistant", "content": "", "reasoning_content": "r"}
        body = {
            "id": "c1",
            "object": "chat.completion",
            "created": 1,
            "model": "kimi-k3",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {**message, "tool_calls": [call]},
                }
            ],
        }
        return httpx.Response(200, text=json.dumps(body), headers=JSON)
    text = (
        '{"id":"m1","type":"message","role":"assistant","model":"kimi-k3","content":['
        '{"type":"tool_use","id":"tu_1","name":"f","input":' + arguments + "}],"
        '"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}'
    )
    return httpx.Response(200, text=text, headers=JSON)


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_tool_arguments_up_to_what_a_request_carries_are_a_call(protocol: str) -> None:
    arguments = '{"a":' + nested(SEND - 1) + "}"
    gw = FakeKimiGateway()
    gw.add_raw(_tool_reply(protocol, arguments))
    message = _model(gw, protocol).bind_tools(TOOLS).invoke("hi")
    assert [call["args"] for call in message.tool_calls] == [json.loads(arguments)]
    assert message.invalid_tool_calls == []


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("levels", [SEND, 1_000, 2_000])
def test_deeper_tool_arguments_are_an_invalid_tool_call(protocol: str, levels: int) -> None:
    arguments = '{"a":' + nested(levels) + "}"
    if protocol == "anthropic" and levels + 4 > READ:
        pytest.skip("the Messages reply itself is then deeper than the replies read")
    gw = FakeKimiGateway()
    gw.add_raw(_tool_reply(protocol, arguments))
    message = _model(gw, protocol).bind_tools(TOOLS).invoke("hi")
    assert message.tool_calls == []
    [invalid] = message.invalid_tool_calls
    assert "".join((invalid["args"] or "").split()) == arguments
    what = "arguments are" if protocol == "openai" else "tool input is"
    assert invalid["error"] == (
        f"{what} nested deeper than {SEND} levels, more than a request may carry back"
    )


def test_a_tool_input_that_is_no_object_is_still_named_so() -> None:
    _, [invalid] = messages_response.parse_tool_calls(
        [{"type": "tool_use", "id": "t", "name": "f", "input": [1]}]
    )
    assert invalid["error"] == "tool input is not a JSON object"
    assert invalid["args"] == "[1]"


def test_arguments_that_are_no_json_are_still_named_so() -> None:
    _, [invalid] = chat_response.parse_tool_calls(
        [{"id": "c", "function": {"name": "f", "arguments": "{nope"}}]
    )
    assert (invalid["error"] or "").startswith("arguments are not valid JSON: ")


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_deep_streamed_tool_arguments_raise_nothing(protocol: str) -> None:
    arguments = '{"a":' + nested(1_000) + "}"
    if protocol == "openai":
        head = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}}
        piece = {"index": 0, "function": {"arguments": arguments}}
        stream = _chat_event({"reasoning_content": "r", "tool_calls": [head]})
        stream += _chat_event({"tool_calls": [piece]}) + "data: [DONE]\n\n"
    else:
        block = {"type": "tool_use", "id": "tu_1", "name": "f", "input": {}}
        delta = {"type": "input_json_delta", "partial_json": arguments}
        events = [
            MESSAGE_START,
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
            {"type": "message_stop"},
        ]
        stream = "".join(_messages_event(e) for e in events)
    gw = FakeKimiGateway()
    gw.add_raw(stream)
    chunks = list(_model(gw, protocol).bind_tools(TOOLS).stream("hi"))
    total = chunks[0]
    for chunk in chunks[1:]:
        total += chunk
    assert isinstance(total, AIMessageChunk)
    assert total.tool_calls == []
    assert [call["args"] for call in total.invalid_tool_calls] == [arguments]


def test_the_standard_view_of_deep_raw_arguments_has_no_arguments() -> None:
    arguments = '{"a":' + nested(1_000) + "}"
    raw = {"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}
    message = AIMessage(
        content="",
        additional_kwargs={"tool_calls": [raw]},
        response_metadata={"model_provider": "kimi"},
    )
    assert chat_blocks._parse_arguments(arguments) == {}
    assert chat_blocks._parse_arguments('{"a": [[1]]}') == {"a": [[1]]}
    assert isinstance(message.content_blocks, list)


def test_deep_json_from_the_model_is_an_output_parser_error() -> None:
    message = {"role": "assistant", "content": '{"a":' + nested(1_000) + "}"}
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "kimi-k3"}
    body["choices"] = [{"index": 0, "finish_reason": "stop", "message": message}]
    gw = FakeKimiGateway()
    gw.add_raw(httpx.Response(200, text=json.dumps(body), headers=JSON))
    structured = _model(gw, "openai").with_structured_output(method="json_mode")
    with pytest.raises(OutputParserException, match=f"nested deeper than {READ} levels"):
        structured.invoke("hi")


def test_the_limits_page_names_the_depths_read() -> None:
    page = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    assert "{limit:read_depth}" in page
    assert "{limit:arguments_depth}" in page


def test_the_chat_completions_calls_around_the_arguments() -> None:
    builtin = {"id": "b", "type": "builtin_function", "function": {"name": "$web_search"}}
    plain = {"id": "c", "function": {"name": "f", "arguments": '{"a": 1}'}}
    nameless = {"id": "n", "function": {"arguments": None}}
    broken = {"id": "x", "function": {"name": "g", "arguments": "{"}}
    valid, [invalid] = chat_response.parse_tool_calls([builtin, plain, nameless, broken])
    # A builtin call is skipped, not the end of the list; no arguments are `{}`; no name is "".
    assert [(c["name"], c["args"], c["id"]) for c in valid] == [("f", {"a": 1}, "c"), ("", {}, "n")]
    assert (invalid["name"], invalid["args"], invalid["id"]) == ("g", "{", "x")


@pytest.mark.parametrize("name", ["", "message"])
def test_an_unnamed_event_is_named_message_in_the_errors(name: str) -> None:
    with pytest.raises(KimiStreamError) as deep:
        StreamDecoder().feed(name, nested(READ + 1))
    assert deep.value.message == (
        f"the Chat Completions stream event 'message' is nested deeper than {READ} levels"
        " (the most ChatKimi reads)"
    )
    broken = "{" + "x" * 300
    with pytest.raises(KimiStreamError) as malformed:
        StreamDecoder().feed(name, broken)
    assert malformed.value.message.startswith(
        f"malformed JSON in Chat Completions stream event 'message': {broken[:200]!r} ("
    )
