"""One LangChain message on Chat Completions (`protocols/openai_chat/content.py`), function by
function, whole results and whole messages compared."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from langchain_kimi._contract import FOREIGN_TURN_REASONING
from langchain_kimi._request.profiles import K3, K31_PRO, capabilities
from langchain_kimi.protocols.foreign_content import readable_content
from langchain_kimi.protocols.openai_chat import content

K31 = capabilities(K31_PRO, "openai")
KIMI_K3 = capabilities(K3, "openai")


def _ai(text: Any = "", calls: list[Any] | None = None, **kwargs: Any) -> AIMessage:
    message = AIMessage(content="", tool_calls=calls or [])
    message.content = text
    message.additional_kwargs = kwargs
    return message


def _call(call_id: str = "c1", name: str = "f", args: Any = None) -> dict[str, Any]:
    return {"name": name, "args": {"a": 1} if args is None else args, "id": call_id}


def _raw(call_id: str = "c1", name: str = "f", arguments: str = '{"a": 1}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# --- the reasoning of a message -------------------------------------------------------------


def _reasoning(message: AIMessage) -> str:
    return content.reasoning_of(message, readable_content(message))


def test_reasoning_comes_from_the_text_then_thinking_blocks_then_content_blocks() -> None:
    assert _reasoning(_ai(reasoning_content="r")) == "r"
    thinking = [{"type": "thinking", "thinking": "a"}, {"type": "thinking"}, {"type": "text"}]
    assert _reasoning(_ai(thinking_blocks=thinking)) == "a"
    blocks = [{"type": "reasoning", "reasoning": "b"}, {"type": "reasoning"}, "c", {"type": "x"}]
    assert _reasoning(_ai(blocks)) == "b"
    assert _reasoning(_ai("plain text", thinking_blocks="not a list")) == ""


# --- the assistant turn ---------------------------------------------------------------------


def test_search_rounds_go_first_and_their_reasoning_is_not_repeated() -> None:
    rounds = [
        {"role": "assistant", "reasoning_content": "searching ", "tool_calls": []},
        {"role": "tool", "tool_call_id": "s1", "content": "q"},
        {"role": "assistant", "tool_calls": []},
    ]
    message = _ai("answer", reasoning_content="searching then answering", builtin_rounds=rounds)
    assert content.assistant_replay(message) == [
        *rounds,
        {"role": "assistant", "content": "answer", "reasoning_content": "then answering"},
    ]


def test_reasoning_that_does_not_start_with_the_rounds_is_kept_whole() -> None:
    rounds = [{"role": "assistant", "reasoning_content": "x"}]
    wire = content.assistant_replay(_ai("a", reasoning_content="y", builtin_rounds=rounds))[-1]
    assert wire["reasoning_content"] == "y"
    no_prefix = [{"role": "assistant", "reasoning_content": ""}]
    assert (
        content.assistant_replay(_ai("a", reasoning_content="y", builtin_rounds=no_prefix))[-1][
            "reasoning_content"
        ]
        == "y"
    )


def test_a_turn_with_calls_and_no_reasoning_gets_the_placeholder_and_null_content() -> None:
    assert content.assistant_replay(_ai("", [_call()])) == [
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": FOREIGN_TURN_REASONING,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
            ],
        }
    ]
    assert content.assistant_replay(_ai("")) == [{"role": "assistant", "content": ""}]


def test_stored_rounds_of_the_wrong_shape_are_refused_word_for_word() -> None:
    with pytest.raises(ValueError) as role:
        content.assistant_replay(_ai("a", builtin_rounds=[{"role": "user"}]))
    assert str(role.value) == (
        "additional_kwargs['builtin_rounds'] of an AIMessage holds a message without the role "
        "'assistant' or 'tool' (not a search round ChatKimi stored): remove the key"
    )
    with pytest.raises(ValueError) as shape:
        content.assistant_replay(_ai("a", builtin_rounds=[3]))
    assert str(shape.value) == (
        "additional_kwargs['builtin_rounds'] of an AIMessage must be a list of dicts (the raw "
        "messages ChatKimi stored), got [3]: restore it or remove the key"
    )


# --- tool calls -----------------------------------------------------------------------------


def test_calls_are_read_from_v1_and_anthropic_blocks_when_the_message_has_none() -> None:
    blocks = [
        "text",
        {"type": "text", "text": "t"},
        {"type": "tool_call", "id": "c1", "name": "f", "args": {"a": 1}},
        {"type": "tool_use", "id": "c2", "name": "g", "input": {}},
    ]
    calls = content.assistant_replay(_ai(blocks))[-1]["tool_calls"]
    assert [c["function"] for c in calls] == [
        {"name": "f", "arguments": '{"a": 1}'},
        {"name": "g", "arguments": "{}"},
    ]


def test_an_unchanged_raw_call_is_sent_as_received_and_a_changed_one_is_rebuilt() -> None:
    raw = [_raw("c1", arguments='{"a":1}'), {**_raw("c2"), "index": 0}]
    message = _ai("", [_call("c1"), _call("c2", args={"a": 2})], tool_calls=raw)
    assert content.assistant_replay(message)[-1]["tool_calls"] == [
        _raw("c1", arguments='{"a":1}'),  # the original string, unchanged
        _raw("c2", arguments='{"a": 2}'),  # rebuilt from the current call
    ]


def test_a_raw_call_renamed_or_with_unreadable_arguments_is_rebuilt() -> None:
    for raw in (_raw("c1", name="old"), _raw("c1", arguments="not json")):
        message = _ai("", [_call("c1")], tool_calls=[raw])
        assert content.assistant_replay(message)[-1]["tool_calls"] == [_raw("c1")]


def test_a_raw_search_call_is_kept_and_a_removed_call_is_not_sent() -> None:
    search = {
        "id": "s1",
        "type": "builtin_function",
        "function": {"name": "$web_search", "arguments": "{}"},
    }
    stored = _raw("c2", arguments='{"a":1}')  # compact: not what a rebuild would write
    message = _ai("", [_call("c2")], tool_calls=[search, _raw("gone"), stored])
    assert content.assistant_replay(message)[-1]["tool_calls"] == [search, stored]


def test_a_raw_call_without_a_type_gets_the_function_type() -> None:
    raw = {"id": "c1", "function": {"name": "f", "arguments": '{"a": 1}'}}
    message = _ai("", [_call("c1")], tool_calls=[raw])
    assert content.assistant_replay(message)[-1]["tool_calls"][0]["type"] == "function"


def test_an_invalid_call_goes_back_with_its_raw_arguments() -> None:
    message = _ai("")
    message.invalid_tool_calls = [
        {"type": "invalid_tool_call", "id": "c1", "name": "f", "args": "{oops", "error": "e"},
        {"type": "invalid_tool_call", "id": "c2", "name": None, "args": None, "error": "e"},
        {"type": "invalid_tool_call", "id": None, "name": "g", "args": "x", "error": "e"},
    ]
    with pytest.raises(ValueError, match="tool call 'g' has no id"):
        content.assistant_replay(message)
    message.invalid_tool_calls = [
        *message.invalid_tool_calls[:2],
        {"type": "invalid_tool_call", "id": "c4", "name": "h", "args": "{oops4", "error": "e"},
    ]
    stored = {**_raw("c1", arguments="{oops"), "x_kept": True}  # the raw form, as received
    message.additional_kwargs = {"tool_calls": [stored, _raw("c3")]}
    assert content.assistant_replay(message)[-1]["tool_calls"] == [
        stored,
        {"id": "c2", "type": "function", "function": {"name": "", "arguments": ""}},
        _raw("c4", name="h", arguments="{oops4"),
    ]


def test_a_stored_raw_call_of_the_wrong_shape_is_refused_word_for_word() -> None:
    bad = {"id": "c1", "type": "function", "function": "x"}
    message = _ai("", tool_calls=[{**bad, "type": "builtin_function"}])
    with pytest.raises(ValueError) as info:
        content.assistant_replay(message)
    assert str(info.value) == (
        "additional_kwargs['tool_calls'] of an AIMessage holds {'id': 'c1', 'type': "
        "'builtin_function', 'function': 'x'}, not a Chat Completions tool call (id, "
        "function.name, function.arguments strings): restore it, or remove the key to send "
        "the message's tool_calls instead"
    )


def test_a_call_block_without_a_name_word_for_word() -> None:
    with pytest.raises(ValueError) as info:
        content.assistant_replay(_ai([{"type": "tool_use", "id": "c1", "input": {}}]))
    assert str(info.value) == (
        "a tool_use block of an AIMessage needs a 'name' (a string) and 'input' (an object), "
        "got keys ['id', 'input', 'type']"
    )


def test_arguments_json_cannot_carry_name_the_call() -> None:
    with pytest.raises(TypeError, match=r"^the arguments of tool call 'f' cannot be sent"):
        content.assistant_replay(_ai("", [_call(args={"a": object()})]))


# --- user, system and tool content ----------------------------------------------------------


def test_a_system_message_is_text_only() -> None:
    assert content.plain_text(["a", {"type": "text", "text": "b"}, {"type": "text"}], "system") == (
        "a\n\nb\n\n"
    )
    with pytest.raises(ValueError) as block:
        content.plain_text([{"type": "image"}], "system")
    assert str(block.value) == "a system message may hold text only, got a 'image' block"
    with pytest.raises(ValueError) as other:
        content.plain_text([3], "system")  # type: ignore[list-item]
    assert str(other.value) == "a system message may hold text only, got a 'int' block"


def test_user_parts_in_every_form() -> None:
    parts = [
        "a",
        {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}},
        {"type": "text"},
        {"type": "image", "base64": "AAAA", "mime_type": "image/png"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,BBBB", "detail": "low"}},
        {"type": "image_url", "image_url": "data:image/png;base64,CCCC"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "DD"}},
        {"type": "video", "base64": "EE", "mime_type": "video/mp4"},
    ]
    assert content.user_content(parts, K31) == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
        {"type": "text", "text": ""},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,BBBB"}},
        {"type": "image_url", "image_url": "data:image/png;base64,CCCC"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,DD"}},
        {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,EE"}},
    ]
    assert content.user_content("plain", K31) == "plain"


def test_media_refusals_word_for_word() -> None:
    cases = [
        (
            {"type": "image", "base64": "A", "mime_type": "text/plain"},
            "unsupported image type 'text/plain': a base64 image needs an image/* type",
        ),
        ({"type": "image"}, "image block needs base64 data or a url, got keys ['type']"),
        (
            {"type": "image_url", "image_url": {}},
            "a image_url part needs a url (a string), got None",
        ),
        ({"type": "image_url", "image_url": ""}, "a image_url part needs a url (a string), got ''"),
        (
            {"type": "image_url", "image_url": {"url": 3}},
            "a image_url part needs a url (a string), got 3",
        ),
        (3, "unsupported content block type None (text, image and video only)"),
        (
            {"type": "audio", "base64": "A"},
            "unsupported content block type 'audio' (text, image and video only)",
        ),
    ]
    for part, message in cases:
        with pytest.raises(ValueError) as info:
            content.user_content([part], K31)
        assert str(info.value) == message
    video = {"type": "video", "base64": "A", "mime_type": "video/webm"}
    assert content.user_content([video], K31) == [
        {"type": "video_url", "video_url": {"url": "data:video/webm;base64,A"}}
    ]


def test_a_row_that_lists_its_image_types_is_held_to_them() -> None:
    # No Chat Completions row lists its types today (any image/* goes); the check reads the row.
    listed = dataclasses.replace(K31, image_media_types=("image/png", "image/gif"))
    png = {"type": "image", "base64": "A", "mime_type": "image/png"}
    assert content.user_content([png], listed)[0]["image_url"] == {"url": "data:image/png;base64,A"}
    with pytest.raises(ValueError) as info:
        content.user_content([{**png, "mime_type": "image/bmp"}], listed)
    assert str(info.value) == (
        "unsupported image type 'image/bmp' for kimi-k3.1-pro: allowed image/png, image/gif"
    )
    video = {"type": "video", "base64": "A", "mime_type": "video/webm"}
    assert content.user_content([video], listed)[0]["type"] == "video_url"  # not held to them


def test_a_model_without_images_says_so() -> None:
    no_media = dataclasses.replace(K31, image_inputs=False, video_inputs=False)
    for part, what in (
        ({"type": "image", "url": "https://x.test/a.png"}, "image inputs"),
        ({"type": "video", "url": "https://x.test/a.mp4"}, "video inputs"),
    ):
        with pytest.raises(ValueError) as info:
            content.user_content([part], no_media)
        assert (
            str(info.value)
            == f"kimi-k3.1-pro does not support {what} on the Chat Completions protocol"
        )
    no_tool_images = dataclasses.replace(K31, image_tool_message=False)
    tool = ToolMessage(
        content=[{"type": "image", "base64": "A", "mime_type": "image/png"}], tool_call_id="c"
    )
    with pytest.raises(ValueError) as info:
        content.tool_result(tool, no_tool_images)
    assert str(info.value) == (
        "kimi-k3.1-pro does not support images in tool results on the Chat Completions protocol"
    )


def test_a_web_url_is_sent_as_is_with_one_warning_per_family(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(content, "_warned_media_urls", set())
    url = "https://x.test/" + "a" * 100
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sent = content.user_content([{"type": "image", "url": url}], K31)
        content.user_content([{"type": "image_url", "image_url": "http://x.test/b.png"}], K31)
        content.user_content([{"type": "video_url", "video_url": {"url": "http://x.test/v"}}], K31)
    assert sent == [{"type": "image_url", "image_url": {"url": url}}]
    assert [str(w.message) for w in caught] == [
        'Chat Completions documents images as base64 data URLs only ("Contenido de imagen como '
        'URL data Base64 (data:image/png;base64,...)"); sending the image URL '
        f"{url[:80]!r} as is, the service may not fetch it",
        'Chat Completions documents videos as base64 data URLs only ("Contenido de video como '
        'URL data Base64 (data:video/mp4;base64,...)"); sending the video URL '
        "'http://x.test/v' as is, the service may not fetch it",
    ]
    assert content._warned_media_urls == {"image", "video"}
    anthropic_url = {"type": "image", "source": {"type": "url", "url": "data:image/png;base64,A"}}
    assert content.user_content([anthropic_url], K31) == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,A"}}
    ]


def test_a_tool_result_is_text_or_parts() -> None:
    text = ToolMessage(content=["a", {"type": "text", "text": "b"}], tool_call_id="c")
    assert content.tool_result(text, K31) == {"role": "tool", "tool_call_id": "c", "content": "ab"}
    image = {"type": "image", "base64": "A", "mime_type": "image/png"}
    mixed = ToolMessage(content=["a", image], tool_call_id="c")
    assert content.tool_result(mixed, K31)["content"] == [
        {"type": "text", "text": "a"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,A"}},
    ]
    assert (
        content.tool_result(ToolMessage("plain", tool_call_id="c"), KIMI_K3)["content"] == "plain"
    )
