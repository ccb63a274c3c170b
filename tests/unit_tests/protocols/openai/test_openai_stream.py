"""StreamDecoder for Chat Completions SSE: aggregation equals parse_response, usage once, errors.

The helpers (`sse_events`, `decode`, `aggregate`, `summary`, `random_pieces`) are in
`tests/support/chat_stream.py`, shared with the corpus and web-search tests.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from langchain_kimi._call._sync.drivers import read_round
from langchain_kimi._call.plans import StreamPlan
from langchain_kimi._errors import (
    KimiAPIError,
    KimiInvalidRequestError,
    KimiRateLimitError,
    KimiStreamError,
)
from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import capabilities
from langchain_kimi.protocols.openai_chat import ADAPTER
from langchain_kimi.protocols.openai_chat.response import parse_response
from langchain_kimi.protocols.openai_chat.stream import StreamDecoder
from tests.support.chat_stream import aggregate, decode, random_pieces, sse_events, summary


def sse(payloads: list[dict[str, Any]], done: bool = True) -> str:
    text = "".join(f"data: {json.dumps(p, ensure_ascii=False)}\n\n" for p in payloads)
    return text + ("data: [DONE]\n\n" if done else "")


HEAD = {
    "id": "chatcmpl-9",
    "object": "chat.completion.chunk",
    "created": 1700000000,
    "model": "kimi-k3.1-pro",
}
USAGE = {
    "prompt_tokens": 50,
    "completion_tokens": 30,
    "total_tokens": 80,
    "prompt_tokens_details": {"cached_tokens": 10, "cache_write_tokens": 5},
    "completion_tokens_details": {"reasoning_tokens": 12},
}


def delta(d: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {**HEAD, "choices": [{"index": 0, "delta": d, "finish_reason": finish}], **extra}


def tool_call_stream(usage_mode: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A streamed reply with reasoning, text and two client calls, and the equivalent body."""
    payloads = [
        delta({"role": "assistant", "content": None, "reasoning_content": ""}),
        delta({"reasoning_content": "Need "}),
        delta({"reasoning_content": None}),
        delta({"reasoning_content": "weather ☀️."}),
        delta({"content": "Let me check."}),
        delta(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c0",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": ""},
                    }
                ]
            }
        ),
        delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]}),
        delta({"tool_calls": [{"index": 0, "function": {"arguments": '"Zürich"}'}}]}),
        delta(
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "now", "arguments": ""},
                    }
                ]
            }
        ),
    ]
    finish = delta({}, "tool_calls")
    if usage_mode in ("choice", "both"):
        finish["choices"][0]["usage"] = {**USAGE, "prompt_tokens": 1, "total_tokens": 31}
    payloads.append(finish)
    if usage_mode in ("top", "both"):
        payloads.append({**HEAD, "choices": [], "usage": USAGE})
    body = {
        **HEAD,
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Let me check.",
                    "reasoning_content": "Need weather ☀️.",
                    "tool_calls": [
                        {
                            "id": "c0",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'},
                        },
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "now", "arguments": ""},
                        },
                    ],
                },
            }
        ],
        "usage": USAGE
        if usage_mode != "choice"
        else {**USAGE, "prompt_tokens": 1, "total_tokens": 31},
    }
    return payloads, body


@pytest.mark.parametrize("usage_mode", ["top", "choice", "both"])
@pytest.mark.parametrize("seed", range(5))
def test_stream_aggregates_to_invoke_result(usage_mode: str, seed: int) -> None:
    payloads, body = tool_call_stream(usage_mode)
    raw = sse(payloads).encode()
    chunks = decode(sse_events(random_pieces(raw, seed)))
    merged = aggregate(chunks)
    expected = parse_response(body)
    assert summary(merged) == summary(expected)
    assert merged.chunk_position == "last"
    assert sum(1 for c in chunks if c.usage_metadata is not None) == 1
    assert chunks[-1].usage_metadata is not None
    assert sum(1 for c in chunks if "model_name" in c.response_metadata) == 1
    assert sum(1 for c in chunks if "finish_reason" in c.response_metadata) == 1
    assert sum(1 for c in chunks if "tool_calls" in c.additional_kwargs) == 1


