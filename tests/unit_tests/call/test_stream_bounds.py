"""A stream plan's work and memory stay in proportion to what arrived, and its limits are named.

- What a cut stream already gave is merged in blocks (`SEEN_BLOCK` chunks at a time), so a cut
  after many tool-call pieces costs about what the pieces did: adding the chunks one by one
  re-parsed every argument so far at each step (the time grew with the square of the pieces,
  with the event loop blocked meanwhile).
- The plan keeps at most one block of chunks apart; the rest is merged, not every chunk's own
  message (about 2 KB each).
- A stream may send at most `MAX_STREAM_EVENTS` events and a reply hold at most
  `MAX_TOOL_CALLS` tool calls; more is a typed error naming the limit, with what arrived.

No timing is asserted: the work is counted (the argument text langchain-core parses).
"""

from __future__ import annotations

import gc
import json
import weakref
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk
from langchain_core.messages import ai as lc_ai

from langchain_kimi._call import plans
from langchain_kimi._call.plans import MAX_STREAM_EVENTS, MAX_TOOL_CALLS, SEEN_BLOCK, StreamPlan
from langchain_kimi._errors import KimiAPIError, KimiStreamError
from langchain_kimi._request.profiles import CONTEXT_WINDOW, K31_PRO, Protocol
from langchain_kimi._request.resolve import ModelDefaults, resolve_options
from langchain_kimi.protocols import adapter
from tools.paths import ROOT

URL = "https://gateway.example/v1"


def _plan(cls: type[Any] = StreamPlan, protocol: Protocol = "openai") -> Any:
    options = resolve_options(
        ModelDefaults(model=K31_PRO, protocol=protocol), None, {}, stream=cls is StreamPlan
    )
    return cls(adapter(protocol), options, {"messages": []}, max_builtin_rounds=3)


