"""An unbound step is served only while the gateway's calls come one at a time, whatever the
timing: calls that overlap, calls on a thread pool with other workers, and every call after
such a failure get `AmbiguousStepError`, never another call's answer. Each interleaving is
forced (events inside the calls, a callback, a body that waits), not left to luck; each silently
gave a call another call's answer before these rules."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.rate_limiters import BaseRateLimiter
from langchain_core.tools import tool

from langchain_kimi import KimiRateLimitError
from langchain_kimi.testing import AmbiguousStepError, FakeKimiGateway
from tests.unit_tests.testing.raw import post, user

PROMPTS = [f"Question number {i}?" for i in range(40)]


def _unbound(prompts: list[str]) -> FakeKimiGateway:
    """One unbound step per prompt, in the prompts' order."""
    gw = FakeKimiGateway()
    for prompt in prompts:
        gw.add_reply(text=f"Answer to {prompt}")
    return gw


def _outcome(call: Callable[[], Any]) -> object:
    try:
        return call().content
    except AmbiguousStepError as error:
        return error


def _right_or_ambiguous(prompts: Sequence[str], outcomes: Sequence[object]) -> bool:
    return all(
        isinstance(outcome, AmbiguousStepError) or outcome == f"Answer to {prompt}"
        for prompt, outcome in zip(prompts, outcomes, strict=True)
    )


# -- calls that overlap -------------------------------------------------------------------------


def test_a_stream_that_took_an_unbound_step_fails_if_a_call_starts_before_it_ends() -> None:
    """The stream asks first and takes step 1, scripted for the call that starts while it is
    still read: both fail, the stream when it ends."""
    gw = _unbound(["A?", "B?"])
    model = gw.chat_model()
    stream = model.stream("B?")
    next(stream)  # the request is sent: step 1 taken
    with pytest.raises(AmbiguousStepError):
        model.invoke("A?")
    with pytest.raises(AmbiguousStepError, match="this call took the unbound step 1"):
        list(stream)  # before: it ended with 'Answer to A?', silently


async def test_an_async_stream_that_took_an_unbound_step_fails_if_a_call_starts_before_it_ends() -> (
    None
):
    gw = _unbound(["A?", "B?"])
    model = gw.chat_model(protocol="anthropic")
    stream = model.astream("B?")
    await anext(stream)
    with pytest.raises(AmbiguousStepError):
        await model.ainvoke("A?")
    with pytest.raises(AmbiguousStepError, match="this call took the unbound step 1"):
        async for _ in stream:
            pass


def test_a_stream_closed_early_after_an_overlap_raises_nothing_but_no_unbound_step_follows() -> (
    None
):
    gw = _unbound(["A?", "B?", "C?"])
    model = gw.chat_model()
    stream = model.stream("A?")
    next(stream)
    with pytest.raises(AmbiguousStepError):
        model.invoke("B?")
    stream.close()  # the reader stopped: nobody to tell
    with pytest.raises(AmbiguousStepError, match="no longer says which call comes next"):
        model.invoke("C?")


class _HeldBody(httpx.SyncByteStream):
    """A body whose reading waits for `release`: the call reading it stays in progress."""

    def __init__(self, content: bytes) -> None:
        self.content = content
        self.reading = threading.Event()
        self.release = threading.Event()

    def __iter__(self) -> Iterator[bytes]:
        self.reading.set()
        assert self.release.wait(10)
        yield self.content


@pytest.mark.parametrize("rate_limit_timeout", [0, 1])
def test_a_call_whose_scripted_error_or_retry_overlapped_another_call_fails(
    rate_limit_timeout: int,
) -> None:
    """A 429 is read while another call starts: the first call's error may have been scripted
    for the other one. Its retry is the same call, and refused as well."""
    body = _HeldBody(b'{"error": {"message": "slow down", "type": "rate_limit_error"}}')
    limited = httpx.Response(429, headers={"retry-after": "0"}, stream=body)
    gw = FakeKimiGateway().add_raw(limited).add_reply(text="Answer to B?")
    model = gw.chat_model(rate_limit_timeout=rate_limit_timeout)  # 1: the 429 is sent again
    outcome: list[object] = []

    def first() -> None:
        try:
            outcome.append(model.invoke("A?").content)
        except (AmbiguousStepError, KimiRateLimitError) as error:
            outcome.append(error)

    thread = threading.Thread(target=first)
    thread.start()
    assert body.reading.wait(10)
    with pytest.raises(AmbiguousStepError):
        model.invoke("B?")
    body.release.set()
    thread.join(10)
    assert isinstance(outcome[0], AmbiguousStepError)
    assert len(gw.requests) == 2 + rate_limit_timeout


# -- calls of a thread pool -----------------------------------------------------------------