@pytest.mark.parametrize("usage_mode", ["top", "choice", "both"])
def test_reply_is_the_non_streamed_body(usage_mode: str) -> None:
    """`reply()` (what the adapter's rounds read after a streamed round) parses to exactly what
    the non-streamed body of the same reply parses to."""
    payloads, body = tool_call_stream(usage_mode)
    decoder = StreamDecoder()
    for event, data in sse_events([sse(payloads).encode()]):
        decoder.feed(event, data)
    assert decoder.ended
    assert summary(parse_response(decoder.reply())) == summary(parse_response(body))
    assert decoder.reply()["choices"][0]["message"] == decoder.assistant_message()


def test_tool_call_chunks_carry_index_and_first_piece_ids() -> None:
    payloads, _ = tool_call_stream("top")
    chunks = decode(sse_events([sse(payloads).encode()]))
    pieces = [tc for c in chunks[:-1] for tc in c.tool_call_chunks]
    # The last chunk carries one empty piece that keeps langchain-core from re-parsing the raw list.
    assert [(p["index"], p["id"], p["name"], p["args"]) for p in chunks[-1].tool_call_chunks] == [
        (0, None, None, "")
    ]
    assert [(p["index"], p["id"], p["name"]) for p in pieces] == [
        (0, "c0", "get_weather"),
        (0, None, None),
        (0, None, None),
        (1, "c1", "now"),
    ]
    reasoning = [
        c.additional_kwargs["reasoning_content"]
        for c in chunks
        if "reasoning_content" in c.additional_kwargs
    ]
    assert reasoning == ["Need ", "weather ☀️."]


def test_repeated_usage_keeps_latest_per_field() -> None:
    payloads = [
        delta({"content": "hi"}),
        delta({}, "stop", usage={"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}),
        {**HEAD, "choices": [], "usage": {"completion_tokens": 7, "total_tokens": 12}},
        {**HEAD, "choices": [], "usage": {"completion_tokens_details": {"reasoning_tokens": 3}}},
    ]
    chunks = decode(sse_events([sse(payloads).encode()]))
    assert [c.usage_metadata for c in chunks if c.usage_metadata] == [
        {
            "input_tokens": 5,
            "output_tokens": 7,
            "total_tokens": 12,
            "output_token_details": {"reasoning": 3},
        }
    ]


def test_builtin_round_emits_no_calls_and_no_finish() -> None:
    call = {
        "id": "s1",
        "type": "builtin_function",
        "function": {"name": "$web_search", "arguments": '{"query": "kimi"}'},
    }
    payloads = [
        delta({"role": "assistant", "reasoning_content": "search it"}),
        delta(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        **call,
                        "function": {"name": "$web_search", "arguments": '{"query": '},
                    }
                ]
            }
        ),
        delta({"tool_calls": [{"index": 0, "function": {"arguments": '"kimi"}'}}]}),
        delta({}, "tool_calls", usage=USAGE),
    ]
    decoder = StreamDecoder()
    chunks = decode(sse_events([sse(payloads).encode()]), decoder)
    assert decoder.is_builtin_round
    assert not any(c.tool_call_chunks for c in chunks)
    assert not any("tool_calls" in c.additional_kwargs for c in chunks)
    assert not any("finish_reason" in c.response_metadata for c in chunks)
    assert chunks[-1].chunk_position is None
    assert chunks[-1].usage_metadata is not None
    assert decoder.assistant_message() == {
        "role": "assistant",
        "content": None,
        "reasoning_content": "search it",
        "tool_calls": [call],
    }


def test_mixed_round_streams_client_calls_only() -> None:
    search = {
        "id": "s1",
        "type": "builtin_function",
        "function": {"name": "$web_search", "arguments": "{}"},
    }
    client = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    payloads = [
        delta({"tool_calls": [{"index": 0, **search}]}),
        delta({"tool_calls": [{"index": 1, **client}]}),
        delta({}, "tool_calls"),
    ]
    decoder = StreamDecoder()
    merged = aggregate(decode(sse_events([sse(payloads).encode()]), decoder))
    assert not decoder.is_builtin_round
    assert [(c["id"], c["args"]) for c in merged.tool_calls] == [("c1", {"a": 1})]
    assert merged.additional_kwargs["tool_calls"] == [search, client]
    assert merged.response_metadata["finish_reason"] == "tool_calls"


