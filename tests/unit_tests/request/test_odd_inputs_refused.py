"""What the generated-inputs property test (`tests/unit_tests/model/test_generated_inputs.py`)
found, one case each: every input here raised a `KeyError`, `AttributeError`, a bare `TypeError`
/ `JSONDecodeError` from inside, or was sent in a shape the documents refuse. Each is now refused
before anything is sent (the offline gateway fails the test on a request), with a message saying
what to change — or, where a readable form exists, sent in it.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_kimi import ChatKimi
from langchain_kimi.testing import FakeKimiGateway
from tests.support.gateways import answering, offline, only_request

PROTOCOLS = ["openai", "anthropic"]


def _ai(content: Any = "", **additional_kwargs: Any) -> AIMessage:
    """An AIMessage with `content` and `additional_kwargs` set after validation, as a message
    kept in a store or edited by code may have them."""
    message = AIMessage(content="")
    message.content = content
    message.additional_kwargs = additional_kwargs
    return message


def _refused(history: list[BaseMessage], protocol: str, **call: Any) -> str:
    with pytest.raises((ValueError, TypeError)) as info:
        offline(protocol=protocol).invoke(history, **call)
    return str(info.value)


# --- call arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("stop", [3, 1.5, True], ids=repr)
def test_a_stop_that_is_not_a_list_gets_the_stop_message(protocol: str, stop: object) -> None:
    # LangSmith's parameters were read first and died on `list(stop)`.
    assert _refused([HumanMessage("hi")], protocol, stop=stop).startswith(
        "stop must be a list of non-empty strings"
    )


@pytest.mark.parametrize("kind", [3, None, 1.5, ["function"]], ids=repr)
def test_a_tool_whose_type_is_not_a_string_is_refused(kind: object) -> None:
    message = _refused([HumanMessage("hi")], "openai", tools=[{"type": kind}])
    assert "'type' must be a string such as 'function'" in message


@pytest.mark.parametrize("extra_body", ["x", 3, ["a"], {1: "int key"}], ids=repr)
def test_extra_body_must_be_a_dict_of_field_names(extra_body: object) -> None:
    message = _refused([HumanMessage("hi")], "openai", extra_body=extra_body)
    assert message.startswith("extra_body must be a dict of body field names to values")


@pytest.mark.parametrize("name", ["temperature", "top_p"])
def test_an_infinite_sampling_value_is_refused_not_sent_as_null(name: str) -> None:
    message = _refused([HumanMessage("hi")], "openai", **{name: float("inf")})
    assert message == f"{name} must be a finite number, got inf"


@pytest.mark.parametrize("strict", [0, "yes"], ids=repr)
def test_strict_must_be_a_bool(strict: object) -> None:
    tool = {"name": "f", "description": "d", "input_schema": {"type": "object"}}
    message = _refused([HumanMessage("hi")], "openai", tools=[tool], strict=strict)
    assert message.startswith("strict must be True, False or None")


def test_a_tool_dict_with_a_non_bool_strict_is_refused() -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {}, "strict": 1}}
    message = _refused([HumanMessage("hi")], "openai", tools=[tool])
    assert message.startswith("tool 'f': strict must be True, False or None")


@pytest.mark.parametrize("how", ["assignment", "model_copy"])
@pytest.mark.parametrize("value", ["3", None, 0, 2.5], ids=repr)
def test_max_builtin_rounds_set_after_construction_is_checked_at_the_call(
    how: str, value: object
) -> None:
    # Unchecked, a search round compared the count with it: "'>=' not supported between ...".
    model = offline()
    if how == "assignment":
        model.max_builtin_rounds = value  # type: ignore[assignment]
    else:
        model = model.model_copy(update={"max_builtin_rounds": value})
    with pytest.raises(ValueError, match="max_builtin_rounds must be"):
        model.invoke("hi", tools=["web_search"])


# --- content blocks langchain-core reads first ------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", [[], {}, ["text"]], ids=repr)
def test_a_block_type_that_is_not_a_string_is_refused(protocol: str, kind: object) -> None:
    history = [HumanMessage(content=[{"type": kind, "text": "x"}])]  # type: ignore[list-item]
    message = _refused(history, protocol)
    assert message.startswith("messages[0] (HumanMessage), content[0]: a content block's 'type'")


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    ("source_type", "key"), [("base64", "data"), ("url", "url"), ("id", "id"), ("text", "url")]
)
def test_a_v0_block_without_its_value_is_refused(protocol: str, source_type: str, key: str) -> None:
    block = {"type": "image", "source_type": source_type, "mime_type": "image/png"}
    message = _refused([HumanMessage(content=[block])], protocol)
    assert f"LangChain v0 image block with source_type {source_type!r} needs its {key!r}" in message


# --- Chat Completions replay ------------------------------------------------------------------


@pytest.mark.parametrize(
    "block",
    [
        {"type": "tool_call", "id": "c1", "args": {}},
        {"type": "tool_use", "id": "c1", "name": "f"},
        {"type": "tool_use", "id": "c1", "name": "f", "input": "not an object"},
        {"type": "tool_call", "id": "c1", "name": 3, "args": {}},
    ],
    ids=["tool_call-no-name", "tool_use-no-input", "tool_use-string-input", "name-not-a-string"],
)
def test_a_tool_call_block_without_name_or_arguments_is_refused(block: dict[str, Any]) -> None:
    history = [HumanMessage("hi"), _ai([block]), ToolMessage("r", tool_call_id="c1")]
    message = _refused(history, "openai")
    assert "block of an AIMessage needs a 'name' (a string) and" in message


@pytest.mark.parametrize("rounds", [3.0, [3], ["ab"], [{"content": "no role"}]], ids=repr)
def test_stored_search_rounds_that_are_not_messages_are_refused(rounds: object) -> None:
    message = _refused([HumanMessage("hi"), _ai("x", builtin_rounds=rounds)], "openai")
    assert message.startswith("additional_kwargs['builtin_rounds'] of an AIMessage")


@pytest.mark.parametrize("function", [1.5, "x", {"name": 3, "arguments": "{}"}], ids=repr)
def test_a_stored_raw_search_call_that_is_not_a_tool_call_is_refused(function: object) -> None:
    raw = [{"id": "s1", "type": "builtin_function", "function": function}]
    message = _refused([HumanMessage("hi"), _ai("x", tool_calls=raw)], "openai")
    assert message.startswith("additional_kwargs['tool_calls'] of an AIMessage holds")


def test_a_stored_raw_call_that_cannot_match_is_rebuilt_from_the_current_call() -> None:
    gateway = answering()
    message = _ai(
        "",
        tool_calls=[{"id": "c1", "type": "function", "function": "garbage"}],
    )
    message.tool_calls = [{"name": "f", "args": {"a": 1}, "id": "c1", "type": "tool_call"}]
    history = [HumanMessage("hi"), message, ToolMessage("r", tool_call_id="c1")]
    gateway.chat_model().invoke(history)
    sent = only_request(gateway)["messages"][1]["tool_calls"]
    assert sent == [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    ]


@pytest.mark.parametrize(
    "block",
    [
        {"type": "image_url"},
        {"type": "image_url", "image_url": {"detail": "high"}},
        {"type": "image", "source": {"type": "url"}},
    ],
    ids=["no-image_url", "no-url-inside", "anthropic-source-without-url"],
)
def test_an_image_part_without_a_url_is_refused(block: dict[str, Any]) -> None:
    message = _refused([HumanMessage(content=[{"type": "text", "text": "x"}, block])], "openai")
    assert message.startswith("a image_url part needs a url (a string)")


# --- Messages: what leaves is a documented block ----------------------------------------------


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"type": "tool_use", "name": "f", "input": {}}, "needs 'id' as a string, got nothing"),
        ({"type": "tool_use", "id": "c1", "input": {}}, "needs 'name' as a string, got nothing"),
        ({"type": "tool_use", "id": "c1", "name": "f", "input": [1]}, "'input' as an object"),
        ({"type": "tool_use", "id": {}, "name": "f", "input": {}}, "needs 'id' as a string"),
        ({"type": "server_tool_use", "id": "s1", "name": "web_search"}, "needs 'input'"),
        ({"type": "thinking", "thinking": "t", "signature": 3}, "needs 'signature' as a string"),
    ],
    ids=["no-id", "no-name", "list-input", "dict-id", "server-no-input", "int-signature"],
)
def test_a_malformed_native_block_is_refused_not_sent(block: dict[str, Any], expected: str) -> None:
    message = _refused([HumanMessage("hi"), _ai([block])], "anthropic")
    assert message.startswith("messages[1].content[")
    assert "(assistant turn): a " in message
    assert expected in message


def test_a_tool_call_without_an_id_is_refused_on_messages() -> None:
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": None}]),
    ]
    assert "a tool_use block needs 'id' as a string, got None" in _refused(history, "anthropic")


@pytest.mark.parametrize(
    "stored",
    [
        [{"type": "text", "text": "x"}, {"no": "type"}],
        [{"type": "text", "text": "x"}, {"type": "invalid_tool_call", "id": "c1"}],
    ],
    ids=["untyped", "unknown-type"],
)
def test_stored_blocks_replayed_unchanged_are_checked_too(stored: list[Any]) -> None:
    message = _refused([HumanMessage("hi"), _ai("x", anthropic_blocks=stored)], "anthropic")
    assert message.startswith("messages[1].content[")


@pytest.mark.parametrize("kind", [[], {"a": 1}], ids=repr)
def test_stored_blocks_with_an_unhashable_type_are_refused(kind: object) -> None:
    stored = [{"type": kind}]
    message = _refused([HumanMessage("hi"), _ai("", anthropic_blocks=stored)], "anthropic")
    assert message.startswith("messages[1].content[0] (assistant turn): a ")


@pytest.mark.parametrize(
    ("reasoning", "thinking"),
    [({}, []), ({"reasoning_content": "why"}, [{"type": "thinking", "thinking": "why"}])],
    ids=["no-reasoning", "reasoning"],
)
def test_stored_thinking_blocks_that_are_not_thinking_are_not_replayed(
    reasoning: dict[str, str], thinking: list[dict[str, str]]
) -> None:
    # They were replayed as thinking (a block without a type: KeyError).
    gateway = answering()
    message = _ai("answer", thinking_blocks=[{"type": "image"}, {}], **reasoning)
    gateway.chat_model(protocol="anthropic").invoke([HumanMessage("hi"), message])
    sent = only_request(gateway)["messages"][1]["content"]
    assert sent == [*thinking, {"type": "text", "text": "answer"}]


def test_streamed_arguments_that_are_not_json_are_refused() -> None:
    block = {"type": "tool_call_chunk", "id": "c1", "name": "f", "args": '{"a": '}
    message = _refused([HumanMessage("hi"), _ai([block])], "anthropic")
    assert message.startswith("the args of a tool_call_chunk block must be JSON text")


def test_kimi_k3_takes_no_stored_image_block() -> None:
    image = {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}}
    stored = [image, {"type": "text", "text": "x"}]
    model = FakeKimiGateway(offline=True).chat_model(protocol="anthropic", model="kimi-k3")
    with pytest.raises(ValueError, match="'image' blocks have no form in kimi-k3 Messages"):
        model.invoke([HumanMessage("hi"), _ai("x", anthropic_blocks=stored)])


def test_a_valid_history_is_sent_as_before() -> None:
    gateway = answering()
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}]),
        ToolMessage("r", tool_call_id="c1"),
    ]
    ChatKimi.invoke(gateway.chat_model(protocol="anthropic"), history)
    sent = only_request(gateway)["messages"]
    assert sent[1]["content"][1] == {"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_strings_and_other_blocks_with_a_source_type_pass_the_early_check(protocol: str) -> None:
    gateway = answering()
    text = {"type": "text", "text": "b", "source_type": "url"}  # not a v0 data block
    gateway.chat_model(protocol=protocol).invoke([HumanMessage(content=["a", text])])
    assert len(gateway.requests) == 1
