"""Assistant content other integrations wrote, read for both request builders (issue 51 items 11,
12 and 14; `protocols/foreign_content.py`). The cases the peers' own tests hold, compared with
the peers, are in test_peer_message_cases.py; these pin each rule and its edges."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from langchain_kimi.protocols import foreign_content
from langchain_kimi.protocols.foreign_content import (
    ENCRYPTED_REASONING,
    RESPONSES_ONLY_ITEMS,
    readable_content,
)


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(foreign_content, "_warned", set())


def read(*blocks: Any, provider: str | None = None) -> Any:
    metadata = {"model_provider": provider} if provider else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return readable_content(AIMessage(list(blocks), response_metadata=metadata))


def test_text_content_is_returned_as_it_is() -> None:
    assert readable_content(AIMessage("hi")) == "hi"


def test_blocks_of_no_other_integration_are_returned_as_they_are() -> None:
    blocks = [
        "plain",
        {"type": "text", "text": "a"},
        {"type": "tool_use", "id": "t", "name": "f", "input": {"x": 1}, "partial_json": "{}"},
        {"type": "tool_call", "id": "c", "name": "f", "args": {}},
        {"type": "thinking", "thinking": "t", "signature": "s"},
    ]
    assert read(*blocks) == blocks


# --- ChatAnthropic's tool_use forms (items 11, 12) ---------------------------------------------


@pytest.mark.parametrize(
    ("partial_json", "arguments"),
    [
        ('{"city": "Paris"}', {"city": "Paris"}),
        ("", {}),
        ("   ", {}),
        ('{"city": ', {}),  # cut short: not an object, the call keeps {}
        ("[1, 2]", {}),  # JSON, but not an object
    ],
)
def test_partial_json_arguments_become_the_input(partial_json: str, arguments: Any) -> None:
    block = {
        "type": "tool_use",
        "id": "t1",
        "name": "f",
        "input": {},
        "partial_json": partial_json,
        "index": 1,
    }
    assert read(block) == [{"type": "tool_use", "id": "t1", "name": "f", "input": arguments}]


def test_partial_json_also_fills_a_missing_input() -> None:
    block = {"type": "tool_use", "id": "t1", "name": "f", "partial_json": '{"a": 1}'}
    assert read(block) == [{"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}]


def test_legacy_tool_input_becomes_the_input() -> None:
    block = {"tool_input": {"a": "b"}, "type": "tool_use", "id": "1", "text": None, "name": "buz"}
    assert read(block) == [{"type": "tool_use", "id": "1", "name": "buz", "input": {"a": "b"}}]


def test_a_legacy_tool_input_that_is_no_object_is_sent_as_an_empty_input() -> None:
    block = {"tool_input": "a b", "type": "tool_use", "id": "1", "name": "buz"}
    assert read(block) == [{"type": "tool_use", "id": "1", "name": "buz", "input": {}}]


def test_an_input_wins_over_tool_input() -> None:
    block = {"tool_input": {"a": "b"}, "type": "tool_use", "id": "1", "name": "f", "input": {}}
    assert read(block) == [block]


# --- ChatOpenAI's Responses API items (item 14) -------------------------------------------------


def test_a_function_call_becomes_a_tool_call_answered_by_its_call_id() -> None:
    block = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
        "status": "completed",
    }
    assert read(block) == [
        {"type": "tool_call", "id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}
    ]


def test_a_function_call_without_call_id_keeps_its_id_and_empty_arguments_are_an_object() -> None:
    block = {"type": "function_call", "id": "fc_1", "name": "f", "arguments": ""}
    assert read(block) == [{"type": "tool_call", "id": "fc_1", "name": "f", "args": {}}]


@pytest.mark.parametrize(
    ("arguments", "kept"),
    [('{"city": ', '{"city": '), ("[1]", "[1]"), (None, None), ([1], None)],
)
def test_a_function_call_whose_arguments_are_no_object_is_an_invalid_call(
    arguments: Any, kept: Any
) -> None:
    """The raw arguments are kept where they are a string (an invalid call's `args`)."""
    block = {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": arguments}
    assert read(block) == [
        {
            "type": "invalid_tool_call",
            "id": "call_1",
            "name": "f",
            "args": kept,
            "error": "function_call arguments are not a JSON object",
        }
    ]


def test_function_call_arguments_given_as_an_object_are_taken() -> None:
    block = {"type": "function_call", "call_id": "c", "name": "f", "arguments": {"a": 1}}
    assert read(block) == [{"type": "tool_call", "id": "c", "name": "f", "args": {"a": 1}}]


def test_a_reasoning_item_becomes_one_reasoning_block_per_summary_text() -> None:
    block = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [
            {"type": "summary_text", "text": "First."},
            {"type": "summary_text", "text": ""},
            "not a part",
            {"type": "summary_text", "text": "Second."},
        ],
    }
    assert read(block) == [
        {"type": "reasoning", "reasoning": "First."},
        {"type": "reasoning", "reasoning": "Second."},
    ]


def test_a_standard_reasoning_block_with_a_summary_too_stays_standard() -> None:
    block = {"type": "reasoning", "reasoning": "r", "summary": [{"text": "s"}]}
    assert read(block) == [block]


def test_a_reasoning_item_without_summary_text_says_nothing() -> None:
    assert read({"type": "reasoning", "id": "rs_1", "summary": []}) == []


def test_a_standard_reasoning_block_keeps_all_but_openais_encrypted_content() -> None:
    block = {"type": "reasoning", "reasoning": "r", "id": "rs", "encrypted_content": "gAAA"}
    assert read(block) == [{"type": "reasoning", "reasoning": "r", "id": "rs"}]
    plain = {"type": "reasoning", "reasoning": "r", "extras": {"signature": "s"}}
    assert read(plain) == [plain]


@pytest.mark.parametrize("kind", sorted(RESPONSES_ONLY_ITEMS))
def test_responses_only_items_are_left_out(kind: str) -> None:
    assert read({"type": kind, "id": "x"}, {"type": "text", "text": "t"}) == [
        {"type": "text", "text": "t"}
    ]


def test_the_built_in_tools_of_openai_are_left_out_in_the_v1_form_too() -> None:
    search = [
        {"type": "server_tool_call", "name": "web_search", "args": {}, "id": "ws_1"},
        {"type": "server_tool_call_chunk", "name": "web_search", "args": "", "id": "ws_2"},
        {"type": "server_tool_result", "tool_call_id": "ws_1", "status": "success"},
    ]
    assert read(*search, provider="openai") == []
    # Kimi's own (and other providers') search blocks are the protocols' to map.
    assert read(*search, provider="kimi") == search
    assert read(*search) == search


# --- one warning per kind and process ------------------------------------------------------------


def _warnings(message: AIMessage) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        readable_content(message)
    return [str(w.message) for w in caught]


def test_what_is_left_out_is_said_once_per_kind() -> None:
    reasoning = {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}
    search = {"type": "web_search_call", "id": "ws_1"}
    first = _warnings(AIMessage([reasoning, search, dict(search)]))
    assert len(first) == 1
    assert first[0] == (
        "a ChatOpenAI (Responses API) history holds what Kimi cannot take; not sent: "
        f"{ENCRYPTED_REASONING}, web_search_call. Its function calls and reasoning summaries "
        "are sent as tool calls and reasoning (this warning is given once per kind)"
    )
    assert _warnings(AIMessage([search, reasoning])) == []
    (later,) = _warnings(AIMessage([search, {"type": "mcp_call", "id": "m"}]))
    assert "not sent: mcp_call." in later


def test_encrypted_content_in_extras_is_said_too() -> None:
    block = {"type": "reasoning", "reasoning": "r", "extras": {"encrypted_content": "gAAA"}}
    (said,) = _warnings(AIMessage([block]))
    assert ENCRYPTED_REASONING in said


def test_nothing_left_out_says_nothing() -> None:
    function_call = {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
    assert _warnings(AIMessage([function_call, {"type": "reasoning", "reasoning": "r"}])) == []