class _FirstWaitsForSecond(BaseCallbackHandler):
    """The first prompt's call starts only once the second prompt's call has ended: the pool's
    second task asks the gateway first, and alone."""

    def __init__(self, first: str, second: str) -> None:
        self.first, self.second = first, second
        self.second_ended = threading.Event()

    def on_chat_model_start(self, serialized: Any, messages: Any, **_: Any) -> None:
        if messages[0][-1].content == self.first:
            self.second_ended.wait(10)

    def on_llm_end(self, response: Any, **_: Any) -> None:
        self.second_ended.set()

    def on_llm_error(self, error: BaseException, **_: Any) -> None:
        self.second_ended.set()


def test_a_batch_whose_second_call_asks_alone_first_never_gets_the_first_answer() -> None:
    prompts = PROMPTS[:2]
    gw = _unbound(prompts)
    hold = _FirstWaitsForSecond(*prompts)
    replies = gw.chat_model(callbacks=[hold]).batch(
        prompts, config={"max_concurrency": 2}, return_exceptions=True
    )
    outcomes = [r if isinstance(r, AmbiguousStepError) else r.content for r in replies]
    assert _right_or_ambiguous(prompts, outcomes)
    assert isinstance(outcomes[1], AmbiguousStepError)
    assert "a worker of a thread pool with other workers" in str(outcomes[1])


def test_pool_tasks_run_in_turn_on_two_workers_are_refused() -> None:
    """The pool's second task calls while the first waits (never overlapping): it is refused,
    and so is the first when it calls (the order is lost)."""
    gw = _unbound(["first?", "second?"])
    model = gw.chat_model()
    second_done = threading.Event()

    def first() -> object:
        second_done.wait(10)
        return _outcome(lambda: model.invoke("first?"))

    def second() -> object:
        try:
            return _outcome(lambda: model.invoke("second?"))
        finally:
            second_done.set()

    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(first), pool.submit(second)]
        outcomes = [f.result(20) for f in futures]
    assert all(isinstance(o, AmbiguousStepError) for o in outcomes)
    assert gw.remaining == 2


def test_five_threaded_batches_of_40_never_give_a_wrong_answer() -> None:
    """As reported: five batches of 40 prompts on unbound steps, 8 at a time."""
    for _ in range(5):
        gw = _unbound(PROMPTS)
        replies = gw.chat_model().batch(
            PROMPTS, config={"max_concurrency": 8}, return_exceptions=True
        )
        outcomes = [r if isinstance(r, BaseException) else r.content for r in replies]
        assert _right_or_ambiguous(PROMPTS, outcomes)
        assert any(isinstance(o, AmbiguousStepError) for o in outcomes)


def test_async_batches_of_40_never_give_a_wrong_answer() -> None:
    for protocol in ("openai", "anthropic"):
        gw = _unbound(PROMPTS)
        replies = asyncio.run(
            gw.chat_model(protocol=protocol).abatch(
                PROMPTS, config={"max_concurrency": 8}, return_exceptions=True
            )
        )
        outcomes = [r if isinstance(r, BaseException) else r.content for r in replies]
        assert _right_or_ambiguous(PROMPTS, outcomes)
        assert any(isinstance(o, AmbiguousStepError) for o in outcomes)


# -- calls one at a time --------------------------------------------------------------------


def test_calls_from_event_loops_in_turn_are_served_in_order() -> None:
    gw = _unbound(["one?", "two?"])
    model = gw.chat_model()
    answers = [asyncio.run(model.ainvoke(prompt)).content for prompt in ("one?", "two?")]
    assert answers == ["Answer to one?", "Answer to two?"]


def test_a_call_on_a_pool_of_one_worker_is_served() -> None:
    gw = _unbound(["one?", "two?"])
    model = gw.chat_model()
    with ThreadPoolExecutor(1) as pool:
        answers = list(pool.map(lambda p: model.invoke(p).content, ["one?", "two?"]))
    assert answers == ["Answer to one?", "Answer to two?"]


def test_a_retry_is_the_same_call() -> None:
    gw = FakeKimiGateway().add_error(503, retry_after=0).add_reply(text="Back.")
    assert gw.chat_model(rate_limit_timeout=1).invoke("Hi").content == "Back."
    assert len(gw.requests) == 2


def test_bound_calls_in_flight_together_leave_the_unbound_steps_to_later_calls() -> None:
    """Map-reduce: the fan-out bound, the summary unbound and asked alone afterwards."""
    gw = FakeKimiGateway()
    for prompt in PROMPTS[:8]:
        gw.add_reply(text=f"Answer to {prompt}", when=prompt)
    gw.add_reply(text="Draft.").add_reply(text="Summary.")
    model = gw.chat_model()
    replies = model.batch(PROMPTS[:8], config={"max_concurrency": 8})
    assert [r.content for r in replies] == [f"Answer to {p}" for p in PROMPTS[:8]]
    assert [model.invoke(p).content for p in ("Draft it.", "Summarize.")] == ["Draft.", "Summary."]


