"""LangChain content -> Messages blocks (`anthropic_messages/content.py`), rule by rule: user parts
and images, tool results, the replay of an assistant turn from its stored blocks, its v1 blocks or
its fields. The bodies as a whole are in test_anthropic_request.py; these pin each mapping and
each refusal's exact words."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from langchain_kimi._contract import FOREIGN_TURN_REASONING
from langchain_kimi._request.profiles import K3, K31_PRO, Capabilities, capabilities
from langchain_kimi.protocols.anthropic_messages.content import (
    assistant_replay,
    thinking_text,
    tool_results,
    user_content,
)

K31_CAPS = capabilities(K31_PRO, "anthropic")
K3_CAPS = capabilities(K3, "anthropic")
PNG = {"type": "image", "base64": "iVBOR", "mime_type": "image/png"}
PNG_BLOCK = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"},
}
PLACEHOLDER = {"type": "thinking", "thinking": FOREIGN_TURN_REASONING}
ALLOWED = "image/jpeg, image/png, image/gif, image/webp"


def refusal(call: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(ValueError) as refused:
        call(*args, **kwargs)
    return str(refused.value)


def test_thinking_text_joins_the_thinking_blocks_text_only() -> None:
    blocks = [
        {"type": "thinking"},
        {"type": "thinking", "thinking": "a"},
        {"type": "text", "text": "x"},
        {"type": "thinking", "thinking": "b"},
    ]
    assert thinking_text(blocks) == "ab"


# --- user content ---------------------------------------------------------------------------------


def test_empty_user_text_sends_no_block() -> None:
    assert user_content("", K31_CAPS) == []


def test_a_user_part_that_is_neither_text_nor_a_block_is_refused() -> None:
    assert refusal(user_content, [5], K31_CAPS) == "unsupported content part 5 in a user message"


@pytest.mark.parametrize(
    ("part", "source"),
    [
        (
            {"type": "image", "source_type": "base64", "data": "AA", "mime_type": "image/png"},
            {"type": "base64", "media_type": "image/png", "data": "AA"},
        ),
        (
            {"type": "image", "base64": "AA", "media_type": "image/gif"},
            {"type": "base64", "media_type": "image/gif", "data": "AA"},
        ),
        (
            {"type": "image", "data": "AA", "url": "https://x/a.png"},  # `data` without v0 type
            {"type": "url", "url": "https://x/a.png"},
        ),
        (
            {"type": "image_url", "image_url": {"url": "data:image/webp;base64,AA"}},
            {"type": "base64", "media_type": "image/webp", "data": "AA"},
        ),
    ],
)
def test_image_parts_become_image_blocks(part: dict[str, Any], source: dict[str, Any]) -> None:
    assert user_content([part], K31_CAPS) == [{"type": "image", "source": source}]


@pytest.mark.parametrize(
    ("part", "words"),
    [
        ({"type": "image_url", "image_url": {"url": ""}}, "image part has no url"),
        ({"type": "image_url", "image_url": {}}, "image part has no url"),
        (
            {"type": "image_url", "image_url": {"url": "data:image/png,AA"}},
            "image data URLs must be base64-encoded (data:<media type>;base64,<data>)",
        ),
        (
            {"type": "image", "file_id": "f1"},
            "image block needs base64 data or a url (file ids are not supported on this protocol)",
        ),
        (
            {"type": "image", "base64": "AA"},
            f"image media type '' is not accepted by kimi-k3.1-pro on the anthropic protocol "
            f"(allowed: {ALLOWED})",
        ),
        (
            {"type": "image", "base64": "AA", "mime_type": "video/mp4"},
            "image media type 'video/mp4' is not accepted by kimi-k3.1-pro on the anthropic "
            f"protocol (allowed: {ALLOWED})",
        ),
        (
            {"type": "file", "base64": "AA", "mime_type": "video/mp4"},
            "video input needs protocol='openai' (the Messages protocol has no video blocks)",
        ),
        (
            {"type": "file", "base64": "AA"},
            "unsupported content block type 'file' in a user message (anthropic protocol)",
        ),
    ],
)
def test_image_and_file_refusals_say_exactly_what_is_wrong(
    part: dict[str, Any], words: str
) -> None:
    assert refusal(user_content, [part], K31_CAPS) == words


def _caps(**change: Any) -> Capabilities:
    return replace(K31_CAPS, **change)


def test_image_url_refusal_is_for_urls_only() -> None:
    caps = _caps(image_url_inputs=False)
    url = {"type": "image", "url": "https://x/a.png"}
    assert refusal(user_content, [url], caps) == (
        "image URLs are not supported by kimi-k3.1-pro on the anthropic protocol"
    )
    assert user_content([PNG], caps) == [PNG_BLOCK]


def test_a_user_image_is_no_tool_result_image() -> None:
    assert user_content([PNG], _caps(image_tool_message=False)) == [PNG_BLOCK]


# --- tool results ---------------------------------------------------------------------------------


def test_tool_result_parts_keep_strings_and_empty_texts_beside_an_image() -> None:
    message = ToolMessage(["a", {"type": "text"}, PNG], tool_call_id="c1")
    (block,) = tool_results(message, K31_CAPS)
    assert block["content"] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": ""},
        PNG_BLOCK,
    ]


def test_tool_result_image_refusals_say_exactly_why() -> None:
    message = ToolMessage([PNG], tool_call_id="c1")
    assert refusal(tool_results, message, K3_CAPS) == (
        "images in tool results are not supported by kimi-k3 on the anthropic protocol "
        "(tool_result content is a string there)"
    )
    assert refusal(tool_results, message, _caps(image_tool_message=False)) == (
        "images in tool results are not supported by kimi-k3.1-pro on the anthropic protocol"
    )


def test_a_tool_part_that_is_neither_text_nor_a_block_is_refused_by_its_type() -> None:
    message = ToolMessage("x", tool_call_id="c1")
    message.content = [5]  # type: ignore[list-item]  # assigned: not validated by langchain-core
    assert refusal(tool_results, message, K31_CAPS) == (
        "unsupported content block type 'int' in a tool message"
    )


# --- assistant replay -------------------------------------------------------------------------------


def replay(message: AIMessage, caps: Capabilities = K31_CAPS) -> list[dict[str, Any]]:
    return assistant_replay(message, caps)


def test_an_invalid_call_without_name_is_a_tool_use_with_an_empty_name() -> None:
    invalid = {"id": "b1", "name": None, "args": "oops", "error": "e"}
    assert replay(AIMessage("", invalid_tool_calls=[invalid])) == [
        PLACEHOLDER,
        {"type": "tool_use", "id": "b1", "name": "", "input": {}},
    ]


def test_stored_blocks_that_are_not_all_objects_are_not_replayed() -> None:
    stored = ["junk", {"type": "text", "text": "hi"}]
    assert replay(AIMessage("hi", additional_kwargs={"anthropic_blocks": stored})) == [
        {"type": "text", "text": "hi"}
    ]


def test_stored_blocks_with_a_non_object_input_replay_verbatim_while_unchanged() -> None:
    use = {"type": "tool_use", "id": "t1", "name": "f", "input": [1]}
    thinking = {"type": "thinking", "thinking": "r", "signature": "s"}
    invalid = {"id": "t1", "name": "f", "args": "[1]", "error": "not an object"}
    message = AIMessage(
        "",
        additional_kwargs={"anthropic_blocks": [thinking, use], "reasoning_content": "r"},
        invalid_tool_calls=[invalid],
    )
    assert replay(message) == [thinking, use]


def test_stored_blocks_replay_verbatim_on_kimi_k3_when_they_hold_no_server_block() -> None:
    stored = [
        {"type": "thinking", "thinking": "r", "signature": "s"},
        {"type": "text", "text": "x", "citations": [{"type": "char_location"}]},
    ]
    message = AIMessage(
        "x", additional_kwargs={"anthropic_blocks": stored, "reasoning_content": "r"}
    )
    assert replay(message, K3_CAPS) == stored


def test_an_empty_reasoning_content_sends_no_thinking() -> None:
    message = AIMessage("hi", additional_kwargs={"reasoning_content": ""})
    assert replay(message) == [{"type": "text", "text": "hi"}]


def test_content_strings_are_text_blocks_and_thinking_comes_first_once() -> None:
    kwargs = {"reasoning_content": "r"}
    assert replay(
        AIMessage(["plain", {"type": "text", "text": "b"}], additional_kwargs=kwargs)
    ) == [
        {"type": "thinking", "thinking": "r"},
        {"type": "text", "text": "plain"},
        {"type": "text", "text": "b"},
    ]
    own = {"type": "thinking", "thinking": "own", "signature": "s"}
    assert replay(AIMessage([own, "t"], additional_kwargs=kwargs)) == [
        own,
        {"type": "text", "text": "t"},
    ]


@pytest.mark.parametrize(
    ("block", "sent"),
    [
        (
            {"type": "non_standard", "value": {"type": "text", "text": "x"}},
            {"type": "text", "text": "x"},
        ),
        ({"type": "text"}, None),
        (
            {"type": "text", "text": "x", "citations": [{"type": "char_location"}]},
            {"type": "text", "text": "x", "citations": [{"type": "char_location"}]},
        ),
        (
            {"type": "text", "text": "x", "value": {"type": "text", "text": "other"}},
            {"type": "text", "text": "x"},
        ),
        (
            {"type": "invalid_tool_call", "id": "b1", "name": None, "args": "oops"},
            {"type": "tool_use", "id": "b1", "name": "", "input": {}},
        ),
        (
            {"type": "tool_call_chunk", "id": "c1", "name": "f", "args": '{"a": 1}'},
            {"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}},
        ),
        (
            {"type": "tool_call_chunk", "id": "c1", "name": "f", "args": "  "},
            {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
        ),
        (
            {"type": "server_tool_call_chunk", "id": "s1", "name": "web_search", "args": ""},
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
        ),
        (
            {
                "type": "server_tool_result",
                "tool_call_id": "s1",
                "output": [{"url": "u"}],
                "extras": {"block_type": "web_fetch_tool_result"},
            },
            {"type": "web_fetch_tool_result", "tool_use_id": "s1", "content": [{"url": "u"}]},
        ),
        (
            {"type": "server_tool_result", "tool_call_id": "s1", "extras": "not an object"},
            {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
        ),
    ],
)
def test_v1_and_native_blocks_map_one_by_one(block: dict[str, Any], sent: Any) -> None:
    blocks = replay(AIMessage([block, {"type": "text", "text": "end"}]))
    blocks = [b for b in blocks if b != PLACEHOLDER]
    assert blocks == ([sent] if sent is not None else []) + [{"type": "text", "text": "end"}]


def test_an_assistant_block_of_no_known_type_is_refused_by_its_type() -> None:
    assert refusal(replay, AIMessage([{"type": "audio", "base64": "AA"}])) == (
        "unsupported content block type 'audio' in an assistant message (anthropic protocol)"
    )
    wrapped = {"type": "non_standard", "value": "not a block"}
    assert refusal(replay, AIMessage([wrapped])) == (
        "unsupported content block type 'non_standard' in an assistant message (anthropic protocol)"
    )
