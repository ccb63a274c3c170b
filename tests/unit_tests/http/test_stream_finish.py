"""What happens after a stream's end event, the same in the sync and async halves (issue 19 item 2:
twins that drifted; issue 23 items 3 and 6).

- the pool slot goes back once the connection is given back (body drained or connection closed),
  never before: the admission's count of calls in flight is the count of connections in use;
- the event generators are closed when the stream is, in both halves;
- the rest of the body is drained within bounds (time, and count per pool), so a server that keeps
  the body open after `[DONE]` cannot hold the pool's connections;
- an async stream that ends with junk or a stall after `[DONE]` logs no "Task exception was never
  retrieved".
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from langchain_kimi import ChatKimi
from langchain_kimi._http._async import exchange as async_exchange
from langchain_kimi._http._sync import exchange as sync_exchange
from langchain_kimi._http.limits import admission
from langchain_kimi._http.pool import drains, shared
from langchain_kimi._http.transport import Transport
from tests.support import fake_transport
from tests.support.echo_gateway import EchoServer
from tests.support.fake_transport import Script, scripted_transport
from tests.support.loopback import running

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

KEY = "sk-finish-test-key-0123456789abcdef"
PATH = "/v1/chat/completions"
# A body the gateway accepts (the fake judges it before its script answers).
BODY: dict[str, Any] = {**fake_transport.BODY, "stream": True}
SSE = {"content-type": "text/event-stream"}
EVENT = b'data: {"n": 1}\n\n'
DONE = b"data: [DONE]\n\n"


class Body(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A streamed body that records when it is closed into `log`."""

    def __init__(self, chunks: list[bytes], log: list[str]) -> None:
        self.chunks = chunks
        self.log = log

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk

    def close(self) -> None:
        self.log.append("connection given back")

    async def aclose(self) -> None:
        self.log.append("connection given back")


def _transport(chunks: list[bytes], log: list[str]) -> Transport:
    response = httpx.Response(200, headers=SSE, stream=Body(chunks, log))
    transport, _ = scripted_transport(Script(response), base_url="https://gw.example", key=KEY)
    return transport


def _wait_for_background_drains() -> None:
    for thread in threading.enumerate():
        if thread.name.startswith("langchain-kimi-drain"):
            thread.join(5)


async def _read(transport: Transport, mode: str, *, stop_after: int | None = None) -> None:
    if mode == "sync":
        with transport.stream_events(PATH, BODY) as events:
            for i, _ in enumerate(events):
                if i + 1 == stop_after:
                    break
    else:
        async with transport.astream_events(PATH, BODY) as aevents:
            i = 0
            async for _ in aevents:
                i += 1
                if i == stop_after:
                    break
    _wait_for_background_drains()


@pytest.mark.parametrize("stop_after", [None, 1], ids=["to-the-end", "stopped-early"])
async def test_the_slot_goes_back_after_the_connection(
    mode: str, stop_after: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    log: list[str] = []
    real_done = admission.Permit.done

    def done(self: admission.Permit, outcome: Any, *, keep: bool = False) -> None:
        if not keep and not self.released:
            log.append("slot given back")
        real_done(self, outcome, keep=keep)

    monkeypatch.setattr(admission.Permit, "done", done)
    transport = _transport([EVENT, DONE, EVENT], log)
    await _read(transport, mode, stop_after=stop_after)
    assert log == ["connection given back", "slot given back"]
    assert transport._pool().admission.in_flight == 0


@pytest.mark.parametrize("stop_after", [None, 1], ids=["to-the-end", "stopped-early"])
async def test_the_event_generators_are_closed_with_the_stream(
    mode: str, stop_after: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    generators: list[Any] = []
    for module, name in ((sync_exchange, "iter_events"), (async_exchange, "aiter_events")):
        real = getattr(module, name)

        def recording(*args: Any, _real: Any = real) -> Any:
            generators.append(_real(*args))
            return generators[-1]

        monkeypatch.setattr(module, name, recording)
    # More stray events after the end than a drain reads: the drain gives up, and still closes.
    transport = _transport([EVENT, DONE, *[EVENT] * 40], [])
    await _read(transport, mode, stop_after=stop_after)
    assert len(generators) == 1
    frame = generators[0].gi_frame if mode == "sync" else generators[0].ag_frame
    assert frame is None, "the event generator was left open"


# -- against a loopback server that keeps the body open after [DONE] --------------------------


def _stalling_model(url: str, **fields: Any) -> ChatKimi:
    settings: dict[str, Any] = {
        "api_key": KEY,
        "base_url": url,
        "max_retries": 0,
        # A call that waits for a connection fails after 2 s instead of hanging the test.
        "timeout": httpx.Timeout(10, pool=2),
    }
    return ChatKimi.model_validate({**settings, **fields})


def _streamed(model: ChatKimi, prompt: str) -> str:
    return "".join(str(chunk.content) for chunk in model.stream(prompt))


def test_sync_streams_against_a_server_stalling_after_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(drains, "DRAIN_SECONDS", 0.2)
    with running(EchoServer(stall_after_done=True)) as server:
        model = _stalling_model(server.url)
        for i in range(205):
            assert _streamed(model, f"stream {i}") == f"stream {i}"
        assert model.invoke("after").content == "after"
        pool = model._transport()._pool()
        assert pool.drains.active <= drains.DRAINS_PER_POOL


def test_a_waiting_call_takes_a_draining_connections_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shared, "CAPACITY", 4)
    monkeypatch.setattr(drains, "DRAIN_SECONDS", 60.0)  # only making room can end these drains
    release = threading.Event()
    with running(EchoServer(stall_after_done=True)) as server:
        server.on_request = lambda body: (
            release.wait(10) if body["messages"][-1]["content"] == "held" else None
        )
        model = _stalling_model(server.url)
        for i in range(3):  # three drains hold three of the four slots
            assert _streamed(model, f"s{i}") == f"s{i}"
        pool = model._transport()._pool()
        assert pool.drains.active == 3
        held = threading.Thread(target=model.invoke, args=("held",))
        held.start()  # the fourth slot
        try:
            deadline = time.monotonic() + 10
            while pool.admission.in_flight < 4 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert model.invoke("room").content == "room"  # not KimiTimeoutError after 2 s
        finally:
            release.set()
            held.join(10)


def test_the_drain_bounds_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drains, "DRAINS_PER_POOL", 0)  # no drain at all: every connection closed
    with running(EchoServer(stall_after_done=True)) as server:
        model = _stalling_model(server.url)
        for i in range(3):
            assert _streamed(model, f"s{i}") == f"s{i}"
        assert model._transport()._pool().admission.in_flight == 0


