"""Building a request costs what the history costs, on both protocols (issue 51 item 4).

Two counts, no clock:

- every message the builder reads: a history that counts its reads (items handed out by
  `__getitem__` and `__iter__`) is read a bounded number of times per message. Chat Completions
  used to copy the rest of the history (`messages[position + 1 :]`) for every assistant
  message: 10,000 messages cost 150 ms, 100 ms of it that copy.
- the GC-tracked containers the builder holds while it runs. CPython's full (generation-2)
  collection runs when the containers that survived younger collections exceed a quarter of the
  long-lived heap, and each one walks the whole heap, the caller's history included: a builder
  that keeps more containers alive triggers more of them, each costing more for a longer
  history. That was the super-linear rest once the copy was gone (10k -> 20k messages: 2.5-2.9x
  on Messages, all of it in those collections; with the collector off, 2.0x). The Messages
  builder held a content list for every user turn until its last pass turned single text
  blocks into strings; a text turn is now a string when it is added, as ChatAnthropic sends it.
  Side-by-side timings against the peers: `python -m benchmarks.request_building`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any, SupportsIndex, overload

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import K31_PRO, capabilities
from langchain_kimi.protocols import anthropic_messages, openai_chat

BUILDERS = {"openai": openai_chat.build_request, "anthropic": anthropic_messages.build_request}


def history(turns: int) -> list[BaseMessage]:
    """`turns` rounds of a question, a tool call, its result and an answer, with reasoning."""
    messages: list[BaseMessage] = []
    for n in range(turns):
        call = {"name": "lookup", "args": {"n": n}, "id": f"call_{n}", "type": "tool_call"}
        messages += [
            HumanMessage(f"question {n}"),
            AIMessage("", tool_calls=[call], additional_kwargs={"reasoning_content": "look"}),
            ToolMessage(f"result {n}", tool_call_id=f"call_{n}"),
            AIMessage(f"answer {n}", additional_kwargs={"reasoning_content": "done"}),
        ]
    return messages


class CountingHistory(list[BaseMessage]):
    """A history that counts how many messages it hands out (by index, slice or iteration)."""

    reads = 0
    on_read: Any = None

    @overload
    def __getitem__(self, index: SupportsIndex) -> BaseMessage: ...
    @overload
    def __getitem__(self, index: slice) -> list[BaseMessage]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> BaseMessage | list[BaseMessage]:
        got = super().__getitem__(index)
        self.reads += len(got) if isinstance(got, list) else 1
        return got

    def __iter__(self) -> Iterator[BaseMessage]:
        for message in super().__iter__():
            self.reads += 1
            if self.on_read is not None:
                self.on_read()
            yield message


def _options(protocol: str) -> RequestOptions:
    return RequestOptions(caps=capabilities(K31_PRO, protocol))  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", BUILDERS)
def test_each_message_is_read_a_bounded_number_of_times(protocol: str) -> None:
    reads = {}
    for turns in (50, 100):
        messages = CountingHistory(history(turns))
        BUILDERS[protocol](messages, _options(protocol))
        reads[turns] = messages.reads
    # Every message read once or twice, whatever the length: no copy of the rest per message.
    assert reads[50] <= 2 * 4 * 50
    assert reads[100] == 2 * reads[50]


def _peak_containers(protocol: str, turns: int) -> int:
    """The most GC-tracked containers alive during one build beyond those before it, sampled at
    each message the builder reads (the collector off, so that nothing is freed behind the
    count), for a chat of `turns` questions and answers with reasoning."""
    messages = CountingHistory(
        m
        for n in range(turns)
        for m in (
            HumanMessage(f"question {n}"),
            AIMessage(f"answer {n}", additional_kwargs={"reasoning_content": "think"}),
        )
    )
    peak = 0
    baseline = 0

    def sample() -> None:
        nonlocal peak
        peak = max(peak, len(gc.get_objects(generation=0)) - baseline)

    messages.on_read = sample
    gc.collect()
    gc.disable()
    try:
        baseline = len(gc.get_objects(generation=0))
        body = BUILDERS[protocol](messages, _options(protocol))
    finally:
        gc.enable()
    assert len(body["messages"]) == 2 * turns
    return peak


@pytest.mark.parametrize("protocol", BUILDERS)
def test_a_text_turn_holds_no_container_while_the_body_is_built(protocol: str) -> None:
    """What 100 more turns cost in containers held: on Messages an assistant turn needs two (the
    turn and its list of blocks: thinking, text), a user turn whose content is one text none (a
    string, as ChatAnthropic sends it); on Chat Completions every turn is a flat object of
    strings. (The difference of two builds leaves out what any build holds, a tracer's too.)"""
    more = _peak_containers(protocol, 200) - _peak_containers(protocol, 100)
    per_round = {"openai": 0, "anthropic": 2}[protocol]
    assert more <= per_round * 100 + 5
