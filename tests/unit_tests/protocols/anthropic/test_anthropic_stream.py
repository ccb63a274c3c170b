"""StreamDecoder for the Messages protocol: deltas, complete blocks once, usage once, errors,
and the aggregation rule (sum of chunks == parse_response of the equivalent body)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk

from langchain_kimi._call._sync.drivers import read_round
from langchain_kimi._call.plans import StreamPlan
from langchain_kimi._errors import KimiRateLimitError, KimiStreamError
from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import capabilities
from langchain_kimi.protocols.anthropic_messages import ADAPTER, StreamDecoder, parse_response
from tests.support.messages_stream import aggregate, assert_same_message, decode, sse_events
from tools.schema_validation import validate_response


def sse(*events: tuple[str, dict[str, Any]]) -> bytes:
    return "".join(
        f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n" for name, data in events
    ).encode()


# --- an authored K3.1 stream and its non-streaming twin ------------------------------------

CALL_ID = "functions.get_weather:0"
AUTHORED_BODY: dict[str, Any] = {
    "id": "msg_kimi_1",
    "type": "message",
    "role": "assistant",
    "model": "kimi-k3.1-pro",
    "content": [
        {"type": "thinking", "thinking": "Need the weather — in Paris.", "signature": "c2lnMQ=="},
        {"type": "text", "text": "Let me check Paris."},
        {"type": "tool_use", "id": CALL_ID, "name": "get_weather", "input": {"city": "Paris"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 20,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 50,
        "cache_creation": {"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 20},
        "output_tokens": 42,
        "output_tokens_details": {"thinking_tokens": 12},
    },
}
START_USAGE = {
    "input_tokens": 20,
    "cache_read_input_tokens": 100,
    "cache_creation_input_tokens": 50,
    "cache_creation": {"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 20},
    "output_tokens": 1,
}
AUTHORED_SSE = sse(
    (
        "message_start",
        {
            "type": "message_start",
            "message": {
                **{k: AUTHORED_BODY[k] for k in ("id", "type", "role", "model")},
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": START_USAGE,
            },
        },
    ),
    (
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
    ),
    ("ping", {"type": "ping"}),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Need the weather"},
        },
    ),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": " — in Paris."},
        },
    ),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "c2lnMQ=="},
        },
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    (
        "content_block_start",
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    ),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "Let me check"},
        },
    ),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": " Paris."},
        },
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 1}),
    (
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {
                "type": "tool_use",
                "id": CALL_ID,
                "name": "get_weather",
                "input": {},
            },
        },
    ),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": ""},
        },
    ),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": '},
        },
    ),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": '"Paris"}'},
        },
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 2}),
    ("future_event", {"type": "future_event"}),
    (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {
                "output_tokens": 42,
                "output_tokens_details": {"thinking_tokens": 12},
                "input_tokens": None,
            },
        },
    ),
    ("message_stop", {"type": "message_stop"}),
)


def test_authored_body_is_valid_k31_response() -> None:
    validate_response(AUTHORED_BODY, "anthropic", "kimi-k3.1-pro")


@pytest.mark.parametrize("cuts", [(), (1,), (7, 100, 101, 333), tuple(range(0, 4000, 13))])
def test_authored_stream_aggregates_to_parse_response(cuts: tuple[int, ...]) -> None:
    chunks = decode(sse_events(AUTHORED_SSE, cuts))
    assert_same_message(aggregate(chunks), parse_response(AUTHORED_BODY))


def test_reply_is_the_non_streamed_body() -> None:
    """`reply()` (what the adapter's rounds read after a streamed round) parses to exactly what
    the non-streamed body of the same reply parses to."""
    decoder = StreamDecoder()
    for event, data in sse_events(AUTHORED_SSE):
        decoder.feed(event, data)
    assert decoder.ended
    reply = decoder.reply()
    assert reply["content"] == AUTHORED_BODY["content"]
    assert_same_message(parse_response(reply), parse_response(AUTHORED_BODY))


def test_cut_inside_multibyte_character() -> None:
    cut = AUTHORED_SSE.index("—".encode()) + 1
    chunks = decode(sse_events(AUTHORED_SSE, (cut,)))
    assert (
        aggregate(chunks).additional_kwargs["reasoning_content"] == "Need the weather — in Paris."
    )


def test_chunk_shapes() -> None:
    chunks = decode(sse_events(AUTHORED_SSE))
    assert chunks[0].response_metadata == {
        "id": "msg_kimi_1",
        "model": "kimi-k3.1-pro",
        "model_name": "kimi-k3.1-pro",
        "model_provider": "kimi",
        "protocol": "anthropic",
    }
    assert [c.content for c in chunks if c.content] == ["Let me check", " Paris."]
    reasoning = [
        c.additional_kwargs["reasoning_content"]
        for c in chunks
        if "reasoning_content" in c.additional_kwargs
    ]
    assert reasoning == ["Need the weather", " — in Paris."]
    # Complete blocks come once each, signature included.
    blocks = [b for c in chunks for b in c.additional_kwargs.get("anthropic_blocks", [])]
    assert blocks == AUTHORED_BODY["content"]
    thinking = [b for c in chunks for b in c.additional_kwargs.get("thinking_blocks", [])]
    assert thinking == [AUTHORED_BODY["content"][0]]
    calls = [tc for c in chunks for tc in c.tool_call_chunks]
    assert calls[0] == {
        "type": "tool_call_chunk",
        "name": "get_weather",
        "id": CALL_ID,
        "args": "",
        "index": 2,
    }
    assert all(tc["index"] == 2 and tc["id"] is None for tc in calls[1:])
    assert "".join(tc["args"] or "" for tc in calls) == '{"city": "Paris"}'
    # Usage and finish metadata exactly once, on the last chunk.
    assert [c.usage_metadata is not None for c in chunks].count(True) == 1
    last = chunks[-1]
    assert last.chunk_position == "last"
    assert last.usage_metadata == {
        "input_tokens": 170,
        "output_tokens": 42,
        "total_tokens": 212,
        "input_token_details": {
            "cache_read": 100,
            "cache_creation": 0,
            "ephemeral_5m_input_tokens": 30,
            "ephemeral_1h_input_tokens": 20,
        },
        "output_token_details": {"reasoning": 12},
    }
    usage = last.response_metadata.pop("usage")  # raw, as ChatAnthropic keeps it
    assert usage["cache_creation_input_tokens"] == 50
    assert last.response_metadata == {
        "finish_reason": "tool_calls",
        "raw_finish_reason": "tool_use",
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "model_provider": "kimi",
    }
    # model_provider is on every chunk (langchain-core picks the v1 translator per chunk and
    # merges equal values of that key); every other key comes once.
    assert all(c.response_metadata["model_provider"] == "kimi" for c in chunks)
    keys = [k for c in chunks for k in c.response_metadata if k != "model_provider"]
    assert len(keys) == len(set(keys))
    assert all(c.id == "msg_kimi_1" for c in chunks)


def test_server_tool_use_makes_no_tool_call_chunks() -> None:
    raw = sse(
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "m",
                    "model": "kimi-k3.1-pro",
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {
                    "type": "server_tool_use",
                    "id": "srv_1",
                    "name": "web_search",
                    "input": {},
                },
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"query": "q"}'},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srv_1",
                    "content": [],
                },
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "text", "text": "", "citations": []},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "citations_delta", "citation": {"url": "https://a.test"}},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "text_delta", "text": "Found."},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 2}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 9, "server_tool_use": {"web_search_requests": 1}},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    )
    chunks = decode(sse_events(raw))
    assert all(not c.tool_call_chunks for c in chunks)
    merged = aggregate(chunks)
    assert merged.tool_calls == []
    assert merged.additional_kwargs["anthropic_blocks"] == [
        {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": []},
        {"type": "text", "text": "Found.", "citations": [{"url": "https://a.test"}]},
    ]
    assert merged.response_metadata["server_tool_use"] == {"web_search_requests": 1}
    assert merged.usage_metadata is not None
    assert merged.usage_metadata["output_tokens"] == 9


def test_tool_input_given_whole_in_start_event() -> None:
    raw = sse(
        ("message_start", {"type": "message_start", "message": {"id": "m", "model": "kimi-k3"}}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_stop", {"type": "message_stop"}),
    )
    merged = aggregate(decode(sse_events(raw)))
    assert merged.tool_calls == [{"type": "tool_call", "name": "f", "args": {"a": 1}, "id": "t1"}]
    assert merged.additional_kwargs["anthropic_blocks"][0]["input"] == {"a": 1}
    assert merged.usage_metadata is None


@pytest.mark.parametrize(
    ("block", "delta", "reasoning", "text"),
    [
        (
            {"type": "thinking", "thinking": "Start. ", "signature": ""},
            "thinking",
            "Start. Go.",
            "",
        ),
        ({"type": "text", "text": "Hello, "}, "text", None, "Hello, Go."),
    ],
)
def test_text_or_thinking_carried_in_the_start_event_is_kept(
    block: dict[str, Any], delta: str, reasoning: str | None, text: str
) -> None:
    """Some servers put the first text or thinking in `content_block_start`: it is content too,
    streamed before the deltas and kept in the final block."""
    delta_body = {"type": f"{delta}_delta", delta: "Go."}
    raw = sse(
        ("message_start", {"type": "message_start", "message": {"id": "m", "model": "kimi-k3"}}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta_body}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_stop", {"type": "message_stop"}),
    )
    chunks = decode(sse_events(raw))
    merged = aggregate(chunks)
    assert merged.content == text
    assert merged.additional_kwargs.get("reasoning_content") == reasoning
    first = block.get("thinking") or block.get("text")
    assert any(
        first in (c.content, c.additional_kwargs.get("reasoning_content")) for c in chunks
    ), "the start event's text is streamed as it comes"


def test_error_event_raises_typed_error() -> None:
    decoder = StreamDecoder()
    payload = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    with pytest.raises(KimiRateLimitError, match="slow down"):
        decoder.feed("error", json.dumps(payload))


def test_malformed_json_names_the_event() -> None:
    decoder = StreamDecoder()
    with pytest.raises(KimiStreamError, match="content_block_delta"):
        decoder.feed("content_block_delta", "{not json")


def test_ping_and_unknown_events_ignored() -> None:
    decoder = StreamDecoder()
    assert decoder.feed("ping", "not even json") == []
    assert decoder.feed("brand_new_event", "{}") == []


def test_event_type_taken_from_data_when_event_line_missing() -> None:
    events = [("message", data) for _, data in sse_events(AUTHORED_SSE)]
    assert_same_message(aggregate(decode(events)), parse_response(AUTHORED_BODY))


def test_delta_for_unknown_block_is_a_stream_error() -> None:
    decoder = StreamDecoder()
    delta = {
        "type": "content_block_delta",
        "index": 4,
        "delta": {"type": "text_delta", "text": "x"},
    }
    with pytest.raises(KimiStreamError, match="unknown content block index 4"):
        decoder.feed("content_block_delta", json.dumps(delta))


def test_finish_without_message_stop_raises_with_partial() -> None:
    events = sse_events(AUTHORED_SSE)
    cut = next(i for i, (name, _) in enumerate(events) if name == "content_block_start" and i > 2)
    # The stream plan, not the decoder, keeps what the caller has seen.
    plan = StreamPlan(
        ADAPTER,
        RequestOptions(caps=capabilities("kimi-k3.1-pro", "anthropic")),
        {},
        max_builtin_rounds=1,
    )
    plan.start_round("https://base.test")
    with pytest.raises(KimiStreamError, match="before message_stop") as info, plan.guard():
        list(read_round(plan, events[: cut + 3]))
    partial = info.value.partial
    assert isinstance(partial, AIMessageChunk)
    assert partial.content == "Let me check Paris."
    assert partial.additional_kwargs["reasoning_content"] == "Need the weather — in Paris."
    with pytest.raises(KimiStreamError, match="before message_stop") as empty:
        StreamDecoder().finish()
    assert empty.value.partial is None


def test_finish_after_stop_is_empty_and_later_events_ignored() -> None:
    decoder = StreamDecoder()
    for event, data in sse_events(AUTHORED_SSE):
        decoder.feed(event, data)
    assert decoder.feed("content_block_delta", "garbage") == []
    assert decoder.finish() == []


# --- mutation sample (issue 31): what the survivors of stream.py changed unnoticed -------------


def _feed_all(decoder: StreamDecoder, *events: tuple[str, dict[str, Any]]) -> list[AIMessageChunk]:
    chunks = [c for name, data in sse_events(sse(*events)) for c in decoder.feed(name, data)]
    return chunks + decoder.finish()


_START = ("message_start", {"type": "message_start", "message": {"id": "m", "model": "kimi-k3"}})
_STOP = ("message_stop", {"type": "message_stop"})


def _block_start(index: int, block: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return (
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def _delta(index: int, delta: Any) -> tuple[str, dict[str, Any]]:
    return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


def _block_stop(index: int) -> tuple[str, dict[str, Any]]:
    return ("content_block_stop", {"type": "content_block_stop", "index": index})


def _end(stop_reason: str = "end_turn", **usage: Any) -> tuple[str, dict[str, Any]]:
    payload: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": stop_reason}}
    if usage:
        payload["usage"] = usage
    return ("message_delta", payload)


def test_reply_is_the_whole_body() -> None:
    decoder = StreamDecoder()
    for event, data in sse_events(AUTHORED_SSE):
        decoder.feed(event, data)
    assert decoder.reply() == AUTHORED_BODY


def test_reply_before_any_event_is_an_empty_message() -> None:
    assert StreamDecoder().reply() == {
        "id": None,
        "type": "message",
        "role": "assistant",
        "model": None,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {},
    }


def test_stop_sequence_reaches_the_reply_and_the_last_chunk() -> None:
    decoder = StreamDecoder()
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": "stop_sequence", "stop_sequence": "END"},
    }
    chunks = _feed_all(decoder, _START, ("message_delta", delta), _STOP)
    assert decoder.reply()["stop_sequence"] == "END"
    assert chunks[-1].response_metadata["stop_sequence"] == "END"
    assert chunks[-1].response_metadata["finish_reason"] == "stop"


def test_usage_only_in_message_delta_is_kept() -> None:
    """A `message_start` without `usage`, the counts in `message_delta` only."""
    chunks = _feed_all(StreamDecoder(), _START, _end(input_tokens=3, output_tokens=4), _STOP)
    assert chunks[-1].usage_metadata is not None
    assert chunks[-1].usage_metadata["total_tokens"] == 7


@pytest.mark.parametrize(
    ("requested", "served", "input_tokens"),
    [
        # kimi-k3 bills cache writes (50) as plain input: 20 plain + 100 reads; K3.1: all three.
        # The reply's model decides when it names a known family, else the requested one does.
        ("kimi-k3.1-pro", "kimi-k3.1-pro", 170),
        ("kimi-k3.1-pro", "kimi-k3", 120),
        ("kimi-k3", "gateway-alias", 120),
        ("kimi-k3.1-pro", "gateway-alias", 170),
    ],
)
def test_usage_follows_the_model_that_bills_it(
    requested: str, served: str, input_tokens: int
) -> None:
    raw = AUTHORED_SSE.replace(b'"model": "kimi-k3.1-pro"', f'"model": "{served}"'.encode())
    decoder = StreamDecoder(requested_model=requested)
    chunks = [c for name, data in sse_events(raw) for c in decoder.feed(name, data)]
    assert chunks[-1].usage_metadata is not None
    assert chunks[-1].usage_metadata["input_tokens"] == input_tokens


def test_the_event_line_names_the_event_when_the_data_has_no_type() -> None:
    events = [
        ("message_start", {"message": {"id": "m", "model": "kimi-k3"}}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
        ("content_block_stop", {"index": 0}),
        ("message_delta", {"delta": {"stop_reason": "end_turn"}}),
        ("message_stop", {}),
    ]
    merged = aggregate(_feed_all(StreamDecoder(), *events))
    assert merged.content == "Hi"
    assert merged.id == "m"


def test_message_start_without_a_message_is_tolerated() -> None:
    chunks = _feed_all(StreamDecoder(), ("message_start", {"type": "message_start"}), _end(), _STOP)
    assert chunks[0].id is None
    assert chunks[-1].response_metadata["finish_reason"] == "stop"


def test_end_after_message_delta_logs_why(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="langchain_kimi"):
        _feed_all(StreamDecoder(), _START, _end())
    assert [r.getMessage() for r in caplog.records] == [
        "Messages stream ended after message_delta without message_stop"
    ]


def test_stream_errors_say_what_was_wrong() -> None:
    with pytest.raises(KimiStreamError) as cut:
        StreamDecoder().finish()
    assert str(cut.value) == (
        "stream ended before message_stop (no message_delta with a stop_reason arrived)"
    )
    with pytest.raises(KimiStreamError) as unknown:
        _feed_all(StreamDecoder(), _START, _block_stop(3))
    assert str(unknown.value) == "content_block_stop for unknown content block index 3"
    for start in (
        {"type": "content_block_start", "index": 0},
        {"type": "content_block_start", "content_block": {"type": "text", "text": ""}},
    ):
        with pytest.raises(KimiStreamError) as bad_start:
            _feed_all(StreamDecoder(), _START, ("content_block_start", start))
        assert str(bad_start.value) == "content_block_start without an index or content_block"


def test_empty_pieces_make_no_chunks_and_add_nothing() -> None:
    """An empty text block start, deltas with an empty or missing piece, a delta that is not an
    object: no chunk and nothing added to the block."""
    decoder = StreamDecoder()
    decoder.feed("message_start", json.dumps(_START[1]))
    quiet = [
        _block_start(0, {"type": "text", "text": ""}),
        _delta(0, {"type": "text_delta", "text": ""}),
        _delta(0, {"type": "text_delta"}),
        _delta(0, None),
        _block_start(1, {"type": "thinking", "thinking": "", "signature": ""}),
        _delta(1, {"type": "thinking_delta", "thinking": ""}),
        _delta(1, {"type": "thinking_delta"}),
        _delta(1, {"type": "signature_delta"}),
    ]
    for name, data in quiet:
        assert decoder.feed(name, json.dumps(data)) == [], (name, data)
    decoder.feed(*_as_event(_block_stop(0)))
    decoder.feed(*_as_event(_block_stop(1)))
    assert decoder.reply()["content"] == [
        {"type": "text", "text": ""},
        {"type": "thinking", "thinking": "", "signature": ""},
    ]


def _as_event(event: tuple[str, dict[str, Any]]) -> tuple[str, str]:
    return event[0], json.dumps(event[1])


def test_signature_and_citations_pieces_add_up() -> None:
    citation_a, citation_b = {"url": "https://a.test"}, {"url": "https://b.test"}
    chunks = _feed_all(
        StreamDecoder(),
        _START,
        _block_start(0, {"type": "thinking", "thinking": "", "signature": "c2"}),
        _delta(0, {"type": "signature_delta", "signature": "ln"}),
        _delta(0, {"type": "signature_delta", "signature": "MQ=="}),
        _block_stop(0),
        _block_start(1, {"type": "text", "text": ""}),
        _delta(1, {"type": "citations_delta", "citation": citation_a}),
        _delta(1, {"type": "citations_delta", "citation": citation_b}),
        _delta(1, {"type": "text_delta", "text": "Two."}),
        _block_stop(1),
        _end(),
        _STOP,
    )
    blocks = aggregate(chunks).additional_kwargs["anthropic_blocks"]
    assert blocks == [
        {"type": "thinking", "thinking": "", "signature": "c2lnMQ=="},
        {"type": "text", "text": "Two.", "citations": [citation_a, citation_b]},
    ]


def test_tool_input_broken_or_missing_becomes_an_empty_object() -> None:
    decoder = StreamDecoder()
    _feed_all(
        decoder,
        _START,
        _block_start(0, {"type": "tool_use", "id": "t1", "name": "f", "input": {}}),
        _delta(0, {"type": "input_json_delta", "partial_json": '{"a": '}),
        _block_stop(0),
        _block_start(1, {"type": "tool_use", "id": "t2", "name": "g"}),
        _block_stop(1),
        _end("tool_use"),
        _STOP,
    )
    assert decoder.reply()["content"] == [
        {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        {"type": "tool_use", "id": "t2", "name": "g", "input": {}},
    ]


def test_server_tool_input_given_whole_in_start_event_makes_no_tool_call() -> None:
    server = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}}
    chunks = _feed_all(
        StreamDecoder(), _START, _block_start(0, server), _block_stop(0), _end(), _STOP
    )
    assert all(not c.tool_call_chunks for c in chunks)
    assert aggregate(chunks).additional_kwargs["anthropic_blocks"] == [server]


def test_a_tool_call_without_input_streams_no_args_chunk() -> None:
    empty = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    chunks = _feed_all(
        StreamDecoder(), _START, _block_start(0, empty), _block_stop(0), _end(), _STOP
    )
    assert [tc["args"] for c in chunks for tc in c.tool_call_chunks] == [""]
