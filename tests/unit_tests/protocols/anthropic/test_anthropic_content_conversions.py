"""One LangChain message on Messages (`protocols/anthropic_messages/content.py`), function by
function: whole blocks and whole messages compared."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from langchain_kimi._request.profiles import K3, K31_PRO, capabilities
from langchain_kimi.protocols.anthropic_messages import content

K31 = capabilities(K31_PRO, "anthropic")
KIMI_K3 = capabilities(K3, "anthropic")
PNG = {"type": "base64", "media_type": "image/png", "data": "AAAA"}


def _ai(text: Any = "", calls: list[Any] | None = None, **kwargs: Any) -> AIMessage:
    message = AIMessage(content="", tool_calls=calls or [])
    message.content = text
    message.additional_kwargs = kwargs
    return message


def _refusal(call: Any) -> str:
    with pytest.raises(ValueError) as info:
        call()
    return str(info.value)


# --- images ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "source"),
    [
        ({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}, PNG),
        ({"type": "image_url", "image_url": "data:image/png;charset=x;base64,AAAA"}, PNG),
        ({"type": "image", "source": {**PNG, "cache_control": {"type": "ephemeral"}}}, PNG),
        ({"type": "image", "base64": "AAAA", "mime_type": "image/png"}, PNG),
        ({"type": "image", "source_type": "base64", "data": "AAAA", "mime_type": "image/png"}, PNG),
        ({"type": "image", "base64": "AAAA", "media_type": "image/png"}, PNG),
        (
            {
                "type": "image",
                "data": "AAAA",
                "mime_type": "image/png",
                "url": "https://x.test/a.png",
            },
            {"type": "url", "url": "https://x.test/a.png"},
        ),
    ],
    ids=["openai-dict", "openai-string", "native", "v1", "v0", "media_type", "data-without-v0"],
)
def test_an_image_in_every_form_becomes_one_source(part: dict[str, Any], source: Any) -> None:
    caps = dataclasses.replace(K31, image_url_inputs=True)
    assert content.image_block(part, caps) == {"type": "image", "source": source}


def test_a_base64_image_without_a_type_is_refused_by_the_type_list() -> None:
    message = _refusal(lambda: content.image_block({"type": "image", "base64": "A"}, K31))
    assert message == (
        "image media type '' is not accepted by kimi-k3.1-pro on the anthropic protocol "
        "(allowed: image/jpeg, image/png, image/gif, image/webp)"
    )


@pytest.mark.parametrize(
    ("part", "message"),
    [
        ({"type": "image_url", "image_url": {}}, "image part has no url"),
        ({"type": "image_url", "image_url": ""}, "image part has no url"),
        ({"type": "image_url", "image_url": {"url": 3}}, "image part has no url"),
        (
            {"type": "image_url", "image_url": "data:image/png,AAAA"},
            "image data URLs must be base64-encoded (data:<media type>;base64,<data>)",
        ),
        (
            {"type": "image", "file_id": "f"},
            "image block needs base64 data or a url (file ids are not supported on this protocol)",
        ),
        (
            {"type": "image", "url": "https://x.test/a.png"},
            "image URLs are not supported by kimi-k3.1-pro on the anthropic protocol",
        ),
    ],
    ids=["no-url", "empty-url", "url-not-a-string", "not-base64", "file-id", "web-url"],
)
def test_image_refusals_word_for_word(part: dict[str, Any], message: str) -> None:
    no_urls = dataclasses.replace(K31, image_url_inputs=False)
    assert _refusal(lambda: content.image_block(part, no_urls)) == message


def test_a_row_without_images_and_without_tool_result_images_says_so() -> None:
    image = {"type": "image", "source": PNG}
    assert _refusal(lambda: content.image_block(image, KIMI_K3)) == (
        "image input is not supported by kimi-k3 on the anthropic protocol"
    )
    no_tool_images = dataclasses.replace(K31, image_tool_message=False)
    assert content.image_block(image, no_tool_images) == {"type": "image", "source": PNG}
    assert _refusal(lambda: content.image_block(image, no_tool_images, in_tool_result=True)) == (
        "images in tool results are not supported by kimi-k3.1-pro on the anthropic protocol"
    )


def test_an_unknown_model_is_not_held_to_a_row() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "unknown model", once per process
        unknown = capabilities("kimi-k9-content-test", "anthropic")
    part = {"type": "image", "base64": "A", "mime_type": "image/bmp", "url": "https://x.test"}
    assert content.image_block(part, unknown)["source"]["media_type"] == "image/bmp"
    assert content.image_block({"type": "image", "url": "https://x.test/a"}, unknown)["source"] == {
        "type": "url",
        "url": "https://x.test/a",
    }


# --- user and tool content ------------------------------------------------------------------


def test_user_content_keeps_text_images_and_native_tool_results() -> None:
    result = {"type": "tool_result", "tool_use_id": "c1", "content": "r", "index": 0}
    parts = [
        "a",
        "",
        {"type": "text", "text": "b"},
        {"type": "text", "text": ""},
        {"type": "image", "source": PNG},
        result,
    ]
    assert content.user_content(parts, K31) == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
        {"type": "image", "source": PNG},
        {"type": "tool_result", "tool_use_id": "c1", "content": "r"},
    ]
    assert content.user_content("hi", K31) == [{"type": "text", "text": "hi"}]
    assert content.user_content("", K31) == []


@pytest.mark.parametrize(
    ("part", "message"),
    [
        (3, "unsupported content part 3 in a user message"),
        (
            {"type": "audio"},
            "unsupported content block type 'audio' in a user message (anthropic protocol)",
        ),
        (
            {"type": "video_url"},
            "video input needs protocol='openai' (the Messages protocol has no video blocks)",
        ),
        (
            {"type": "file", "mime_type": "video/mp4"},
            "video input needs protocol='openai' (the Messages protocol has no video blocks)",
        ),
    ],
    ids=["not-a-dict", "audio", "video", "video-file"],
)
def test_user_refusals_word_for_word(part: Any, message: str) -> None:
    assert _refusal(lambda: content.user_content([part], K31)) == message


@pytest.mark.parametrize(
    "part",
    [
        {"type": "file", "mime_type": "application/pdf"},
        {"type": "file"},
        {"type": "text-plain", "mime_type": "video/mp4"},
    ],
    ids=["pdf", "no-type", "not-a-file"],
)
def test_a_file_that_is_not_a_video_is_no_video(part: dict[str, Any]) -> None:
    assert "unsupported content block type" in _refusal(lambda: content.user_content([part], K31))


def test_a_tool_result_is_text_or_blocks_where_the_row_allows() -> None:
    parts = ["a", {"type": "text", "text": "b"}, {"type": "text"}, {"type": "image", "source": PNG}]
    message = ToolMessage(content=parts, tool_call_id="c1", status="error")
    assert content.tool_results(message, K31)[0] == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": [
            {"type": "text", "text": "a"},
            {"type": "text", "text": "b"},
            {"type": "text", "text": ""},
            {"type": "image", "source": PNG},
        ],
        "is_error": True,
    }
    text_only = ToolMessage(content=["a", {"type": "text", "text": "b"}], tool_call_id="c1")
    assert content.tool_results(text_only, KIMI_K3)[0] == {
        "type": "tool_result",
        "tool_use_id": "c1",
        "content": "ab",
    }
    assert (
        content.tool_results(ToolMessage("plain", tool_call_id="c1"), KIMI_K3)[0]["content"]
        == "plain"
    )


@pytest.mark.parametrize(
    ("part", "caps", "message"),
    [
        (
            {"type": "image", "source": PNG},
            KIMI_K3,
            "images in tool results are not supported by kimi-k3 on the anthropic protocol "
            "(tool_result content is a string there)",
        ),
        ({"type": "audio"}, K31, "unsupported content block type 'audio' in a tool message"),
        (3, K31, "unsupported content block type 'int' in a tool message"),
        (
            {"type": "video"},
            K31,
            "video input needs protocol='openai' (the Messages protocol has no video blocks)",
        ),
    ],
    ids=["image-on-k3", "audio", "not-a-dict", "video"],
)
def test_tool_result_refusals_word_for_word(part: Any, caps: Any, message: str) -> None:
    tool = ToolMessage(content=["x"], tool_call_id="c1")
    tool.content = [part]
    assert _refusal(lambda: content.tool_results(tool, caps)[0]) == message


def test_an_image_in_a_tool_result_is_held_to_the_tool_result_row() -> None:
    no_tool_images = dataclasses.replace(K31, image_tool_message=False)
    tool = ToolMessage(content=[{"type": "image", "source": PNG}], tool_call_id="c1")
    assert "images in tool results are not supported" in _refusal(
        lambda: content.tool_results(tool, no_tool_images)[0]
    )


# --- assistant replay -----------------------------------------------------------------------


def test_thinking_text_joins_thinking_blocks_only() -> None:
    blocks = [
        {"type": "thinking", "thinking": "a"},
        {"type": "thinking"},
        {"type": "redacted_thinking", "data": "x"},
        {"type": "thinking", "thinking": "b"},
    ]
    assert content.thinking_text(blocks) == "ab"


def test_unchanged_stored_blocks_are_sent_verbatim() -> None:
    stored = [
        {"type": "thinking", "thinking": "why", "signature": "sig"},
        {"type": "text", "text": "answer", "citations": []},
        {"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}},
    ]
    message = _ai(
        "answer",
        [{"name": "f", "args": {"a": 1}, "id": "c1"}],
        anthropic_blocks=stored,
        reasoning_content="why",
    )
    assert content.assistant_replay(message, K31) == stored


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"reasoning_content": "edited"}, "reasoning"),
        ({"calls": [{"name": "g", "args": {"a": 1}, "id": "c1"}]}, "name"),
        ({"calls": [{"name": "f", "args": {"a": 2}, "id": "c1"}]}, "input"),
        ({"calls": [{"name": "f", "args": {"a": 1}, "id": "c9"}]}, "id"),
    ],
)
def test_a_changed_message_is_rebuilt(change: dict[str, Any], field: str) -> None:
    stored = [
        {"type": "thinking", "thinking": "why", "signature": "sig"},
        {"type": "text", "text": "answer"},
        {"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}},
    ]
    change = dict(change)  # the parameter is shared by every run of the test
    calls = change.pop("calls", [{"name": "f", "args": {"a": 1}, "id": "c1"}])
    message = _ai(
        "answer", calls, anthropic_blocks=stored, **{"reasoning_content": "why", **change}
    )
    assert content.assistant_replay(message, K31) != stored


def test_a_stored_call_whose_input_was_not_an_object_stays_unchanged_while_invalid() -> None:
    stored = [
        {"type": "thinking", "thinking": "t"},
        {"type": "tool_use", "id": "c1", "name": "f", "input": "not an object"},
    ]
    message = _ai("", anthropic_blocks=stored)
    message.invalid_tool_calls = [
        {"type": "invalid_tool_call", "id": "c1", "name": "f", "args": "x", "error": "e"}
    ]
    assert content.assistant_replay(message, K31) == stored  # the outgoing check refuses it
    message.invalid_tool_calls = []
    assert content.assistant_replay(message, K31) == []  # changed: rebuilt, and nothing is left


def test_invalid_calls_are_sent_with_an_empty_input() -> None:
    message = _ai("", reasoning_content="r")
    message.invalid_tool_calls = [
        {"type": "invalid_tool_call", "id": "c1", "name": None, "args": "x", "error": "e"},
        {"type": "invalid_tool_call", "id": None, "name": "g", "args": "x", "error": "e"},
    ]
    assert content.assistant_replay(message, K31) == [
        {"type": "thinking", "thinking": "r"},
        {"type": "tool_use", "id": "c1", "name": "", "input": {}},
    ]


def test_v1_and_native_blocks_map_to_messages_blocks() -> None:
    blocks = [
        "plain",
        "",
        {"type": "reasoning", "reasoning": "r", "extras": {"signature": "s"}},
        {"type": "reasoning"},
        {"type": "text", "text": "t", "citations": [{"cited_text": "c"}]},
        {"type": "text", "text": ""},
        {"type": "non_standard", "value": {"type": "text", "text": "n"}},
        {"type": "tool_call", "id": "c1", "name": "f", "args": {"a": 1}},
        {"type": "tool_call_chunk", "id": "c2", "name": "g", "args": '{"b": 2}'},
        {"type": "tool_call_chunk", "id": "c3", "name": "h", "args": " "},
        {"type": "server_tool_call_chunk", "id": "s0", "name": "web_search", "args": None},
        {"type": "server_tool_call", "id": "s1", "name": "web_search", "args": {"query": "q"}},
        {"type": "server_tool_result", "tool_call_id": "s1", "output": [{"url": "u"}]},
        {
            "type": "server_tool_result",
            "tool_call_id": "s2",
            "extras": {"block_type": "web_search_tool_result"},
        },
        {"type": "invalid_tool_call", "id": "c4", "name": None, "args": "x", "error": "e"},
        {"type": "redacted_thinking", "data": "d", "index": 3},
    ]
    assert content.assistant_replay(_ai(blocks), K31) == [
        {"type": "text", "text": "plain"},
        {"type": "thinking", "thinking": "r", "signature": "s"},
        {"type": "text", "text": "t", "citations": [{"cited_text": "c"}]},
        {"type": "text", "text": "n"},
        {"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}},
        {"type": "tool_use", "id": "c2", "name": "g", "input": {"b": 2}},
        {"type": "tool_use", "id": "c3", "name": "h", "input": {}},
        {"type": "server_tool_use", "id": "s0", "name": "web_search", "input": {}},
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "s1", "content": [{"url": "u"}]},
        {"type": "web_search_tool_result", "tool_use_id": "s2", "content": []},
        {"type": "tool_use", "id": "c4", "name": "", "input": {}},
    ]


def test_a_server_result_keeps_its_own_block_type_and_extras_that_are_no_dict_are_ignored() -> None:
    blocks = [
        {
            "type": "server_tool_result",
            "tool_call_id": "s1",
            "output": [],
            "extras": {"block_type": "other_result"},
        },
        {"type": "server_tool_result", "tool_call_id": "s2", "output": [], "extras": "x"},
    ]
    assert [b["type"] for b in content.assistant_replay(_ai(blocks), K31)] == [
        "other_result",
        "web_search_tool_result",
    ]


def test_a_signature_needs_extras_that_are_a_dict() -> None:
    blocks = [
        {"type": "reasoning", "reasoning": "r", "extras": "sig"},
        {"type": "text", "text": "a"},
    ]
    assert content.assistant_replay(_ai(blocks), K31)[0] == {"type": "thinking", "thinking": "r"}


def test_non_standard_without_a_dict_value_is_refused() -> None:
    for block in ({"type": "non_standard", "value": "x"}, {"type": "made_up"}):
        assert _refusal(lambda: content.assistant_replay(_ai([block]), K31)) == (  # noqa: B023
            f"unsupported content block type {block['type']!r} in an assistant message "
            "(anthropic protocol)"
        )


def test_content_blocks_get_the_stored_thinking_and_the_current_calls() -> None:
    blocks = [
        {"type": "text", "text": "a"},
        {"type": "tool_use", "id": "c1", "name": "old", "input": {"old": 1}},
    ]
    message = _ai(
        blocks,
        [{"name": "f", "args": {"a": 1}, "id": "c1"}, {"name": "g", "args": {}, "id": "c2"}],
        reasoning_content="r",
    )
    assert content.assistant_replay(message, K31) == [
        {"type": "thinking", "thinking": "r"},
        {"type": "text", "text": "a"},
        {"type": "tool_use", "id": "c1", "name": "f", "input": {"a": 1}},
        {"type": "tool_use", "id": "c2", "name": "g", "input": {}},
    ]
    with_thinking = [{"type": "thinking", "thinking": "own"}, {"type": "text", "text": "a"}]
    assert content.assistant_replay(_ai(with_thinking, reasoning_content="r"), K31) == with_thinking


def test_reasoning_that_is_not_text_gives_no_thinking() -> None:
    assert content.assistant_replay(_ai("a", reasoning_content=3), K31) == [
        {"type": "text", "text": "a"}
    ]
    assert content.assistant_replay(_ai("a", reasoning_content=""), K31) == [
        {"type": "text", "text": "a"}
    ]


def test_stored_blocks_that_are_not_all_dicts_are_not_replayed() -> None:
    message = _ai("answer", anthropic_blocks=["answer"])
    assert content.assistant_replay(message, K31) == [{"type": "text", "text": "answer"}]