def test_plain_reply_assistant_message() -> None:
    decoder = StreamDecoder()
    decode(
        sse_events([sse([delta({"content": "A"}), delta({"content": "B"}, "stop")]).encode()]),
        decoder,
    )
    assert decoder.assistant_message() == {"role": "assistant", "content": "AB"}
    assert not decoder.is_builtin_round


def test_missing_done_raises_with_partial() -> None:
    # The stream plan, not the decoder, keeps what the caller has seen.
    plan = StreamPlan(
        ADAPTER,
        RequestOptions(caps=capabilities("kimi-k3.1-pro", "openai")),
        {},
        max_builtin_rounds=1,
    )
    events = sse_events(
        [sse([delta({"content": "partial "}), delta({"content": "text"})], done=False).encode()]
    )
    plan.start_round("https://base.test")
    with pytest.raises(KimiStreamError, match=r"before \[DONE\]") as info, plan.guard():
        list(read_round(plan, events))
    assert info.value.partial.content == "partial text"
    with pytest.raises(KimiStreamError, match=r"before \[DONE\]") as bare:
        StreamDecoder().finish()
    assert bare.value.partial is None


def test_error_payload_raises_typed_error() -> None:
    decoder = StreamDecoder()
    decoder.feed("", json.dumps(delta({"content": "x"})))
    with pytest.raises(KimiRateLimitError, match="slow down"):
        decoder.feed(
            "",
            json.dumps(
                {"error": {"message": "slow down", "type": "rate_limit_error", "code": None}}
            ),
        )
    with pytest.raises(KimiInvalidRequestError, match="bad"):
        StreamDecoder().feed(
            "error", json.dumps({"error": {"message": "bad", "type": "invalid_request_error"}})
        )


def test_malformed_json_raises_stream_error() -> None:
    with pytest.raises(KimiStreamError, match="malformed JSON"):
        StreamDecoder().feed("message", "{not json")
    with pytest.raises(KimiStreamError, match="not an object"):
        StreamDecoder().feed("message", "[1]")


def test_after_done_and_keepalives_ignored() -> None:
    decoder = StreamDecoder()
    assert decoder.feed("ping", "{}") == []
    chunks = decoder.feed("message", json.dumps(delta({"content": "x"}, "content_filter")))
    chunks += decoder.feed("message", "[DONE]")
    assert decoder.feed("message", json.dumps(delta({"content": "late"}))) == []
    assert decoder.finish() == []
    merged = aggregate(chunks)
    assert merged.content == "x"
    assert merged.response_metadata["finish_reason"] == "refusal"
    assert merged.response_metadata["raw_finish_reason"] == "content_filter"
    assert merged.usage_metadata is None


def test_sse_parser_handles_split_utf8_and_crlf() -> None:
    raw = 'event: message\r\ndata: {"a": "é☀"}\r\n\r\n: comment\n\ndata: [DONE]\n\n'.encode()
    assert sse_events([raw[i : i + 1] for i in range(len(raw))]) == [
        ("message", '{"a": "é☀"}'),
        ("", "[DONE]"),
    ]


# --- mutation sample (issue 31): what the survivors of stream.py changed unnoticed -------------


def _chunks_of(payloads: list[dict[str, Any]], decoder: StreamDecoder | None = None) -> Any:
    return decode(sse_events([sse(payloads).encode()]), decoder)


def test_reply_is_a_whole_chat_completion() -> None:
    decoder = StreamDecoder()
    _chunks_of(
        [delta({"role": "assistant", "content": "Hi"}), delta({}, "stop", usage=USAGE)], decoder
    )
    assert decoder.reply() == {
        "id": "chatcmpl-9",
        "model": "kimi-k3.1-pro",
        "created": 1700000000,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}
        ],
        "usage": USAGE,
    }


