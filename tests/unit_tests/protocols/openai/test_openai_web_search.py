"""The `$web_search` loop's pure steps: invoke-style combine == stream-style aggregation == wire."""

from __future__ import annotations

import copy

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage

from langchain_kimi._request.options import RequestOptions, WebSearchToolSpec
from langchain_kimi._request.profiles import K3, K31_PRO, capabilities
from langchain_kimi.protocols.openai_chat import build_request, parse_response
from langchain_kimi.protocols.openai_chat import web_search as ws
from langchain_kimi.protocols.openai_chat.response import raw_assistant_message, usage_from_openai
from langchain_kimi.protocols.openai_chat.stream import StreamDecoder
from tests.support.chat_stream import aggregate, decode, sse_events
from tests.support.web_search_rounds import (
    FINAL,
    FINAL_USAGE,
    MODEL,
    as_body,
    as_stream,
    search_call,
    search_round,
)
from tools.schema_validation import validate_request, validate_response


def test_is_builtin_round() -> None:
    client = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert ws.is_builtin_round({"tool_calls": [search_call(0), search_call(1)]})
    assert not ws.is_builtin_round({"tool_calls": [search_call(0), client]})
    assert not ws.is_builtin_round({"tool_calls": []})
    assert not ws.is_builtin_round({"content": "x"})


def test_followup_messages_and_next_body() -> None:
    message, _ = search_round(0)
    assert ws.followup_messages(message) == [
        message,
        {
            "role": "tool",
            "tool_call_id": "ws-0",
            "content": message["tool_calls"][0]["function"]["arguments"],
        },
    ]
    body = build_request(
        [HumanMessage("find kimi")],
        RequestOptions(caps=capabilities(MODEL, "openai"), tools=(WebSearchToolSpec(),)),
    )
    before = copy.deepcopy(body)
    follow = ws.next_body(body, message)
    assert body == before
    assert follow["messages"] == [*body["messages"], *ws.followup_messages(message)]
    assert {k: v for k, v in follow.items() if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"
    }
    for model in (K31_PRO, K3):
        validate_request({**follow, "model": model}, "openai", model)


def invoke_style(rounds: int) -> AIMessage:
    raws, usages = [], []
    for n in range(rounds):
        message, usage_ = search_round(n)
        body = as_body(message, usage_, "tool_calls", n)
        validate_response(body, "openai")
        raw = raw_assistant_message(body)
        assert ws.is_builtin_round(raw)
        raws.append(raw)
        usages.append(usage_from_openai(body["usage"]))
    final = parse_response(as_body(FINAL, FINAL_USAGE, "stop", rounds))
    return ws.combine_rounds(raws, final, usages)


def stream_style(rounds: int) -> AIMessageChunk:
    chunks: list[AIMessageChunk] = []
    raws = []
    for n in range(rounds):
        message, usage_ = search_round(n)
        decoder = StreamDecoder() if n == 0 else ws.continuation_decoder()
        chunks += decode(
            sse_events([as_stream(message, usage_, "tool_calls", n).encode()]), decoder
        )
        assert decoder.is_builtin_round
        raw = decoder.assistant_message()
        assert raw == message
        raws.append(raw)
        chunks.append(ws.round_chunk(raw))
    decoder = ws.continuation_decoder() if rounds else StreamDecoder()
    chunks += decode(sse_events([as_stream(FINAL, FINAL_USAGE, "stop", rounds).encode()]), decoder)
    assert not decoder.is_builtin_round
    # ChatKimi's stream plan reports the search count on the last chunk.
    chunks.append(
        AIMessageChunk(content="", response_metadata={"server_tool_use": ws.server_tool_use(raws)})
    )
    return aggregate(chunks)


@pytest.mark.parametrize("rounds", [1, 2])
def test_invoke_and_stream_agree(rounds: int) -> None:
    combined = invoke_style(rounds)
    streamed = stream_style(rounds)
    for message in (combined, streamed):
        assert message.content == FINAL["content"]
        assert message.response_metadata["model_name"] == MODEL
        assert message.response_metadata["finish_reason"] == "stop"
        assert message.response_metadata["server_tool_use"] == {"web_search_requests": rounds}
        assert message.tool_calls == []
    assert combined.additional_kwargs == streamed.additional_kwargs
    expected_reasoning = "".join(f"Round {n}: search. " for n in range(rounds)) + "Found it."
    assert combined.additional_kwargs["reasoning_content"] == expected_reasoning
    assert len(combined.additional_kwargs["builtin_rounds"]) == 2 * rounds
    assert combined.usage_metadata == streamed.usage_metadata
    assert combined.usage_metadata is not None
    assert (
        combined.usage_metadata["input_tokens"] == sum(100 * (n + 1) for n in range(rounds)) + 400
    )
    assert combined.usage_metadata["output_token_details"] == {"reasoning": 15 * rounds + 10}


