"""Issue 27 item 9 / Build 2: a step answers the request it is bound to, whatever the concurrency;
an unbound step that calls in flight together could each take is a `ScriptError`, never a
silent swap (the audit saw 5-24 of 40 swapped in 8 of 10 sync batches)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import operator
import threading
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from langchain_kimi.testing import FakeKimiGateway, ScriptError

PROMPTS = [f"Question number {i}?" for i in range(40)]


class Topics(TypedDict):
    topics: list[str]
    answers: Annotated[list[str], operator.add]


def _bound_gateway() -> FakeKimiGateway:
    gw = FakeKimiGateway()
    for prompt in reversed(PROMPTS):  # script order means nothing for bound steps
        gw.add_reply(text=f"Answer to {prompt}", when=prompt)
    return gw


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_sync_batch_of_40_is_right_in_50_of_50_runs(protocol: str) -> None:
    right = 0
    for _ in range(50):
        gw = _bound_gateway()
        model = gw.chat_model(protocol=protocol)
        replies = model.batch(PROMPTS, config={"max_concurrency": 8})
        right += [r.content for r in replies] == [f"Answer to {p}" for p in PROMPTS]
        assert gw.remaining == 0
    assert right == 50


def test_a_sync_batch_of_unbound_steps_is_never_silently_swapped() -> None:
    """Each run raises ScriptError, or its calls did not overlap and every answer is right."""
    outcomes = []
    for _ in range(20):
        gw = FakeKimiGateway()
        for prompt in PROMPTS:
            gw.add_reply(text=f"Answer to {prompt}")
        try:
            replies = gw.chat_model().batch(PROMPTS, config={"max_concurrency": 8})
        except ScriptError as error:
            outcomes.append("ScriptError" if "depends on timing" in str(error) else str(error))
        else:
            assert [r.content for r in replies] == [f"Answer to {p}" for p in PROMPTS]
            outcomes.append("right")
    assert set(outcomes) <= {"ScriptError", "right"}
    assert "ScriptError" in outcomes


def test_unbound_steps_that_are_all_the_same_answer_are_not_ambiguous() -> None:
    gw = FakeKimiGateway()
    for _ in PROMPTS:
        gw.add_reply(text="OK")
    replies = gw.chat_model().batch(PROMPTS, config={"max_concurrency": 8})
    assert {r.content for r in replies} == {"OK"}
    assert gw.remaining == 0


def test_abatch_is_right_when_bound() -> None:
    gw = _bound_gateway()
    replies = asyncio.run(gw.chat_model(protocol="anthropic").abatch(PROMPTS))
    assert [r.content for r in replies] == [f"Answer to {p}" for p in PROMPTS]


def test_abatch_of_unbound_different_steps_is_a_script_error() -> None:
    gw = FakeKimiGateway()
    for prompt in PROMPTS[:4]:
        gw.add_reply(text=f"Answer to {prompt}")
    with pytest.raises(ScriptError, match="depends on timing"):
        asyncio.run(gw.chat_model().abatch(PROMPTS[:4]))


def test_threads_with_a_predicate_binding() -> None:
    gw = FakeKimiGateway()
    for i in range(8):
        gw.add_reply(
            text=f"thread {i}",
            when=lambda body, i=i: body["messages"][-1]["content"] == f"from thread {i}",
        )
    model = gw.chat_model()
    answers: dict[int, Any] = {}
    barrier = threading.Barrier(8)

    def run(i: int) -> None:
        barrier.wait()
        answers[i] = model.invoke(f"from thread {i}").content

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert answers == {i: f"thread {i}" for i in range(8)}


def test_a_conversation_bound_to_its_prompt_keeps_its_order() -> None:
    """Two agents' rounds interleaved: each conversation's steps are bound to its first
    prompt (a predicate), and in order within it."""
    from langchain_core.tools import tool

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city} found"

    def first_prompt(text: str) -> Any:
        return lambda body: body["messages"][0]["content"] == text

    gw = FakeKimiGateway()
    for city in ("Paris", "Lima"):
        gw.add_reply(
            tool_calls=[{"name": "lookup", "args": {"city": city}}], when=first_prompt(city)
        )
        gw.add_reply(text=f"{city} is a capital.", when=first_prompt(city))
    model = gw.chat_model().bind_tools([lookup])
    results = model.batch(["Lima", "Paris"])
    assert [r.tool_calls[0]["args"]["city"] for r in results] == ["Lima", "Paris"]
    follow_ups = [
        [HumanMessage(city), result, lookup.invoke(result.tool_calls[0])]
        for city, result in zip(("Lima", "Paris"), results, strict=True)
    ]
    assert [r.content for r in model.batch(follow_ups)] == [
        "Lima is a capital.",
        "Paris is a capital.",
    ]


def test_langgraph_send_fan_out() -> None:
    gw = FakeKimiGateway()
    topics = [f"topic {i}" for i in range(12)]
    for topic in topics:
        gw.add_reply(text=f"about {topic}", when=f"Write about {topic}")
    model = gw.chat_model()

    def fan_out(state: Topics) -> list[Send]:
        return [Send("write", {"topic": t}) for t in state["topics"]]

    def write(item: dict[str, str]) -> dict[str, list[str]]:
        reply = model.invoke(f"Write about {item['topic']}")
        return {"answers": [f"{item['topic']} -> {reply.content}"]}

    graph = StateGraph(Topics)
    graph.add_node("write", write)
    graph.add_conditional_edges(START, fan_out, ["write"])
    graph.add_edge("write", END)
    result = graph.compile().invoke({"topics": topics, "answers": []})
    assert sorted(result["answers"]) == sorted(f"{t} -> about {t}" for t in topics)


def test_langgraph_send_fan_out_of_unbound_steps_in_flight_together_is_a_script_error() -> None:
    """Each node holds its stream open until all have started: the calls overlap for sure."""
    gw = FakeKimiGateway()
    topics = [f"topic {i}" for i in range(6)]
    for topic in topics:
        gw.add_reply(text=f"about {topic}")
    model = gw.chat_model()
    gate = threading.Barrier(len(topics), timeout=5)

    def write(item: dict[str, str]) -> dict[str, list[str]]:
        chunks = model.stream(f"Write about {item['topic']}")
        try:
            first = next(chunks)
        except ScriptError:
            gate.abort()  # the nodes waiting for this one go on at once, not at the timeout
            raise
        with contextlib.suppress(threading.BrokenBarrierError):  # a node raised: they overlapped
            gate.wait()
        return {"answers": [str((first + sum(chunks, first.__class__(content=""))).content)]}

    graph = StateGraph(Topics)
    graph.add_node("write", write)
    graph.add_conditional_edges(
        START, lambda s: [Send("write", {"topic": t}) for t in s["topics"]], ["write"]
    )
    graph.add_edge("write", END)
    with pytest.raises(ScriptError, match="depends on timing"):
        graph.compile().invoke({"topics": topics, "answers": []})


def test_when_must_be_text_or_a_predicate() -> None:
    with pytest.raises(ValueError, match="when"):
        FakeKimiGateway().add_reply(text="x", when=3)  # type: ignore[arg-type]


def test_unbound_steps_asked_for_in_turn_by_two_live_threads_are_ambiguous() -> None:
    """Calls that never overlap can still come in either order (a worker pool may run its second
    task first): thread B calls and finishes, then thread A calls while B still runs. Which of
    the two different answers each gets depends on timing, so A's call is a ScriptError."""
    gw = FakeKimiGateway().add_reply(text="first").add_reply(text="second")
    model = gw.chat_model()
    b_done, a_done = threading.Event(), threading.Event()
    outcomes: dict[str, object] = {}

    def thread_b() -> None:
        outcomes["b"] = model.invoke("B asks").content
        b_done.set()
        a_done.wait(10)  # still running while A asks

    def thread_a() -> None:
        b_done.wait(10)
        try:
            outcomes["a"] = model.invoke("A asks").content
        except ScriptError as error:
            outcomes["a"] = error
        a_done.set()

    threads = [threading.Thread(target=thread_b), threading.Thread(target=thread_a)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert outcomes["b"] == "first"
    assert isinstance(outcomes["a"], ScriptError)
    assert "depends on timing" in str(outcomes["a"])


def test_the_same_threads_in_turn_after_the_first_ended_are_served_in_order() -> None:
    """A thread that has ended is no rival: one call per thread, one thread after another."""
    gw = FakeKimiGateway().add_reply(text="first").add_reply(text="second")
    model = gw.chat_model()
    answers: list[object] = []
    for prompt in ("one", "two"):
        thread = threading.Thread(target=lambda p=prompt: answers.append(model.invoke(p).content))
        thread.start()
        thread.join(20)
    assert answers == ["first", "second"]


def test_the_kits_models_send_unpaced_unless_asked() -> None:
    # A fake answers at once: pacing its calls from a fresh key's start rate made a batch of 40
    # take about a second. The send rate is still there for a test that asks for it.
    gw = _bound_gateway()
    model = gw.chat_model()
    assert model.adaptive_concurrency is False
    assert model._transport()._shared().gate.policy.rate == math.inf
    paced = gw.chat_model(api_key="sk-another-key-0123456789", adaptive_concurrency=True)
    assert paced._transport()._shared().gate.policy.rate < math.inf
