"""The sync and async halves of ChatKimi's calls do the same thing (issue 19 item 2).

Every scenario is run on both halves against fresh, identically scripted gateways, and what the
caller gets is compared whole: `invoke` with `ainvoke`, `stream` with `astream`, `stream_events`
with `astream_events` (each message, chunk or event, the `on_llm_new_token` callbacks, the
requests sent), raised errors included (type, message, request id, what a stream delivered
before failing). A change to one half only fails here.

And an interruption of either half (Ctrl-C in a sync stream's consumer or while it waits for
bytes, a cancelled async stream) leaves no pool slot held, no queue entry and no connection open.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, cast
from uuid import UUID

import httpx
import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, BaseMessageChunk
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk
from pydantic import BaseModel

from langchain_kimi import ChatKimi
from langchain_kimi._errors import KimiError
from langchain_kimi.testing import FakeKimiGateway
from tests.support.fake_clock import fake_waits

# Issue 31: each test also runs on replies without the optional keys that say nothing.
pytestmark = pytest.mark.usefixtures("both_reply_forms")

PROMPT = "Capital of France?"
USAGE = {"input_tokens": 40, "output_tokens": 12, "reasoning_tokens": 7, "cache_read": 10}


class GetWeather(BaseModel):
    """The weather in a city."""

    city: str


@dataclass
class Scenario:
    """A gateway script, the model's fields, what the call binds and passes, a fragment the
    outcome must contain (so that two equal failures never pass as parity), and the waits
    between its attempts when it is retried."""

    script: Callable[[FakeKimiGateway], object]
    expect: str
    fields: dict[str, Any] = field(default_factory=dict)
    bind_tools: list[Any] | None = None
    call: dict[str, Any] = field(default_factory=dict)
    waits: list[float] = field(default_factory=list)


SCENARIOS = {
    "text": Scenario(
        lambda gw: gw.add_reply(text="Paris.", reasoning="The capital.", usage=USAGE), "Paris."
    ),
    "tool calls": Scenario(
        lambda gw: gw.add_reply(tool_calls=[{"name": "GetWeather", "args": {"city": "Paris"}}]),
        "GetWeather",
        bind_tools=[GetWeather],
    ),
    "web search rounds": Scenario(
        lambda gw: gw.add_web_search(
            "capital of France", results=[{"title": "France", "url": "https://france.example"}]
        ).add_reply(text="Paris, says the search.", usage=USAGE),
        "Paris, says the search.",
        bind_tools=["web_search"],
    ),
    "emulated stop": Scenario(
        lambda gw: gw.add_reply(text="Paris. END Lyon."), "Paris. ", call={"stop": ["END"]}
    ),
    "usage left off the stream": Scenario(
        lambda gw: gw.add_reply(text="Paris.", usage=USAGE),
        "Paris.",
        fields={"stream_usage": False},
    ),
    "retried after a 503": Scenario(
        lambda gw: gw.add_error(503, "busy", retry_after=0.01).add_reply(text="Paris."),
        "Paris.",
        fields={"rate_limit_timeout": 1},
        waits=[0.01],
    ),
    "an error": Scenario(lambda gw: gw.add_error(400, "bad request body"), "bad request body"),
    "an error after a retry": Scenario(
        lambda gw: gw.add_error(429, "slow down", retry_after=0.01).add_error(401, "who?"),
        "who?",
        fields={"rate_limit_timeout": 1},
        waits=[0.01],  # the gateway's wait alone (on main 20012a2: [0.01, 0.99], a paced turn)
    ),
}

HALVES = {"invoke": "ainvoke", "stream": "astream", "stream_events": "astream_events"}
"""Each sync way of calling and its async twin. `stream_events(version="v3")` is the path on
which langchain-core hands the stream hooks a run manager (their own `on_llm_new_token` calls)."""
V3_SCENARIOS = ["text", "usage left off the stream", "retried after a 503", "an error"]
"""Without call arguments: langchain-core's async v3 path (1.8.3) sends no bound `tools`."""
CASES = [
    (sync, scenario)
    for sync in HALVES
    for scenario in SCENARIOS
    if sync != "stream_events" or scenario in V3_SCENARIOS
]


class Tokens(BaseCallbackHandler):
    """Records every `on_llm_new_token` call, in order, on the calling thread."""

    run_inline = True

    def __init__(self) -> None:
        self.seen: list[tuple[Any, Any]] = []

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        assert isinstance(chunk, ChatGenerationChunk)
        self.seen.append((token, _normal(chunk.message)))