def test_the_same_answer_everywhere_is_served_to_calls_in_flight_together_but_not_after_another() -> (
    None
):
    gw = FakeKimiGateway()
    for _ in PROMPTS[:8]:
        gw.add_reply(text="OK")
    model = gw.chat_model()
    assert {r.content for r in model.batch(PROMPTS[:8], config={"max_concurrency": 8})} == {"OK"}
    gw = FakeKimiGateway().add_reply(text="OK").add_reply(text="OK").add_reply(text="Other")
    stream = gw.chat_model().stream("A?")
    next(stream)
    with pytest.raises(AmbiguousStepError):
        gw.chat_model().invoke("B?")


# -- what a refusal says ----------------------------------------------------------------------

HOW = (
    "bind each step to the request it answers with when=, e.g. gw.add_reply(..., when={}) (the "
    "text of the request's last user message) or when=lambda body: ... (a predicate on its JSON "
    "body)"
)


def _refusal(number: int, step: str, why: str, prompt: str) -> str:
    return (
        f"FakeKimiGateway: request #{number} (POST /v1/chat/completions): the unbound {step} "
        f"answers whichever call asks first, and {why}: which call takes it depends on timing; "
        + HOW.format(repr(prompt))
    )


class _RunsBeforeTheRequest(BaseRateLimiter):
    """A rate limiter is asked after the call has started and before its request is sent."""

    def __init__(self, meanwhile: Callable[[], object]) -> None:
        self.meanwhile = meanwhile

    def acquire(self, *, blocking: bool = True) -> bool:
        self.meanwhile()
        return True

    async def aacquire(self, *, blocking: bool = True) -> bool:
        return self.acquire(blocking=blocking)


def test_a_call_another_call_ran_during_is_refused_an_unbound_step_saying_so() -> None:
    gw = FakeKimiGateway().add_reply(text="a").add_reply(text="b")
    gw.add_reply(text="Answer to D?", when="D?")
    bound = gw.chat_model()
    model = gw.chat_model(rate_limiter=_RunsBeforeTheRequest(lambda: bound.invoke("D?")))
    with pytest.raises(AmbiguousStepError) as caught:
        model.invoke("C?")
    why = (
        "another call of this gateway's models was in progress during this one (a stream runs "
        "until it is read to its end or closed)"
    )
    assert str(caught.value) == _refusal(2, "step 1 (reply 'a')", why, "C?")
    assert gw.remaining == 2


def test_a_call_started_while_another_ran_is_refused_an_unbound_step_after_the_other_ended() -> (
    None
):
    gw = FakeKimiGateway().add_reply(text="Answer to one?", when="one?").add_reply(text="a")
    gw.add_reply(text="b")
    earlier = gw.chat_model().stream("one?")
    next(earlier)  # in progress, on a bound step
    model = gw.chat_model(rate_limiter=_RunsBeforeTheRequest(lambda: list(earlier)))
    with pytest.raises(AmbiguousStepError, match="was in progress during this one"):
        model.invoke("two?")  # started, then the stream ended, then its request
    assert gw.remaining == 2


def test_the_end_of_a_call_whose_start_was_never_seen_is_ignored() -> None:
    gw = FakeKimiGateway().add_reply(text="a").add_reply(text="b")
    model = gw.chat_model()
    (tracker,) = [c for c in model.callbacks or [] if isinstance(c, BaseCallbackHandler)]
    tracker.on_llm_end(None, run_id=uuid.uuid4())
    tracker.on_llm_error(ValueError("x"), run_id=uuid.uuid4())
    assert [model.invoke(p).content for p in ("one?", "two?")] == ["a", "b"]


def test_the_end_of_a_call_that_took_an_unbound_step_among_others_says_how_to_bind() -> None:
    gw = FakeKimiGateway().add_reply(text="a").add_reply(text="b")
    model = gw.chat_model()
    stream = model.stream("B?")
    next(stream)
    with pytest.raises(AmbiguousStepError):
        model.invoke("A?")
    with pytest.raises(AmbiguousStepError) as caught:
        list(stream)
    assert str(caught.value) == (
        "FakeKimiGateway: this call took the unbound step 1 (reply 'a'), and another call of this "
        "gateway's models was in progress during it (a stream runs until it is read to its end "
        "or closed): which call it answers depends on timing; " + HOW.format("'B?'")
    )
    with pytest.raises(AmbiguousStepError) as caught:
        model.invoke("C?")
    why = (
        "an earlier AmbiguousStepError of this gateway (the first says why) showed its calls "
        "out of order: the script's order no longer says which call comes next"
    )
    assert str(caught.value) == _refusal(3, "step 2 (reply 'b')", why, "C?")


