"""The sync and async halves of ChatKimi's calls do the same thing (issue 19 item 2).

Every scenario is run on both halves against fresh, identically scripted gateways, and what the
caller gets is compared whole: `invoke` with `ainvoke`, `stream` with `astream` (each chunk, the
`on_llm_new_token` callbacks, the requests sent), raised errors included (type, message, request
id, what a stream delivered before failing). A change to one half only fails here.

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
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import BaseMessage, BaseMessageChunk
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk
from langchain_core.runnables import Runnable

from langchain_kimi import ChatKimi
from langchain_kimi._errors import KimiError
from langchain_kimi.testing import FakeKimiGateway
from tests.support.fake_gateway import FakeGateway

PROMPT = "Capital of France?"
USAGE = {"input_tokens": 40, "output_tokens": 12, "reasoning_tokens": 7, "cache_read": 10}
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


@dataclass
class Scenario:
    """A gateway script, the model's fields, what the call binds and passes, and a fragment
    the outcome must contain (so that two equal failures never pass as parity)."""

    script: Callable[[FakeKimiGateway], object]
    expect: str
    fields: dict[str, Any] = field(default_factory=dict)
    bind_tools: list[Any] | None = None
    call: dict[str, Any] = field(default_factory=dict)


SCENARIOS = {
    "text": Scenario(
        lambda gw: gw.add_reply(text="Paris.", reasoning="The capital.", usage=USAGE), "Paris."
    ),
    "tool calls": Scenario(
        lambda gw: gw.add_reply(tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}}]),
        "get_weather",
        bind_tools=[WEATHER],
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
        fields={"max_retries": 1},
    ),
    "an error": Scenario(lambda gw: gw.add_error(400, "bad request body"), "bad request body"),
    "an error after a retry": Scenario(
        lambda gw: gw.add_error(429, "slow down", retry_after=0.01).add_error(401, "who?"),
        "who?",
        fields={"max_retries": 1},
    ),
}


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


def _same_run_ids(data: Any) -> Any:
    """`data` with the ids LangChain draws per run (`lc_run--<uuid>`) made equal."""
    text = json.dumps(data, ensure_ascii=False, default=repr)
    return json.loads(re.sub(r"lc_run-[-0-9a-f]+", "<run id>", text))


def _normal(message: BaseMessage) -> dict[str, Any]:
    """A message as a dict, run ids made equal."""
    normal: dict[str, Any] = _same_run_ids(message.model_dump())
    return normal


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


def _runnable(
    gw: FakeKimiGateway, protocol: str, scenario: Scenario
) -> Runnable[LanguageModelInput, Any]:
    model = gw.chat_model(protocol=protocol, **scenario.fields)
    if scenario.bind_tools is not None:
        return model.bind_tools(scenario.bind_tools)
    return model


def _run(protocol: str, scenario: Scenario, style: str) -> dict[str, Any]:
    """Everything the caller sees of one call in `style`, and what the gateway received."""
    gw = FakeKimiGateway()
    scenario.script(gw)
    runnable = _runnable(gw, protocol, scenario)
    tokens = Tokens()
    config: Any = {"callbacks": [tokens]}
    outcome: dict[str, Any] = {}
    chunks: list[BaseMessageChunk] = []
    try:
        if style == "invoke":
            outcome["message"] = _normal(runnable.invoke(PROMPT, config, **scenario.call))
        elif style == "ainvoke":
            message = asyncio.run(runnable.ainvoke(PROMPT, config, **scenario.call))
            outcome["message"] = _normal(message)
        elif style == "stream":
            for chunk in runnable.stream(PROMPT, config, **scenario.call):
                chunks.append(chunk)
        else:

            async def collect() -> None:
                async for chunk in runnable.astream(PROMPT, config, **scenario.call):
                    chunks.append(chunk)

            asyncio.run(collect())
    except Exception as error:  # the error is the outcome compared
        outcome["raised"] = _error(error)
    outcome["chunks"] = [_normal(chunk) for chunk in chunks]
    outcome["streamed text"] = "".join(c.content for c in chunks if isinstance(c.content, str))
    outcome["tokens"] = tokens.seen
    outcome["requests"] = gw.requests
    outcome["refusals"] = gw.refusals
    return outcome


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_invoke_and_ainvoke_give_the_same(protocol: str, scenario: str) -> None:
    sync = _run(protocol, SCENARIOS[scenario], "invoke")
    async_ = _run(protocol, SCENARIOS[scenario], "ainvoke")
    assert SCENARIOS[scenario].expect in json.dumps(sync, ensure_ascii=False)
    assert sync == async_


def _events_v3(protocol: str, scenario: Scenario, style: str) -> dict[str, Any]:
    """`stream_events(version="v3")` (or `astream_events`): the path on which langchain-core
    hands ChatKimi's stream hooks a run manager, so their own `on_llm_new_token` calls count."""
    gw = FakeKimiGateway()
    scenario.script(gw)
    model = gw.chat_model(protocol=protocol, **scenario.fields)
    call = dict(scenario.call)
    tokens = Tokens()
    config: Any = {"callbacks": [tokens]}
    events: list[Any] = []
    outcome: dict[str, Any] = {}
    try:
        if style == "sync":
            events.extend(model.stream_events(PROMPT, config, version="v3", **call))
        else:

            async def collect() -> None:
                stream = await model.astream_events(PROMPT, config, version="v3", **scenario.call)
                events.extend([event async for event in stream])

            asyncio.run(collect())
    except Exception as error:  # the error is the outcome compared
        outcome["raised"] = _error(error)
    outcome["events"] = _same_run_ids(events)
    outcome["tokens"] = tokens.seen
    outcome["requests"] = gw.requests
    return outcome