def _normal(item: Any) -> Any:
    """A message, chunk or event as JSON data, with the ids LangChain draws per run
    (`lc_run--<uuid>`) made equal."""
    data = item.model_dump() if isinstance(item, BaseMessage) else item
    text = json.dumps(data, ensure_ascii=False, default=repr)
    return json.loads(re.sub(r"lc_run-[-0-9a-f]+", "<run id>", text))


def _error(error: BaseException) -> dict[str, Any]:
    outcome: dict[str, Any] = {"error": type(error).__name__, "message": str(error)}
    if isinstance(error, KimiError):
        partial = error.partial
        outcome |= {
            "status": error.status_code,
            "request_id": error.request_id,
            "partial": _normal(partial) if partial is not None else None,
        }
    return outcome


def _call(runnable: Any, style: str, call: dict[str, Any]) -> dict[str, Any]:
    """What the caller gets of one call in `style`: the items in order, up to the error if one
    is raised (and the error)."""
    config: Any = {"callbacks": [tokens := Tokens()]}
    items: list[Any] = []

    async def acollect() -> None:
        if style == "ainvoke":
            items.append(await runnable.ainvoke(PROMPT, config, **call))
            return
        source = runnable.astream(PROMPT, config, **call)
        if style == "astream_events":
            source = await runnable.astream_events(PROMPT, config, version="v3", **call)
        async for item in source:
            items.append(item)

    outcome: dict[str, Any] = {}
    try:
        if style == "invoke":
            items.append(runnable.invoke(PROMPT, config, **call))
        elif style == "stream":
            items.extend(runnable.stream(PROMPT, config, **call))
        elif style == "stream_events":
            items.extend(runnable.stream_events(PROMPT, config, version="v3", **call))
        else:
            asyncio.run(acollect())
    except Exception as error:  # the error is the outcome compared
        outcome["raised"] = _error(error)
    texts = [item.content for item in items if isinstance(getattr(item, "content", 0), str)]
    return outcome | {
        "items": [_normal(item) for item in items],
        "text": "".join(texts),
        "tokens": tokens.seen,
    }


def _run(protocol: str, scenario: Scenario, style: str) -> dict[str, Any]:
    """One call against a freshly scripted gateway, and what the gateway received."""
    gw = FakeKimiGateway()
    scenario.script(gw)
    runnable: Any = gw.chat_model(protocol=protocol, **scenario.fields)
    if scenario.bind_tools is not None:
        runnable = runnable.bind_tools(scenario.bind_tools)
    outcome = _call(runnable, style, scenario.call)
    return outcome | {"requests": gw.requests, "refusals": gw.refusals}


