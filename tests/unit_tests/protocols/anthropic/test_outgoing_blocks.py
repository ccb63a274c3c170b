"""The last check of a Messages request: each block is one the model's documents give a form,
with its required fields of the documented types (`outgoing.check_turns`), word for word."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_kimi._request.profiles import capabilities
from langchain_kimi.protocols.anthropic_messages.outgoing import check_turns

K31 = capabilities("kimi-k3.1-pro", "anthropic")
K3 = capabilities("kimi-k3", "anthropic")
UNKNOWN = capabilities("kimi-future", "anthropic")
K31_KINDS = "text, image, thinking, tool_use, tool_result, server_tool_use, web_search_tool_result"


def _refusal(block: Any, caps: Any = K31, role: str = "assistant") -> str | None:
    try:
        check_turns([{"role": "user", "content": "hi"}, {"role": role, "content": [block]}], caps)
    except ValueError as exc:
        return str(exc)
    return None


def test_an_unknown_block_names_the_documented_ones() -> None:
    assert _refusal({"type": "document"}) == (
        "messages[1].content[0] (assistant turn): 'document' blocks have no form in "
        f"kimi-k3.1-pro Messages requests ({K31_KINDS})"
    )
    assert _refusal({"type": "image"}, K3) == (
        "messages[1].content[0] (assistant turn): 'image' blocks have no form in kimi-k3 "
        "Messages requests (text, thinking, tool_use, tool_result)"
    )


@pytest.mark.parametrize("kind", ["server_tool_use", "web_search_tool_result", "image"])
def test_kimi_k3_has_no_search_or_image_blocks_and_an_unknown_model_is_not_held_to_a_row(
    kind: str,
) -> None:
    block = {"type": kind, "id": "s", "tool_use_id": "s", "name": "n", "input": {}, "content": []}
    block["source"] = {"type": "url", "url": "https://x.test/a.png"}
    assert _refusal(block, K31) is None
    assert _refusal(block, UNKNOWN) is None
    assert f"'{kind}' blocks have no form in kimi-k3" in str(_refusal(block, K3))


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ({"type": "text"}, "a text block needs 'text' as a string, got nothing"),
        (
            {"type": "tool_result", "tool_use_id": "c", "content": 3},
            "a tool_result block needs 'content' as a string or a list, got 3",
        ),
        (
            {"type": "tool_result", "tool_use_id": "c", "content": "r", "is_error": "no"},
            "a tool_result block needs 'is_error' as true or false, got 'no'",
        ),
        (
            {"type": "web_search_tool_result", "tool_use_id": "s", "content": "x"},
            "a web_search_tool_result block needs 'content' as a list or an object, got 'x'",
        ),
        (
            {"type": "image", "source": {"type": "file", "file_id": "f"}},
            "an image block's source type must be 'base64' or 'url', got 'file'",
        ),
        ("plain", "a content block must be an object, got 'plain'"),
    ],
    ids=["text", "tool_result-content", "is_error", "search-result", "image-source", "not-a-dict"],
)
def test_each_field_problem_word_for_word(block: Any, problem: str) -> None:
    assert _refusal(block, role="user") == f"messages[1].content[0] (user turn): {problem}"


def test_optional_fields_may_be_absent() -> None:
    assert _refusal({"type": "thinking", "thinking": "t"}) is None
    assert (
        _refusal({"type": "tool_result", "tool_use_id": "c", "content": "r"}, role="user") is None
    )
    assert _refusal({"type": "text", "text": "t", "citations": []}) is None  # extra keys pass


@pytest.mark.parametrize(
    ("parts", "problem"),
    [
        (
            [{"type": "tool_use", "id": "c", "name": "f", "input": {}}],
            "in a tool_result's content: text and image blocks only",
        ),
        (
            [{"type": "text"}],
            "in a tool_result's content: a text block needs 'text' as a string, got nothing",
        ),
    ],
    ids=["tool_use-inside", "text-without-text"],
)
def test_a_tool_results_blocks_are_checked_too(parts: list[Any], problem: str) -> None:
    block = {"type": "tool_result", "tool_use_id": "c", "content": parts}
    assert _refusal(block, role="user") == f"messages[1].content[0] (user turn): {problem}"


def test_text_and_image_blocks_in_a_tool_result_pass_on_k31_only() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A"}}
    block = {
        "type": "tool_result",
        "tool_use_id": "c",
        "content": [{"type": "text", "text": "r"}, image],
    }
    assert _refusal(block, role="user") is None
    assert _refusal(block, K3, role="user") == (
        "messages[1].content[0] (user turn): kimi-k3 takes a tool_result's content as a string only"
    )


@pytest.mark.parametrize("kind", [None, 3, ["text"]], ids=repr)
def test_a_block_without_a_string_type(kind: object) -> None:
    assert _refusal({"type": kind}) == (
        f"messages[1].content[0] (assistant turn): a content block needs 'type' as a string, "
        f"got {kind!r}"
    )