def test_a_call_on_a_pool_with_other_workers_is_told_its_worker() -> None:
    gw = FakeKimiGateway().add_reply(text="a").add_reply(text="b")
    model = gw.chat_model()
    release = threading.Event()
    with ThreadPoolExecutor(2, thread_name_prefix="pool") as pool:
        pool.submit(release.wait, 10)  # the other worker, busy
        refused = pool.submit(_outcome, lambda: model.invoke("Q?")).result(10)
        release.set()
    why = (
        "it runs on pool_1, a worker of a thread pool with other workers (batch, LangGraph "
        "running nodes on threads, an executor): a pool may run its tasks in any order"
    )
    assert str(refused) == _refusal(1, "step 1 (reply 'a')", why, "Q?")
    with pytest.raises(AmbiguousStepError, match="no longer says which call comes next"):
        model.invoke("Later, alone?")


def test_a_thread_asking_while_another_that_took_an_unbound_step_still_runs_names_it() -> None:
    gw = FakeKimiGateway().add_reply(text="a").add_reply(text="b")
    model = gw.chat_model()
    took, asked = threading.Event(), threading.Event()
    outcomes: dict[str, object] = {}

    def first() -> None:
        outcomes["first"] = _outcome(lambda: model.invoke("first?"))
        took.set()
        asked.wait(10)

    def second() -> None:
        took.wait(10)
        outcomes["second"] = _outcome(lambda: model.invoke(""))
        asked.set()

    threads = [threading.Thread(target=first, name="first"), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    why = (
        "first, which took the unbound step 1 (reply 'a'), still runs: threads running at the "
        "same time may call in either order"
    )
    assert outcomes["first"] == "a"
    assert str(outcomes["second"]) == (
        _refusal(2, "step 2 (reply 'b')", why, "").replace("''", "'<its last user message>'")
    )


def test_the_main_thread_is_no_rival_of_its_workers_nor_they_of_it() -> None:
    gw = FakeKimiGateway().add_reply(text="a").add_reply(text="b").add_reply(text="c")
    model = gw.chat_model()
    assert model.invoke("main?").content == "a"
    worker_took, main_asked = threading.Event(), threading.Event()
    answers: list[object] = []

    def worker() -> None:
        answers.append(_outcome(lambda: model.invoke("worker?")))
        worker_took.set()
        main_asked.wait(10)

    thread = threading.Thread(target=worker)
    thread.start()
    worker_took.wait(10)
    answers.append(model.invoke("main again?").content)
    main_asked.set()
    thread.join(10)
    assert answers == ["b", "c"]


# -- LangGraph's streamed agents (docs/without-a-key.md) --------------------------------------


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"{city}: 18°C"


def _agent_script(when: str | None) -> FakeKimiGateway:
    gw = FakeKimiGateway()
    gw.add_reply(tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}}], when=when)
    gw.add_reply(text="18°C in Paris.", when=when)
    return gw


def test_an_agent_streamed_in_messages_mode_on_threads_needs_its_steps_bound() -> None:
    """Its lone model node runs on a pool beside LangGraph's helper thread."""
    agent = create_agent(_agent_script(None).chat_model(), tools=[get_weather])
    with pytest.raises(AmbiguousStepError, match="a worker of a thread pool with other workers"):
        list(agent.stream({"messages": [("user", "Weather?")]}, stream_mode="messages"))
    bound = create_agent(_agent_script("Weather?").chat_model(), tools=[get_weather])
    chunks = list(bound.stream({"messages": [("user", "Weather?")]}, stream_mode="messages"))
    assert "".join(str(c.content) for c, _ in chunks).endswith("18°C in Paris.")


def test_an_agent_streamed_in_messages_mode_on_the_event_loop_takes_unbound_steps() -> None:
    agent = create_agent(_agent_script(None).chat_model(), tools=[get_weather])

    async def stream() -> str:
        state = {"messages": [("user", "Weather?")]}
        parts = [str(c.content) async for c, _ in agent.astream(state, stream_mode="messages")]
        return "".join(parts)

    assert asyncio.run(stream()).endswith("18°C in Paris.")


def test_requests_of_your_own_clients_are_served_in_order_until_a_refusal() -> None:
    gw = _unbound(["A?", "B?", "C?", "D?"])
    reply = post(gw, "openai", user("A?")).json()
    assert reply["choices"][0]["message"]["content"] == "Answer to A?"
    model = gw.chat_model()
    stream = model.stream("B?")
    next(stream)
    with pytest.raises(AmbiguousStepError):
        model.invoke("C?")
    stream.close()
    with pytest.raises(AmbiguousStepError, match="no longer says which call comes next"):
        post(gw, "openai", user("D?"))