@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")
@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize(("sync", "scenario"), CASES, ids=[f"{s}-{c}" for s, c in CASES])
def test_both_halves_give_the_same(
    protocol: str, sync: str, scenario: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = fake_waits(monkeypatch)  # each half's retries wait on it, and wait alike
    outcome = _run(protocol, SCENARIOS[scenario], sync)
    sync_sleeps, clock.sleeps = clock.sleeps, []
    assert SCENARIOS[scenario].expect in json.dumps(outcome, ensure_ascii=False)
    assert sync_sleeps == SCENARIOS[scenario].waits
    if sync != "invoke" and "raised" not in outcome:
        assert len(outcome["items"]) > 2, "a stream arrives in pieces"
        assert outcome["tokens"], "on_llm_new_token was called"
    assert outcome == _run(protocol, SCENARIOS[scenario], HALVES[sync])
    assert clock.sleeps == sync_sleeps


def test_usage_is_left_off_the_stream_only_when_asked() -> None:
    kept = _run("openai", SCENARIOS["text"], "stream")
    dropped = _run("openai", SCENARIOS["usage left off the stream"], "astream")
    assert any(chunk["usage_metadata"] for chunk in kept["items"])
    assert not any(chunk["usage_metadata"] for chunk in dropped["items"])
    assert not any(chunk["usage_metadata"] for _, chunk in dropped["tokens"])


# -- streams failing mid-way (raw event streams: the scripted gateway always finishes) ------


def _delta(text: str) -> str:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    return "data: " + json.dumps({"id": "c1", "model": "kimi-k3.1-pro", "choices": [choice]})


BROKEN_STREAMS = {
    "cut before the end": "\n\n".join([_delta("Par"), _delta("is")]) + "\n\n",
    "an error event": "\n\n".join(
        [_delta("Par"), 'data: {"error": {"message": "overloaded", "type": "api_error"}}']
    )
    + "\n\n",
    "an unreadable event": "\n\n".join([_delta("Par"), 'data: {"choices": 5}']) + "\n\n",
}


@pytest.mark.parametrize("broken", list(BROKEN_STREAMS), ids=list(BROKEN_STREAMS))
def test_a_stream_failing_mid_way_fails_alike(broken: str) -> None:
    def run(style: str) -> dict[str, Any]:
        gw = FakeKimiGateway().add_raw(BROKEN_STREAMS[broken])
        return _call(gw.chat_model(protocol="openai"), style, {})

    sync = run("stream")
    partial = sync["raised"]["partial"]
    assert partial is not None, "what arrived is kept on the error"
    assert partial["content"] == sync["text"] != "", "all of it"
    assert sync == run("astream")


# -- interruptions ---------------------------------------------------------------------------


class Body(httpx.SyncByteStream, httpx.AsyncByteStream):
    """An event stream that sends `first`, then waits for bytes that come only when `more` is
    set; records its close in `log`. `interrupt` stands for a Ctrl-C during that wait."""

    def __init__(self, first: str, log: list[str], *, interrupt: bool = False) -> None:
        self.first = first.encode()
        self.log = log
        self.interrupt = interrupt
        self.more = threading.Event()
        self.waiting = asyncio.Event()

    def __iter__(self) -> Iterator[bytes]:
        yield self.first
        if self.interrupt:
            raise KeyboardInterrupt
        self.more.wait(5)
        yield b"data: [DONE]\n\n"

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.first
        self.waiting.set()
        await asyncio.sleep(5)
        yield b"data: [DONE]\n\n"

    def close(self) -> None:
        self.log.append("connection closed")

    async def aclose(self) -> None:
        self.log.append("connection closed")


def _stalling(log: list[str], *, interrupt: bool = False) -> tuple[ChatKimi, Body]:
    body = Body(_delta("Par") + "\n\n", log, interrupt=interrupt)
    headers = {"content-type": "text/event-stream"}
    gw = FakeKimiGateway().add_raw(httpx.Response(200, headers=headers, stream=body))
    return gw.chat_model(protocol="openai"), body


def _nothing_left(model: ChatKimi, log: list[str]) -> None:
    assert model._transport()._shared().gate.queued == 0, "a turn was left waiting"
    assert log == ["connection closed"]


def _astream(model: ChatKimi) -> aclosing[AsyncGenerator[BaseMessageChunk]]:
    """The model's async stream, closed when the block ends (as `for` closes a sync one)."""
    return aclosing(cast("AsyncGenerator[BaseMessageChunk]", model.astream(PROMPT)))


def _ctrl_c_at_the_first_chunk(model: ChatKimi) -> None:
    for _ in model.stream(PROMPT):
        raise KeyboardInterrupt


async def _actrl_c_at_the_first_chunk(model: ChatKimi) -> None:
    async with _astream(model) as chunks:
        async for _ in chunks:
            raise KeyboardInterrupt


def test_ctrl_c_in_a_sync_stream_consumer_leaves_nothing_behind() -> None:
    log: list[str] = []
    model, _ = _stalling(log)
    with pytest.raises(KeyboardInterrupt):
        _ctrl_c_at_the_first_chunk(model)
    _nothing_left(model, log)


def test_ctrl_c_while_a_sync_stream_waits_for_bytes_leaves_nothing_behind() -> None:
    log: list[str] = []
    model, _ = _stalling(log, interrupt=True)
    seen: list[BaseMessageChunk] = []
    with pytest.raises(KeyboardInterrupt):
        seen.extend(model.stream(PROMPT))
    _nothing_left(model, log)


async def test_a_cancelled_async_stream_leaves_nothing_behind() -> None:
    log: list[str] = []
    model, body = _stalling(log)
    seen: list[BaseMessageChunk] = []

    async def consume() -> None:
        async with _astream(model) as chunks:
            async for chunk in chunks:
                seen.append(chunk)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(body.waiting.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen, "the first chunk arrived before the cancellation"
    _nothing_left(model, log)


async def test_ctrl_c_in_an_async_stream_consumer_leaves_nothing_behind() -> None:
    log: list[str] = []
    model, _ = _stalling(log)
    with pytest.raises(KeyboardInterrupt):
        await _actrl_c_at_the_first_chunk(model)
    _nothing_left(model, log)