def test_a_stream_without_ids_finish_or_usage() -> None:
    """No `id`, no `finish_reason`, no usage, no text: nothing is made up for them."""
    payloads = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    decoder = StreamDecoder()
    chunks = _chunks_of(payloads, decoder)
    assert decoder.reply() == {
        "id": None,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}}],
    }
    assert all(c.id is None for c in chunks)
    assert chunks[-1].response_metadata == {"model_provider": "kimi"}
    assert StreamDecoder().reply() == {
        "id": None,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}}],
    }


def test_every_chunk_carries_the_reply_id() -> None:
    payloads, _ = tool_call_stream("top")
    chunks = _chunks_of(payloads)
    assert len(chunks) > 2
    assert all(c.id == "chatcmpl-9" for c in chunks)


def test_a_continuation_emits_no_header_and_token_usage_can_be_left_out() -> None:
    """A follow-up round of the `$web_search` loop: no second `id` / `model_name`, and (with
    `token_usage=False`) no raw usage object: the loop puts the sum of its rounds there."""
    payloads = [delta({"content": "Hi"}), delta({}, "stop", usage=USAGE)]
    chunks = _chunks_of(payloads, StreamDecoder(continuation=True, token_usage=False))
    assert all("model_name" not in c.response_metadata for c in chunks)
    assert all("token_usage" not in c.response_metadata for c in chunks)
    assert chunks[-1].usage_metadata is not None
    assert chunks[-1].response_metadata["finish_reason"] == "stop"


@pytest.mark.parametrize(
    ("requested", "served", "cache_creation"),
    [
        # 004: kimi-k3 bills cache writes as plain input (no `cache_creation`), K3.1 apart. The
        # reply's model decides when it names a known family, else the requested one does.
        (None, "kimi-k3.1-pro", 5),
        ("kimi-k3.1-pro", "kimi-k3", None),
        ("kimi-k3", "gateway-alias", None),
    ],
)
def test_cache_writes_follow_the_model_that_bills_them(
    requested: str | None, served: str, cache_creation: int | None
) -> None:
    payloads = [
        {**delta({"content": "Hi"}), "model": served},
        {**delta({}, "stop", usage=USAGE), "model": served},
    ]
    chunks = _chunks_of(payloads, StreamDecoder(requested))
    usage = chunks[-1].usage_metadata
    assert usage is not None
    assert usage["input_token_details"].get("cache_creation") == cache_creation


def test_an_error_event_raises_even_without_an_error_object() -> None:
    """`event: error` is an error whatever its data holds; the message shows the payload."""
    with pytest.raises(KimiAPIError, match=r'error event in stream: \{"message": "bad"'):
        StreamDecoder().feed("error", json.dumps({"message": "bad"}))


def test_tool_call_pieces_the_services_vary_on() -> None:
    """No `index` (the position in the list stands in), no `type` (a client `function`), the id
    repeated on every piece (reported once), a first piece with only the id (still a piece),
    and a builtin call beside a client call in one delta."""
    search = {
        "id": "s1",
        "type": "builtin_function",
        "function": {"name": "$web_search", "arguments": "{}"},
    }
    payloads = [
        delta({"tool_calls": [search, {"id": "c1"}]}),
        delta(
            {
                "tool_calls": [
                    {"index": 1, "id": "c1", "function": {"name": "f", "arguments": '{"a": '}}
                ]
            }
        ),
        delta({"tool_calls": [{"index": 1, "id": "c1", "function": {"arguments": "1}"}}]}),
        delta({}, "tool_calls"),
    ]
    chunks = _chunks_of(payloads)
    pieces = [
        (p["index"], p["id"], p["name"], p["args"]) for c in chunks[:-1] for p in c.tool_call_chunks
    ]
    assert pieces == [(1, "c1", None, ""), (1, None, "f", '{"a": '), (1, None, None, "1}")]
    merged = aggregate(chunks)
    assert [(c["id"], c["name"], c["args"]) for c in merged.tool_calls] == [("c1", "f", {"a": 1})]
    assert merged.additional_kwargs["tool_calls"] == [
        search,
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
    ]