@pytest.mark.parametrize(
    "server_kwargs",
    [
        {"stall_after_done": True},
        {"after_done": b"data: junk after the end\n\n", "stall_after_done": True},
        {"after_done": b"not even an event" * 100},
    ],
    ids=["stall", "junk-then-stall", "junk"],
)
def test_async_streams_ending_oddly_log_nothing(
    server_kwargs: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    with running(EchoServer(**server_kwargs)) as server:
        model = _stalling_model(server.url)

        async def streams() -> list[str]:
            texts = []
            for i in range(5):
                texts.append("".join([str(c.content) async for c in model.astream(f"a{i}")]))
                gc.collect()  # collected generators are finalized as tasks on this loop
            await asyncio.sleep(0.05)
            return texts

        with caplog.at_level(logging.ERROR, logger="asyncio"):
            assert asyncio.run(streams()) == [f"a{i}" for i in range(5)]
            gc.collect()
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


def test_a_stalled_sync_drain_ends_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drains, "DRAIN_SECONDS", 0.1)
    with running(EchoServer(stall_after_done=True)) as server:
        model = _stalling_model(server.url)  # read timeout 10 s: only the deadline ends the read
        assert _streamed(model, "once") == "once"
        pool = model._transport()._pool()
        assert pool.admission.in_flight == 1  # the drain holds the slot until the connection...
        _wait_for_background_drains()
        assert pool.drains.active == 0
        assert pool.admission.in_flight == 0  # ...is given back


# -- an interruption (Ctrl-C) anywhere leaves nothing behind ----------------------------------


async def test_an_interrupted_stream_leaves_no_slot_and_no_connection(mode: str) -> None:
    log: list[str] = []
    transport = _transport([EVENT, EVENT, DONE], log)

    async def interrupted() -> None:
        if mode == "sync":
            with transport.stream_events(PATH, BODY) as events:
                for _ in events:
                    raise KeyboardInterrupt
        else:
            async with transport.astream_events(PATH, BODY) as aevents:
                async for _ in aevents:
                    raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await interrupted()
    assert log == ["connection given back"]
    assert transport._pool().admission.in_flight == 0


def test_an_interrupted_wait_for_a_slot_leaves_the_queue() -> None:
    """Ctrl-C while a sync call waits in the pool's queue: it leaves the queue, so the slot freed
    later goes to the next call instead of to nobody (the async twin handles cancellation)."""

    class Interrupted(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            raise KeyboardInterrupt

    pool = admission.Admission(1, adaptive=False, clock=time.monotonic)
    holder = pool.call(5).enter(lambda _: None)
    original = admission.threading.Event
    admission.threading.Event = Interrupted  # type: ignore[misc]
    try:
        with pytest.raises(KeyboardInterrupt):
            pool.call(5).enter(lambda _: None)
    finally:
        admission.threading.Event = original  # type: ignore[misc]
    holder.release()
    assert pool.in_flight == 0
    assert "queued=0" in repr(pool)
    assert pool.call(0.5).enter(lambda _: None) is not None  # the next call gets the slot


def test_a_drain_never_cuts_a_connection_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream read to the end of its body has given its connection back (httpcore releases it
    when the body ends, or when the body generator is closed): no drain may shut it down later,
    while it serves the next request (seen as 'connection reset' on the next call)."""
    monkeypatch.setattr(drains, "DRAIN_SECONDS", 0.2)
    hold = threading.Event()
    with running(EchoServer()) as server:
        server.on_request = lambda body: (
            hold.wait(1) if body["messages"][-1]["content"] == "slow" else None
        )
        model = _stalling_model(server.url)
        for i in range(3):  # streams read to the end: each connection goes back to the pool
            with model._transport().stream_events(
                PATH,
                {
                    "model": "kimi-k3.1-pro",
                    "stream": True,
                    "messages": [{"role": "user", "content": f"s{i}"}],
                },
            ) as events:
                # Read to the body's end: the echo's chunks, then [DONE].
                assert [data for _, data in events][-1] == "[DONE]"
        # The next call reuses a connection and is still being answered when the deadlines pass.
        assert model.invoke("slow").content == "slow"
