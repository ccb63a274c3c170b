"""parse_response / usage_from_openai for Chat Completions bodies."""

from __future__ import annotations

import json
from typing import Any

import pytest

from langchain_kimi.protocols.openai_chat.response import (
    merge_usage,
    parse_response,
    raw_assistant_message,
    raw_usage,
    usage_from_openai,
)
from tools.schema_validation import validate_response


def body_with(message: dict[str, Any], finish: str = "stop", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "kimi-k3.1-pro",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
        ],
        "usage": {
            "prompt_tokens": 100,
            "completion_tokens": 40,
            "total_tokens": 140,
            "prompt_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 30},
            "completion_tokens_details": {"reasoning_tokens": 25},
        },
    }
    body.update(extra)
    return body


def test_text_reply_with_reasoning_and_usage() -> None:
    body = body_with({"content": "Hello!", "reasoning_content": "greet"})
    validate_response(body, "openai")
    msg = parse_response(body)
    assert msg.content == "Hello!"
    assert msg.additional_kwargs == {"reasoning_content": "greet"}
    assert msg.tool_calls == []
    assert msg.usage_metadata == {
        "input_tokens": 100,
        "output_tokens": 40,
        "total_tokens": 140,
        "input_token_details": {"cache_read": 60, "cache_creation": 30},
        "output_token_details": {"reasoning": 25},
    }
    assert msg.response_metadata == {
        "id": "chatcmpl-1",
        "model_name": "kimi-k3.1-pro",
        "model_provider": "kimi",
        "protocol": "openai",
        "finish_reason": "stop",
        "raw_finish_reason": "stop",
        "created": 1700000000,
        "token_usage": body["usage"],
    }
    assert msg.id == "chatcmpl-1"


def test_null_content_and_empty_reasoning() -> None:
    msg = parse_response(body_with({"content": None, "reasoning_content": ""}))
    assert msg.content == ""
    assert "reasoning_content" not in msg.additional_kwargs


def test_tool_calls_valid_invalid_and_builtin() -> None:
    raw: list[dict[str, Any]] = [
        {
            "id": "c0",
            "type": "function",
            "index": 0,
            "function": {"name": "a", "arguments": '{"x": 1}'},
        },
        {"id": "c1", "type": "function", "function": {"name": "b", "arguments": ""}},
        {"id": "c2", "function": {"name": "c", "arguments": "{}"}},
        {"id": "c3", "type": "function", "function": {"name": "d", "arguments": "[1, 2]"}},
        {"id": "c4", "type": "function", "function": {"name": "e", "arguments": "{broken"}},
        {
            "id": "s1",
            "type": "builtin_function",
            "function": {"name": "$web_search", "arguments": '{"q":"x"}'},
        },
    ]
    msg = parse_response(body_with({"content": None, "tool_calls": raw}, "tool_calls"))
    assert [(c["id"], c["name"], c["args"]) for c in msg.tool_calls] == [
        ("c0", "a", {"x": 1}),
        ("c1", "b", {}),
        ("c2", "c", {}),
    ]
    assert [(c["id"], c["args"]) for c in msg.invalid_tool_calls] == [
        ("c3", "[1, 2]"),
        ("c4", "{broken"),
    ]
    assert msg.additional_kwargs["tool_calls"] == [
        {k: v for k, v in c.items() if k != "index"} for c in raw
    ]
    assert msg.response_metadata["finish_reason"] == "tool_calls"


def test_no_tool_calls_key_when_none() -> None:
    msg = parse_response(body_with({"content": "x", "tool_calls": []}))
    assert "tool_calls" not in msg.additional_kwargs


@pytest.mark.parametrize(("raw", "common"), [("length", "length"), ("content_filter", "refusal")])
def test_finish_reason_mapping(raw: str, common: str) -> None:
    msg = parse_response(body_with({"content": "x"}, raw))
    assert msg.response_metadata["finish_reason"] == common
    assert msg.response_metadata["raw_finish_reason"] == raw


def test_usage_in_choice_moonshot_style() -> None:
    body = body_with({"content": "x"})
    usage = body.pop("usage")
    body["choices"][0]["usage"] = usage
    assert (
        parse_response(body).usage_metadata
        == parse_response(body_with({"content": "x"})).usage_metadata
    )


def test_top_level_usage_wins_over_choice_usage() -> None:
    body = body_with({"content": "x"})
    body["choices"][0]["usage"] = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    usage = parse_response(body).usage_metadata
    assert usage is not None
    assert usage["input_tokens"] == 100


