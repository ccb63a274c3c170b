"""parse_response / usage_from_anthropic for the Messages protocol (authored Kimi bodies)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from langchain_kimi.protocols.anthropic_messages import parse_response, usage_from_anthropic
from tools.schema_validation import validate_response


def body(
    content: list[dict[str, Any]], model: str = "kimi-k3.1-pro", **extra: Any
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 4},
    }
    result.update(extra)
    validate_response(result, "anthropic", model)
    return result


def test_text_reply() -> None:
    msg = parse_response(body([{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}]))
    assert msg.content == "Hello"
    assert msg.id == "msg_1"
    assert "reasoning_content" not in msg.additional_kwargs
    assert "thinking_blocks" not in msg.additional_kwargs
    assert msg.additional_kwargs["anthropic_blocks"] == [
        {"type": "text", "text": "Hel"},
        {"type": "text", "text": "lo"},
    ]
    assert msg.response_metadata == {
        "id": "msg_1",
        "model": "kimi-k3.1-pro",  # as ChatAnthropic names it, beside model_name
        "model_name": "kimi-k3.1-pro",
        "model_provider": "kimi",
        "protocol": "anthropic",
        "finish_reason": "stop",
        "raw_finish_reason": "end_turn",
        "stop_reason": "end_turn",  # as ChatAnthropic keeps them
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 4},
    }
    assert msg.usage_metadata == {"input_tokens": 10, "output_tokens": 4, "total_tokens": 14}


def test_thinking_and_tool_use_k3() -> None:
    thinking = {"type": "thinking", "thinking": "Plan.", "signature": "sig"}
    tool = {"type": "tool_use", "id": "functions.f:0", "name": "f", "input": {"x": 1}}
    msg = parse_response(body([thinking, tool], "kimi-k3", stop_reason="tool_use"))
    assert msg.content == ""
    assert msg.additional_kwargs["reasoning_content"] == "Plan."
    assert msg.additional_kwargs["thinking_blocks"] == [thinking]
    assert msg.tool_calls == [
        {"type": "tool_call", "name": "f", "args": {"x": 1}, "id": "functions.f:0"}
    ]
    assert msg.response_metadata["finish_reason"] == "tool_calls"


def test_redacted_thinking_kept_without_text() -> None:
    redacted = {"type": "redacted_thinking", "data": "opaque"}
    thinking = {"type": "thinking", "thinking": "visible", "signature": "s"}
    msg = parse_response(
        {"id": "m", "content": [redacted, thinking, {"type": "text", "text": "ok"}]}
    )
    assert msg.additional_kwargs["thinking_blocks"] == [redacted, thinking]
    assert msg.additional_kwargs["reasoning_content"] == "visible"
    only = parse_response({"id": "m", "content": [redacted, {"type": "text", "text": "ok"}]})
    assert "reasoning_content" not in only.additional_kwargs
    assert only.additional_kwargs["thinking_blocks"] == [redacted]


def test_non_object_tool_input_is_invalid_tool_call() -> None:
    msg = parse_response(
        {"id": "m", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": [1, 2]}]}
    )
    assert msg.tool_calls == []
    assert msg.invalid_tool_calls[0]["args"] == "[1, 2]"
    assert msg.invalid_tool_calls[0]["id"] == "t1"


def test_server_blocks_never_become_tool_calls() -> None:
    content: list[dict[str, Any]] = [
        {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "q"}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srv_1",
            "content": {"type": "web_search_tool_result_error", "error_code": "unavailable"},
        },
        {"type": "text", "text": "Sorry."},
    ]
    usage = {"input_tokens": 5, "output_tokens": 3, "server_tool_use": {"web_search_requests": 1}}
    msg = parse_response(body(content, usage=usage))
    assert msg.tool_calls == []
    assert msg.invalid_tool_calls == []
    assert msg.additional_kwargs["anthropic_blocks"] == content
    assert msg.response_metadata["server_tool_use"] == {"web_search_requests": 1}


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "refusal"),
    ],
)
def test_finish_reasons(raw: str, normalized: str) -> None:
    msg = parse_response({"id": "m", "content": [], "stop_reason": raw})
    assert msg.response_metadata["finish_reason"] == normalized
    assert msg.response_metadata["raw_finish_reason"] == raw


def test_null_stop_reason_omitted_and_stop_sequence_kept() -> None:
    msg = parse_response({"id": "m", "content": [], "stop_reason": None})
    assert "finish_reason" not in msg.response_metadata
    seq = parse_response(
        {"id": "m", "content": [], "stop_reason": "stop_sequence", "stop_sequence": "END"}
    )
    assert seq.response_metadata["stop_sequence"] == "END"


def test_usage_cache_reads_and_writes_are_added_to_input() -> None:
    usage = usage_from_anthropic(
        {
            "input_tokens": 10,
            "cache_read_input_tokens": 200,
            "cache_creation_input_tokens": 30,
            "output_tokens": 7,
            "output_tokens_details": {"thinking_tokens": 5},
        }
    )
    assert usage == {
        "input_tokens": 240,
        "output_tokens": 7,
        "total_tokens": 247,
        "input_token_details": {"cache_read": 200, "cache_creation": 30},
        "output_token_details": {"reasoning": 5},
    }


def test_usage_ttl_split_does_not_double_count() -> None:
    usage = usage_from_anthropic(
        {
            "input_tokens": 1,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 100,
            "cache_creation": {"ephemeral_5m_input_tokens": 60, "ephemeral_1h_input_tokens": 25},
            "output_tokens": 2,
        }
    )
    details = cast("dict[str, int]", usage["input_token_details"])
    assert details == {
        "cache_read": 0,
        "cache_creation": 15,
        "ephemeral_5m_input_tokens": 60,
        "ephemeral_1h_input_tokens": 25,
    }
    writes = [
        details[k]
        for k in ("cache_creation", "ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
    ]
    assert sum(writes) == 100  # the cache writes, counted once
    assert usage["input_tokens"] == 101


def test_usage_matches_langchain_anthropic_on_totals() -> None:
    anthropic_types = pytest.importorskip("anthropic.types")
    from langchain_anthropic.chat_models import _create_usage_metadata

    raw = {
        "input_tokens": 12,
        "cache_read_input_tokens": 300,
        "cache_creation_input_tokens": 40,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 40},
        "output_tokens": 9,
    }
    theirs = _create_usage_metadata(anthropic_types.Usage(**raw))
    ours = usage_from_anthropic(raw)
    for key in ("input_tokens", "output_tokens", "total_tokens"):
        assert ours[key] == theirs[key]
    ours_details, theirs_details = ours["input_token_details"], theirs["input_token_details"]
    ours_sum = sum(int(v) for v in ours_details.values())  # type: ignore[call-overload]
    theirs_sum = sum(int(v or 0) for v in theirs_details.values())  # type: ignore[call-overload]
    assert ours_sum == theirs_sum


def test_a_tool_input_that_is_not_an_object_is_an_invalid_tool_call() -> None:
    block = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": ["Paris"]}
    msg = parse_response({"id": "msg_1", "model": "kimi-k3.1-pro", "content": [block]})
    assert msg.tool_calls == []
    (invalid,) = msg.invalid_tool_calls
    assert (invalid["name"], invalid["args"], invalid["id"]) == (
        "get_weather",
        '["Paris"]',
        "toolu_1",
    )
    assert invalid["error"] == "tool input is not a JSON object"


def test_a_tool_input_that_is_missing_is_an_empty_object() -> None:
    block = {"type": "tool_use", "id": "toolu_1", "name": "ping"}
    msg = parse_response({"id": "msg_1", "content": [block]})
    assert [(call["name"], call["args"]) for call in msg.tool_calls] == [("ping", {})]


@pytest.mark.parametrize("usage", [None, [1, 2], "10 tokens", 7])
def test_usage_that_is_not_an_object_is_no_usage(usage: object) -> None:
    msg = parse_response({"id": "msg_1", "content": [], "usage": usage})
    assert msg.usage_metadata is None
    assert "usage" not in msg.response_metadata


def test_a_reply_without_id_model_or_thinking_count_reports_none_of_them() -> None:
    usage = {
        "input_tokens": 1,
        "output_tokens": 2,
        "output_tokens_details": {"thinking_tokens": None},
    }
    msg = parse_response({"content": [{"type": "text", "text": "hi"}], "usage": usage})
    assert "id" not in msg.response_metadata
    assert "model_name" not in msg.response_metadata
    assert "model" not in msg.response_metadata
    assert msg.usage_metadata is not None
    assert "output_token_details" not in msg.usage_metadata


def test_a_ttl_split_lists_only_the_ttls_it_reports() -> None:
    usage = {
        "input_tokens": 1,
        "output_tokens": 1,
        "cache_creation_input_tokens": 10,
        "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": None},
    }
    details = usage_from_anthropic(usage).get("input_token_details") or {}
    assert details == {"ephemeral_5m_input_tokens": 10, "cache_creation": 0}


# --- pinned for the mutation sample ------------------------------------------------------------


def test_a_future_stop_reason_is_its_own_finish_reason() -> None:
    msg = parse_response({"id": "m", "content": [], "stop_reason": "paused"})
    assert msg.response_metadata["finish_reason"] == "paused"
    assert msg.response_metadata["raw_finish_reason"] == "paused"


def test_a_tool_use_without_name_is_a_call_with_an_empty_name() -> None:
    msg = parse_response({"content": [{"type": "tool_use", "id": "t1", "input": {"a": 1}}]})
    assert msg.tool_calls == [{"name": "", "args": {"a": 1}, "id": "t1", "type": "tool_call"}]


def test_text_content_is_the_answer() -> None:
    msg = parse_response({"id": "m", "content": "plain answer"})
    assert msg.content == "plain answer"
    assert msg.additional_kwargs["anthropic_blocks"] == [{"type": "text", "text": "plain answer"}]


@pytest.mark.parametrize(
    ("model", "requested", "input_tokens"),
    [
        ("kimi-k3", None, 15),  # kimi-k3: input_tokens already hold the cache writes
        ("kimi-k3.1-pro", None, 17),  # K3.1: writes apart, added
        (None, "kimi-k3", 15),  # no model in the reply: the requested model decides
        (None, "kimi-k3.1-pro", 17),
    ],
)
def test_usage_follows_the_replying_or_requested_model(
    model: str | None, requested: str | None, input_tokens: int
) -> None:
    usage = {
        "input_tokens": 10,
        "output_tokens": 1,
        "cache_read_input_tokens": 5,
        "cache_creation_input_tokens": 2,
    }
    body: dict[str, Any] = {"content": [], "usage": usage}
    if model is not None:
        body["model"] = model
    msg = parse_response(body, requested)
    assert msg.usage_metadata is not None
    assert msg.usage_metadata["input_tokens"] == input_tokens
