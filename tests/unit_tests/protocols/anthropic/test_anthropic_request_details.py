"""The Messages request builder in detail (`protocols/anthropic_messages/request.py`): roles,
the system prompt, the output format, and `tools` / `tool_choice` per row, with the words of
every refusal and warning. Options are built by hand here, to reach what `resolve_options` would
refuse earlier."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langchain_kimi._request.options import (
    FunctionToolSpec,
    OutputFormat,
    RequestOptions,
    ToolChoice,
)
from langchain_kimi._request.profiles import K3, K31_PRO, capabilities
from langchain_kimi.protocols.anthropic_messages import request
from langchain_kimi.protocols.anthropic_messages.request import build_request

K31 = capabilities(K31_PRO, "anthropic")
KIMI_K3 = capabilities(K3, "anthropic")
F = FunctionToolSpec("f", "d", {"type": "object"})
G = FunctionToolSpec("g", "", {"type": "object"})
HI = [HumanMessage("hi")]


def _body(messages: list[BaseMessage] = HI, caps: Any = K31, **options: Any) -> dict[str, Any]:
    return build_request(messages, RequestOptions(caps=caps, **options))


def _refusal(messages: list[BaseMessage] = HI, caps: Any = K31, **options: Any) -> str:
    with pytest.raises(ValueError) as info:
        _body(messages, caps, **options)
    return str(info.value)


# --- roles and the system prompt ------------------------------------------------------------


def test_chat_messages_take_the_role_they_name() -> None:
    body = _body(
        [
            ChatMessage(role="system", content="s"),
            ChatMessage(role="human", content="u"),
            ChatMessage(role="ai", content="a"),
            ChatMessage(role="user", content="v"),
        ]
    )
    assert body["system"] == "s"
    assert [(m["role"], m["content"]) for m in body["messages"]] == [
        ("user", "u"),
        ("assistant", [{"type": "text", "text": "a"}]),
        ("user", "v"),
    ]


def test_the_role_refusals_word_for_word() -> None:
    assert _refusal([ChatMessage(role="critic", content="x")]) == (
        "unsupported message type ChatMessage for the anthropic protocol"
    )
    assert _refusal([]) == "messages must not be empty"


def test_a_tool_message_answers_the_calls_before_it() -> None:
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}]),
        ToolMessage("r", tool_call_id="c1"),
    ]
    assert _body(history, tools=(F,))["messages"][2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "r"}],
    }


def test_system_text_becomes_one_string_or_blocks_where_the_row_takes_them() -> None:
    messages: list[BaseMessage] = [
        SystemMessage("a"),
        SystemMessage(["b", {"type": "text", "text": "c"}, {"type": "text"}]),
        SystemMessage(""),
        *HI,
    ]
    assert _body(messages)["system"] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
        {"type": "text", "text": "c"},
    ]
    assert _body(messages, KIMI_K3)["system"] == "a\n\nb\n\nc"
    assert _body([SystemMessage(["b"]), *HI])["system"] == "b"  # no blocks given: a string


@pytest.mark.parametrize(
    ("part", "kind"), [({"type": "image"}, "'image'"), (3, "'int'")], ids=["image", "int"]
)
def test_a_system_message_holds_text_only(part: Any, kind: str) -> None:
    system = SystemMessage(["x"])
    system.content = [part]
    assert _refusal([system, *HI]) == (
        f"system messages may only hold text on the anthropic protocol, got {kind}"
    )


# --- the output format ----------------------------------------------------------------------


def test_the_output_format_refusals_word_for_word() -> None:
    assert _refusal(output_format=OutputFormat("json_object")) == (
        "JSON mode (json_object) is not available on the anthropic protocol"
    )
    assert _refusal(output_format=OutputFormat("json_schema")) == (
        "a json_schema output format needs a schema"
    )
    schema = {"type": "object"}
    assert _body(output_format=OutputFormat("json_schema", schema=schema))["output_config"] == {
        "format": {"type": "json_schema", "schema": schema}
    }


# --- tools and tool_choice ------------------------------------------------------------------


def test_tool_choice_any_without_tools_is_refused_and_others_dropped() -> None:
    assert _refusal(tool_choice=ToolChoice("any")) == "tool_choice 'any' needs at least one tool"
    assert "tool_choice" not in _body(tool_choice=ToolChoice("auto"))


def test_a_choice_the_row_lacks_is_refused_unless_the_model_is_unknown() -> None:
    lacking = dataclasses.replace(K31, tool_choice_forms=frozenset({"auto"}))
    assert _refusal(caps=lacking, tools=(F,), tool_choice=ToolChoice("any")) == (
        "tool_choice 'any' is not supported by kimi-k3.1-pro on anthropic"
    )
    unknown = dataclasses.replace(lacking, known=False)
    assert _body(caps=unknown, tools=(F,), tool_choice=ToolChoice("any"))["tool_choice"] == {
        "type": "any"
    }


def test_kimi_k3_keeps_the_tools_a_history_needs_when_none_is_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(request, "_none_kept_tools_warned", False)
    assert _body(caps=KIMI_K3, tools=(F,), tool_choice=ToolChoice("none")) == _body(caps=KIMI_K3)
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}]),
        ToolMessage("r", tool_call_id="c1"),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        body = _body(history, KIMI_K3, tools=(F,), tool_choice=ToolChoice("none"))
        _body(history, KIMI_K3, tools=(F,), tool_choice=ToolChoice("none"))
    assert body["tools"] == [{"name": "f", "description": "d", "input_schema": {"type": "object"}}]
    assert "tool_choice" not in body
    assert [str(w.message) for w in caught] == [
        "kimi-k3 on the Messages protocol cannot forbid tool calls (its tool_choice is "
        '"auto", "any" or "tool"); the tools are sent anyway because the history holds '
        "tool_use / tool_result blocks, so the model may still call one"
    ]


def test_a_tool_result_alone_counts_as_a_tool_block_of_the_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(request, "_none_kept_tools_warned", True)
    result = HumanMessage(content=[{"type": "tool_result", "tool_use_id": "c9", "content": "r"}])
    body = _body([result], KIMI_K3, tools=(F,), tool_choice=ToolChoice("none"))
    assert [t["name"] for t in body["tools"]] == ["f"]


def test_a_named_choice_per_row() -> None:
    named = ToolChoice("named", "g")
    assert _body(caps=KIMI_K3, tools=(F, G), tool_choice=named)["tool_choice"] == {
        "type": "tool",
        "name": "g",
    }
    twice = FunctionToolSpec("g", "other", {"type": "object"})
    k31 = _body(tools=(F, G, twice), tool_choice=named)
    assert k31["tools"] == [{"name": "g", "input_schema": {"type": "object"}}]
    assert k31["tool_choice"] == {"type": "any"}
    unknown = dataclasses.replace(K31, tool_choice_forms=frozenset(), known=False)
    assert _body(caps=unknown, tools=(F, G), tool_choice=named)["tool_choice"] == {"type": "any"}


def test_the_named_choice_refusals_word_for_word() -> None:
    assert _refusal(tools=(F,), tool_choice=ToolChoice("named", "zz")) == (
        "tool_choice names 'zz', which is not among the tools"
    )
    no_forms = dataclasses.replace(K31, tool_choice_forms=frozenset({"auto"}))
    assert _refusal(caps=no_forms, tools=(F,), tool_choice=ToolChoice("named", "f")) == (
        "forcing a named tool is not supported by kimi-k3.1-pro on anthropic"
    )
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}]),
        ToolMessage("r", tool_call_id="c1"),
    ]
    assert _refusal(history, tools=(F, G), tool_choice=ToolChoice("named", "g")) == (
        "tool_choice 'g' on kimi-k3.1-pro (Messages) is sent as 'any' with only that tool, but "
        "the history calls ['f'], whose tools would then be missing; use tool_choice='any', or "
        "protocol='openai' (which names the tool)"
    )


def test_a_tool_use_alone_counts_as_a_tool_block_of_the_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(request, "_none_kept_tools_warned", True)
    history = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}]),
    ]
    body = _body(history, KIMI_K3, tools=(F,), tool_choice=ToolChoice("none"))
    assert [t["name"] for t in body["tools"]] == ["f"]


def test_the_history_refusals_word_for_word() -> None:
    assert _refusal([SystemMessage("s")]) == (
        "at least one user or assistant message is required besides system messages"
    )
    assert _refusal([HumanMessage("hi"), ToolMessage("r", tool_call_id="c9")]) == (
        "ToolMessage tool_call_id 'c9' matches no tool call in the preceding AI messages"
    )