def _event(delta: dict[str, Any], usage: dict[str, int] | None = None) -> tuple[str, str]:
    payload: dict[str, Any] = {"id": "c1", "model": K31_PRO}
    payload["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
    if usage is not None:
        payload["usage"] = usage
    return "", json.dumps(payload)


def _call_start(index: int) -> tuple[str, str]:
    head = {"index": index, "id": f"call_{index}", "type": "function", "function": {"name": "f"}}
    return _event({"tool_calls": [{**head, "function": {"name": "f", "arguments": '{"a":"'}}]})


def _piece(index: int, text: str = "0123456789") -> tuple[str, str]:
    return _event({"tool_calls": [{"index": index, "function": {"arguments": text}}]})


def _cut(plan: StreamPlan, events: list[tuple[str, str]]) -> tuple[list[AIMessageChunk], Any]:
    """Feed `events` in the guard, then cut the stream: the chunks seen and the error."""
    seen: list[AIMessageChunk] = []
    plan.start_round(URL, "req-1")

    def round_then_cut() -> None:
        with plan.guard():
            for event in events:
                seen.extend(g.message for g in plan.feed(*event))  # type: ignore[misc]
            raise KimiStreamError("cut", status_code=200)

    with pytest.raises(KimiStreamError) as info:
        round_then_cut()
    return seen, info.value


def _one_by_one(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


def _mixed_events(count: int) -> list[tuple[str, str]]:
    """Text, reasoning and three interleaved tool calls, with usage on one event."""
    events = [_event({"role": "assistant", "reasoning_content": "think "})]
    events += [_call_start(i) for i in range(3)]
    for n in range(count):
        if n % 3 == 0:
            events.append(_event({"content": f"t{n} "}))
        elif n % 3 == 1:
            events.append(_event({"reasoning_content": f"r{n} "}))
        else:
            events.append(_piece(n % 5 % 3, f"p{n}"))
    events.append(_event({}, usage={"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}))
    return events


@pytest.mark.parametrize("count", [0, 1, SEEN_BLOCK - 5, SEEN_BLOCK - 4, 3 * SEEN_BLOCK + 7])
def test_the_partial_of_a_cut_stream_is_what_adding_every_chunk_gives(count: int) -> None:
    seen, error = _cut(_plan(), _mixed_events(count))
    expected = _one_by_one(seen)
    partial = error.partial
    assert isinstance(partial, AIMessageChunk)
    for name in (
        "content",
        "additional_kwargs",
        "response_metadata",
        "tool_call_chunks",
        "tool_calls",
        "invalid_tool_calls",
        "usage_metadata",
        "id",
    ):
        assert getattr(partial, name) == getattr(expected, name), name


def test_the_partial_of_a_single_chunk_is_that_chunk() -> None:
    seen, error = _cut(_plan(), [_event({"content": "only"})])
    assert error.partial is seen[0]


def _counting_parser(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every argument text langchain-core parses from tool-call chunks."""
    parsed: list[int] = []
    real = lc_ai.parse_partial_json

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        parsed.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(lc_ai, "parse_partial_json", counting)
    return parsed


def test_a_cut_stream_of_many_argument_pieces_is_merged_in_linear_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pieces = 2_000
    events = [_call_start(0)] + [_piece(0) for _ in range(pieces)]
    parsed = _counting_parser(monkeypatch)
    _, error = _cut(_plan(), events)
    arguments = error.partial.tool_call_chunks[0]["args"]
    assert len(arguments) == len('{"a":"') + 10 * pieces
    # Each piece is parsed as its chunk is made, each block once, the whole once: about three
    # times the text (one by one it was about `pieces / 2` times: 1,000 times here).
    assert sum(parsed) <= 4 * len(arguments)


def test_the_plan_keeps_at_most_a_block_of_chunks_alive() -> None:
    plan = _plan()
    plan.start_round(URL, "req-1")
    alive: list[weakref.ref[AIMessageChunk]] = []
    for n in range(5 * SEEN_BLOCK + 3):
        for generation in plan.feed(*_event({"content": f"{n} "})):
            alive.append(weakref.ref(generation.message))  # type: ignore[arg-type]
    gc.collect()
    assert sum(ref() is not None for ref in alive) == 3
    with pytest.raises(KimiStreamError) as info, plan.guard():
        raise KimiStreamError("cut")
    assert info.value.partial.content == "".join(f"{n} " for n in range(5 * SEEN_BLOCK + 3))


# -- the limits ------------------------------------------------------------------------------


def test_a_stream_may_send_the_events_limit_and_no_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plans, "MAX_STREAM_EVENTS", 4)
    plan = _plan()
    plan.start_round(URL, "req-1")
    for n in range(4):
        plan.feed(*_event({"content": f"{n}"}))
    with pytest.raises(KimiStreamError) as info, plan.guard():
        plan.feed(*_event({"content": "4"}))
    assert info.value.message == "the stream sent more than 4 events, the most ChatKimi reads"
    assert info.value.partial.content == "0123"
    assert info.value.request_id == "req-1"
    plan.start_round(URL, "req-2")  # a new round counts its own events
    for n in range(4):
        plan.feed(*_event({"content": f"{n}"}))


def test_the_events_limit_is_twice_the_most_tokens_a_reply_holds() -> None:
    assert MAX_STREAM_EVENTS == 2 * CONTEXT_WINDOW == 2_097_152


def test_the_limit_is_counted_before_any_round_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plans, "MAX_STREAM_EVENTS", 1)
    plan = _plan()
    plan.feed(*_event({"content": "a"}))
    with pytest.raises(KimiStreamError, match="more than 1 events"):
        plan.feed(*_event({"content": "b"}))


def test_a_stream_may_hold_the_tool_calls_limit_and_no_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(plans, "MAX_TOOL_CALLS", 3)
    monkeypatch.setattr(
        plans, "_TOO_MANY_CALLS", "the reply holds more than 3 tool calls, the most ..."
    )
    plan = _plan()
    plan.start_round(URL, "req-1")
    for index in range(3):
        plan.feed(*_call_start(index))
        plan.feed(*_piece(index))
    with pytest.raises(KimiStreamError) as info, plan.guard():
        plan.feed(*_call_start(3))
    assert info.value.message == "the reply holds more than 3 tool calls, the most ..."
    assert len(info.value.partial.tool_call_chunks) == 3
    plan.start_round(URL, "req-2")  # a new round counts its own calls
    for index in range(3):
        plan.feed(*_call_start(index))


def test_the_tool_calls_limit_is_a_thousand_and_says_so() -> None:
    assert MAX_TOOL_CALLS == 1_000
    assert plans._TOO_MANY_CALLS == (
        "the reply holds more than 1,000 tool calls, the most ChatKimi reads in one reply"
    )


def _reply_with_calls(count: int) -> dict[str, Any]:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for i in range(count)
    ]
    message = {"role": "assistant", "content": "", "tool_calls": calls}
    return {"id": "c1", "model": K31_PRO, "choices": [{"index": 0, "message": message}]}


@pytest.mark.parametrize("invalid", [False, True])
def test_a_reply_may_hold_the_tool_calls_limit_and_no_more(
    monkeypatch: pytest.MonkeyPatch, invalid: bool
) -> None:
    monkeypatch.setattr(plans, "MAX_TOOL_CALLS", 3)
    plan = _plan(plans.InvokePlan)
    plan.on_reply(_reply_with_calls(3), URL)
    assert len(plan.result().generations[0].message.tool_calls) == 3
    body = _reply_with_calls(4)
    if invalid:  # invalid calls count too
        body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "{"
    plan = _plan(plans.InvokePlan)
    with pytest.raises(KimiAPIError) as info:
        plan.on_reply(body, URL)
    assert info.value.message == plans._TOO_MANY_CALLS
    assert info.value.status_code == 200


def test_the_limits_page_names_the_stream_limits() -> None:
    page = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    assert "{limit:stream_events}" in page
    assert "{limit:tool_calls}" in page
