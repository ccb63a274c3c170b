"""Text and values no request can carry are refused before sending, saying where they are.

A lone surrogate (`"\\ud800"`, what a bad decode or a cut emoji leaves in a Python string) has no
UTF-8 form; `object()`, bytes or a set have no JSON form; a dict that contains itself has no end.
Each was a bare `UnicodeEncodeError`, `TypeError("Object of type ... is not JSON serializable")`
or `RecursionError` from deep inside; each is now a `ValueError` / `TypeError` naming the place
in the request (`messages[0].content`), wherever the caller put it: message content, a tool
schema, a call's keyword arguments, `extra_body`, `model_kwargs`, stop sequences, headers.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langchain_kimi import ChatKimi, _json
from langchain_kimi._http.config import encode_body
from tests.support.gateways import offline
from tools.paths import ROOT

SURROGATE = "caf\ud800e"


class Opaque:
    def __repr__(self) -> str:
        return "Opaque()"


def test_a_lone_surrogate_is_a_value_error_naming_its_place() -> None:
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": SURROGATE}]}]}
    with pytest.raises(ValueError, match=r"messages\[0\]\.content\[0\]\.text") as info:
        encode_body(body)
    message = str(info.value)
    assert message.startswith("the request body cannot be sent: ")
    assert "lone surrogate '\\ud800'" in message
    assert "remove or replace it" in message


def test_a_surrogate_in_a_key_is_found_too() -> None:
    with pytest.raises(ValueError, match=r"a key of extra\['a\\udfff'\]"):
        encode_body({"extra": {"a\udfff": 1}})


@pytest.mark.parametrize(
    ("value", "kind"),
    [(Opaque(), "Opaque"), (b"raw", "bytes"), ({1, 2}, "set"), (complex(1, 2), "complex")],
)
def test_a_value_json_cannot_carry_is_a_type_error_naming_its_place(value: Any, kind: str) -> None:
    with pytest.raises(TypeError, match=r"extra_body\.field\[1\] is a " + kind) as info:
        encode_body({"extra_body": {"field": [1, value]}})
    assert "JSON carries strings, numbers, booleans, None, lists and dicts" in str(info.value)


def test_a_key_json_cannot_carry_is_named() -> None:
    with pytest.raises(TypeError, match=r"tools\[0\] has a key of type tuple"):
        encode_body({"tools": [{(1, 2): "x"}]})


def test_a_value_containing_itself_is_refused() -> None:
    loop: dict[str, Any] = {"a": 1}
    loop["self"] = loop
    with pytest.raises(ValueError, match=r"x\.self contains itself"):
        encode_body({"x": loop})


def test_nesting_too_deep_for_json_is_named_not_a_recursion_error() -> None:
    deep: Any = "leaf"
    for _ in range(5_000):
        deep = [deep]
    with pytest.raises(ValueError, match=r"nested deeper than") as info:
        encode_body({"extra": deep})
    assert "extra[0][0]" in str(info.value)


def test_what_can_be_sent_is_sent_as_before() -> None:
    body = {"a": [1, 2.5, None, True, "é😀"], "b": {"c": float("nan")}, 3: "int key"}
    assert _json.loads(encode_body(body)) == {
        "a": [1, 2.5, None, True, "é😀"],
        "b": {"c": None},
        "3": "int key",
    }


def test_dumps_text_names_the_place_as_its_caller_says() -> None:
    with pytest.raises(TypeError, match=r"^the arguments cannot be sent: x is a Opaque"):
        _json.dumps_text({"x": Opaque()}, what="the arguments")


# --- through ChatKimi: refused before anything is sent --------------------------------------

_AT = r"messages\[{}\]"


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("history", "place"),
    [
        ([HumanMessage(SURROGATE)], "content"),
        ([SystemMessage(SURROGATE), HumanMessage("hi")], "system"),
        (
            [
                HumanMessage("hi"),
                AIMessage("", tool_calls=[{"name": "f", "args": {"q": SURROGATE}, "id": "c1"}]),
                ToolMessage("ok", tool_call_id="c1"),
            ],
            "messages[1]",
        ),
    ],
    ids=["human", "system", "tool-call-arguments"],
)
def test_a_surrogate_anywhere_in_a_history_is_refused_before_sending(
    protocol: str, history: list[Any], place: str
) -> None:
    with pytest.raises(ValueError, match="lone surrogate") as info:
        offline(protocol=protocol).invoke(history)
    message = str(info.value)
    if place == "system" and protocol == "openai":
        place = "messages[0]"  # Chat Completions carries the system prompt as a message
    assert place in message
    assert "\ud800" not in message  # the message itself can be printed and logged


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize(
    ("kwargs", "place"),
    [
        ({"extra_body": {"note": SURROGATE}}, "note"),
        ({"extra_body": {"note": Opaque()}}, "note"),
        (
            {
                "tools": [
                    {
                        "name": "f",
                        "description": SURROGATE,
                        "input_schema": {"type": "object", "properties": {}},
                    }
                ]
            },
            "tools[0]",
        ),
    ],
    ids=["extra_body-text", "extra_body-object", "tool-description"],
)
def test_call_arguments_that_cannot_be_sent_are_refused(
    protocol: str, kwargs: dict[str, Any], place: str
) -> None:
    with pytest.raises((ValueError, TypeError), match="cannot be sent") as info:
        offline(protocol=protocol).invoke("hi", **kwargs)
    assert place in str(info.value)


@pytest.mark.parametrize(
    ("protocol", "expected"),
    [
        ("openai", r"^the arguments of tool call 'f' cannot be sent: q is a Opaque"),
        (
            "anthropic",
            r"^the request body cannot be sent: messages\[1\]\.content\[1\]\.input\.q is a",
        ),
    ],
)
def test_tool_call_arguments_json_cannot_carry_are_refused(protocol: str, expected: str) -> None:
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "f", "args": {"q": Opaque()}, "id": "c1"}]),
        ToolMessage("ok", tool_call_id="c1"),
    ]
    with pytest.raises(TypeError, match=expected):
        offline(protocol=protocol).invoke(history)


def test_model_kwargs_that_cannot_be_sent_are_refused() -> None:
    with pytest.raises(TypeError, match=r"the request body cannot be sent: raw is a bytes"):
        offline(model_kwargs={"raw": b"x"}).invoke("hi")


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("where", ["field", "call"])
def test_a_stop_sequence_with_a_surrogate_is_refused(protocol: str, where: str) -> None:
    # Messages K3.1 measures stop sequences in UTF-8 bytes (at most 32): a surrogate has none.
    def build_and_call() -> None:
        if where == "field":
            offline(protocol=protocol, stop=["a\udfff"])
        else:
            offline(protocol=protocol).invoke("hi", stop=["a\udfff"])

    with pytest.raises(ValueError, match=r"stop sequence 'a\\udfff' holds a lone surrogate"):
        build_and_call()


@pytest.mark.parametrize("value", ["café", "a\ud800", "€"])
def test_a_header_value_httpx_cannot_send_is_refused_at_construction(value: str) -> None:
    with pytest.raises(ValueError, match=r"default_headers\['X-Team'\] holds non-ASCII") as info:
        ChatKimi(api_key="sk-test-x", default_headers={"X-Team": value})
    assert "percent-encode" in str(info.value)


def test_the_limits_page_names_the_depth_the_code_applies() -> None:
    page = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    assert f"nested deeper than {_json.MAX_DEPTH} levels is refused" in page


def test_nesting_up_to_the_limit_is_sent_on_both_paths_and_one_more_is_not() -> None:
    deep: Any = 1
    for _ in range(_json.MAX_DEPTH - 3):
        deep = [deep]
    # The body, the `k` list, the inner dict and the lists: MAX_DEPTH containers in all.
    for key in ("s", 1):  # a string key: orjson's path; an int key: the standard library's
        body = {"k": [{key: deep}]}
        assert _json.loads(encode_body(body)) == {"k": [{str(key): deep}]}
        with pytest.raises(ValueError, match=f"nested deeper than {_json.MAX_DEPTH} levels"):
            encode_body({"wrap": body})


def test_dumps_text_keeps_text_as_is_and_its_spacing_on_both_of_its_paths() -> None:
    assert _json.dumps_text({"a": "é"}) == '{"a": "é"}'
    assert _json.dumps_text({"a": math.nan, "b": "é"}) == '{"a": null, "b": "é"}'
    assert _json.dumps_text({"a": math.inf}, separators=(",", ":")) == '{"a":null}'


def test_without_a_name_the_refusal_calls_it_the_value() -> None:
    with pytest.raises(TypeError, match=r"^the value cannot be sent: x is a Opaque"):
        _json.dumps_text({"x": Opaque()})
    with pytest.raises(TypeError, match=r"^the request body cannot be sent: the value is a Opaque"):
        encode_body(Opaque())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"cannot be sent: the value has a key of type tuple"):
        encode_body({(1,): 1})  # type: ignore[dict-item]


def test_a_long_path_is_cut_in_the_message() -> None:
    assert _json._short("x" * 80) == "x" * 80
    assert _json._short("x" * 81) == "x" * 80 + "…"