# Without call arguments: langchain-core's async v3 path (1.8.3) sends no bound `tools`.
V3_SCENARIOS = ["text", "usage left off the stream", "retried after a 503", "an error"]


@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")
@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("scenario", V3_SCENARIOS)
def test_stream_events_v3_sync_and_async_give_the_same(protocol: str, scenario: str) -> None:
    sync = _events_v3(protocol, SCENARIOS[scenario], "sync")
    async_ = _events_v3(protocol, SCENARIOS[scenario], "async")
    assert SCENARIOS[scenario].expect in json.dumps(sync, ensure_ascii=False)
    if "raised" not in sync:
        assert any(token for token, _ in sync["tokens"]), "the hooks' own callbacks ran"
    assert sync == async_


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=list(SCENARIOS))
def test_stream_and_astream_give_the_same(protocol: str, scenario: str) -> None:
    sync = _run(protocol, SCENARIOS[scenario], "stream")
    async_ = _run(protocol, SCENARIOS[scenario], "astream")
    assert SCENARIOS[scenario].expect in json.dumps(sync, ensure_ascii=False)
    if "raised" not in sync:
        assert len(sync["chunks"]) > 2, "a stream arrives in pieces"
        assert len(sync["tokens"]) == len(sync["chunks"])
    assert sync == async_


def test_usage_is_left_off_the_stream_only_when_asked() -> None:
    kept = _run("openai", SCENARIOS["text"], "stream")
    dropped = _run("openai", SCENARIOS["usage left off the stream"], "astream")
    assert any(chunk["usage_metadata"] for chunk in kept["chunks"])
    assert not any(chunk["usage_metadata"] for chunk in dropped["chunks"])
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


def _broken_run(sse: str, style: str) -> dict[str, Any]:
    gw = FakeGateway(reply=lambda body, path: sse)
    model = gw.model("openai", max_retries=0)
    chunks: list[BaseMessageChunk] = []
    outcome: dict[str, Any] = {}
    try:
        if style == "stream":
            chunks.extend(model.stream(PROMPT))
        else:

            async def collect() -> None:
                async for chunk in model.astream(PROMPT):
                    chunks.append(chunk)

            asyncio.run(collect())
    except Exception as error:  # the error is the outcome compared
        outcome["raised"] = _error(error)
    outcome["chunks"] = [_normal(chunk) for chunk in chunks]
    return outcome


@pytest.mark.parametrize("broken", list(BROKEN_STREAMS), ids=list(BROKEN_STREAMS))
def test_a_stream_failing_mid_way_fails_alike(broken: str) -> None:
    sync = _broken_run(BROKEN_STREAMS[broken], "stream")
    async_ = _broken_run(BROKEN_STREAMS[broken], "astream")
    assert sync["raised"]["partial"] is not None, "what arrived is kept on the error"
    assert "Par" in json.dumps(sync["raised"]["partial"])
    assert sync == async_


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
    gw = FakeGateway(reply=lambda *_: httpx.Response(200, headers=headers, stream=body))
    return gw.model("openai", max_retries=0), body


def _nothing_left(model: ChatKimi, log: list[str]) -> None:
    admission = model._transport()._pool().admission
    assert (admission.in_flight, admission.queued) == (0, 0), "a pool slot was left held"
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