def test_usage_minimal_and_missing_total() -> None:
    assert usage_from_openai({"prompt_tokens": 3, "completion_tokens": 4}) == {
        "input_tokens": 3,
        "output_tokens": 4,
        "total_tokens": 7,
    }
    assert usage_from_openai(
        {"prompt_tokens": 3, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 2}}
    )["input_token_details"] == {"cache_read": 2}


def test_no_usage() -> None:
    body = body_with({"content": "x"})
    del body["usage"]
    assert parse_response(body).usage_metadata is None


def test_raw_assistant_message_strips_index() -> None:
    call = {
        "id": "s1",
        "index": 0,
        "type": "builtin_function",
        "function": {"name": "$web_search", "arguments": "{}"},
    }
    raw = raw_assistant_message(body_with({"content": None, "tool_calls": [call]}))
    assert raw["tool_calls"] == [{k: v for k, v in call.items() if k != "index"}]
    assert raw["role"] == "assistant"


def test_pure_builtin_reply_has_no_client_tool_calls() -> None:
    call = {
        "id": "s1",
        "type": "builtin_function",
        "function": {"name": "$web_search", "arguments": "{}"},
    }
    msg = parse_response(body_with({"content": None, "tool_calls": [call]}, "tool_calls"))
    assert msg.tool_calls == []
    assert msg.invalid_tool_calls == []
    assert msg.additional_kwargs["tool_calls"] == [call]


def test_a_reply_without_choices_is_an_error_not_an_empty_answer() -> None:
    from langchain_kimi import KimiAPIError
    from langchain_kimi.protocols.openai_chat.response import parse_response

    with pytest.raises(KimiAPIError, match="no choices"):
        parse_response({"id": "chatcmpl-x", "object": "chat.completion", "choices": []})


def test_total_tokens_is_the_services_own_figure_when_it_sends_one() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 10}
    assert usage_from_openai(usage)["total_tokens"] == 10
    assert usage_from_openai({"prompt_tokens": 3, "completion_tokens": 4})["total_tokens"] == 7


def test_a_reply_with_only_invalid_tool_calls_keeps_them_raw() -> None:
    raw = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": "[1, 2]"},
    }
    message = parse_response(body_with({"content": None, "tool_calls": [raw]}, "tool_calls"))
    assert message.tool_calls == []
    assert [call["error"] for call in message.invalid_tool_calls] == [
        "arguments are not a JSON object"
    ]
    assert message.additional_kwargs["tool_calls"] == [raw]


def test_missing_token_counts_are_zero() -> None:
    usage = usage_from_openai({"total_tokens": 5})
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (0, 0, 5)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"choices": [], "usage": {"prompt_tokens": 1}}, {"prompt_tokens": 1}),
        ({"choices": ["junk"], "usage": {"prompt_tokens": 1}}, {"prompt_tokens": 1}),
        ({"usage": {"prompt_tokens": 1}}, {"prompt_tokens": 1}),
        ({"choices": []}, None),
    ],
)
def test_raw_usage_reads_the_top_level_when_the_choice_has_none(
    body: dict[str, Any], expected: dict[str, Any] | None
) -> None:
    assert raw_usage(body) == expected


def test_a_reply_without_created_or_finish_reason_reports_neither() -> None:
    body = body_with({"content": "hi"}, finish=None)  # type: ignore[arg-type]
    del body["created"]
    meta = parse_response(body).response_metadata
    assert "created" not in meta
    assert "finish_reason" not in meta
    assert "raw_finish_reason" not in meta


def test_a_null_in_later_usage_keeps_the_earlier_figure() -> None:
    assert merge_usage({"prompt_tokens": 5, "total_tokens": 9}, {"prompt_tokens": None}) == {
        "prompt_tokens": 5,
        "total_tokens": 9,
    }


def test_a_reply_without_choices_shows_its_first_300_characters() -> None:
    from langchain_kimi import KimiAPIError

    body = {"id": "chatcmpl-x", "choices": [], "note": "x" * 400}
    with pytest.raises(KimiAPIError) as info:
        parse_response(body)
    assert info.value.message == "the reply has no choices: " + json.dumps(body)[:300]


def test_merge_usage_skips_a_missing_count_and_keeps_reading() -> None:
    old = {"prompt_tokens": 1, "details": {"cached": 1}}
    new = {"prompt_tokens": None, "completion_tokens": 2, "details": {"cached": None, "x": 3}}
    assert merge_usage(old, new) == {
        "prompt_tokens": 1,
        "completion_tokens": 2,
        "details": {"cached": 1, "x": 3},
    }


def test_the_raw_message_of_a_choice_that_is_no_object_is_empty() -> None:
    assert raw_assistant_message({"choices": ["not an object"]}) == {}