@pytest.mark.parametrize("style", ["invoke", "stream"])
@pytest.mark.parametrize("rounds", [1, 2])
def test_replay_reproduces_wire_history(style: str, rounds: int) -> None:
    options = RequestOptions(caps=capabilities(MODEL, "openai"), tools=(WebSearchToolSpec(),))
    question = HumanMessage("Find the official Kimi homepage URL.")
    first = build_request([question], options)
    wire = first
    for n in range(rounds):
        wire = ws.next_body(wire, search_round(n)[0])
    expected = [*wire["messages"], FINAL, {"role": "user", "content": "thanks"}]
    reply = invoke_style(rounds) if style == "invoke" else stream_style(rounds)
    body = build_request([question, reply, HumanMessage("thanks")], options)
    validate_request(body, "openai", MODEL)
    assert body["messages"] == expected


def test_combine_without_rounds_is_identity() -> None:
    final = parse_response(as_body(FINAL, FINAL_USAGE, "stop", 0))
    assert ws.combine_rounds([], final, []) is final
    assert "server_tool_use" not in final.response_metadata


def test_combine_keeps_final_fields_and_handles_missing_usage() -> None:
    message, _ = search_round(0)
    final = parse_response(as_body(FINAL, FINAL_USAGE, "stop", 1))
    combined = ws.combine_rounds([message], final, [None])
    assert combined.usage_metadata == final.usage_metadata
    assert combined.id == final.id
    assert "builtin_rounds" not in final.additional_kwargs  # the input is not mutated


def test_next_body_holds_a_copy_of_the_assistant_message() -> None:
    """The body is handed to the transport; the round ChatKimi keeps for `builtin_rounds` must not
    change if anything edits what was sent."""
    message, _ = search_round(0)
    before = copy.deepcopy(message)
    follow = ws.next_body({"model": MODEL, "messages": []}, message)
    sent = follow["messages"][0]
    assert sent == message
    sent["tool_calls"][0]["function"]["arguments"] = "edited"
    sent["reasoning_content"] = "edited"
    assert message == before


def test_combine_refuses_more_caps_than_rounds() -> None:
    message, _ = search_round(0)
    final = parse_response(as_body(FINAL, FINAL_USAGE, "stop", 1))
    with pytest.raises(ValueError, match="zip"):
        ws.combine_rounds([message], final, [None], allowed=[None, 1])


def test_combine_reasoning_when_only_some_parts_have_it() -> None:
    """A round or the answer without `reasoning_content` adds nothing to the reasoning."""
    with_reasoning, _ = search_round(0)
    without = {k: v for k, v in search_round(1)[0].items() if k != "reasoning_content"}
    answer_without = {k: v for k, v in FINAL.items() if k != "reasoning_content"}
    final = parse_response(as_body(answer_without, FINAL_USAGE, "stop", 2))
    combined = ws.combine_rounds([with_reasoning, without], final, [None, None])
    assert combined.additional_kwargs["reasoning_content"] == "Round 0: search. "
    final = parse_response(as_body(FINAL, FINAL_USAGE, "stop", 1))
    combined = ws.combine_rounds([without], final, [None])
    assert combined.additional_kwargs["reasoning_content"] == "Found it."
    final = parse_response(as_body(answer_without, FINAL_USAGE, "stop", 1))
    combined = ws.combine_rounds([without], final, [None])
    assert "reasoning_content" not in combined.additional_kwargs


def test_combine_without_any_usage_reports_none() -> None:
    message, _ = search_round(0)
    body = as_body(FINAL, FINAL_USAGE, "stop", 1)
    del body["usage"]
    final = parse_response(body)
    assert final.usage_metadata is None
    assert ws.combine_rounds([message], final, [None]).usage_metadata is None


def test_a_declined_search_is_answered_with_the_limit_text() -> None:
    """The stand-in `tool` answer (live question `web-search-limit-answer`) tells the model no
    search ran and to answer with what it has."""
    message, _ = search_round(0)
    assert ws.followup_messages(message, allowed=0)[1]["content"] == (
        "Search not run: the web search limit for this reply (max_uses) was reached. "
        "Answer with the results you already have."
    )
