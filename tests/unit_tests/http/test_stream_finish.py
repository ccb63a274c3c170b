"""What happens after a stream's end event, the same in the sync and async halves.

- a loop's client is given back once the connection is (body drained or connection closed),
  never before: a client idle too long is closed, so it must not count as idle while in use;
- the event generators are closed when the stream is, in both halves;
- the rest of the body is drained within bounds (time, stray events, sync drains at once), so a
  server that keeps the body open after `[DONE]` cannot hold the connections;
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
from langchain_kimi._http import drain as drains
from langchain_kimi._http._async import exchange as async_exchange
from langchain_kimi._http._sync import exchange as sync_exchange
from langchain_kimi._http.limits.gate import Gate, wait_turn
from langchain_kimi._http.pool import clients
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
async def test_a_loops_client_is_given_back_after_the_connection(
    stop_after: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    log: list[str] = []
    real_give_back = clients.LoopClients._give_back

    def give_back(self: clients.LoopClients, client: httpx.AsyncClient) -> None:
        log.append("client given back")
        real_give_back(self, client)

    monkeypatch.setattr(clients.LoopClients, "_give_back", give_back)
    response = httpx.Response(200, headers=SSE, stream=Body([EVENT, DONE, EVENT], log))
    fake_transport.our_clients_answered_by(monkeypatch, lambda request: response)
    transport = Transport(
        fake_transport.transport_config(
            "https://gw.example", None, fake_transport.SecretStr(KEY), httpx.Timeout(5.0)
        )
    )
    await _read(transport, "async", stop_after=stop_after)
    assert log == ["connection given back", "client given back"]
    entry = transport._shared().clients._loops[asyncio.get_running_loop()]()
    assert entry is not None
    assert entry.in_use == 0
    assert len(entry.idle._idle) == 1  # kept for the next call


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
            assert drains.running() <= drains.DRAINS
        assert model.invoke("after").content == "after"


def test_a_sync_stream_draining_in_the_background_keeps_its_client_until_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each client holds one connection: given back while its drain still reads, it would make
    # the next call wait for that connection (here past the 2 s pool timeout).
    _wait_for_background_drains()
    monkeypatch.setattr(drains, "DRAIN_SECONDS", 3.0)
    with running(EchoServer(stall_after_done=True)) as server:
        model = _stalling_model(server.url)
        assert _streamed(model, "first") == "first"
        assert _streamed(model, "second") == "second"
        assert drains.running() == 2  # both still draining, each on its own connection
    _wait_for_background_drains()
    assert drains.running() == 0


def test_the_drain_bounds_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    _wait_for_background_drains()  # the drains of the tests before
    # No room for a drain at all: every connection is closed at once.
    monkeypatch.setattr(drains, "_room", threading.BoundedSemaphore(0))
    with running(EchoServer(stall_after_done=True)) as server:
        model = _stalling_model(server.url)
        for i in range(3):
            assert _streamed(model, f"s{i}") == f"s{i}"
            assert not any(t.name == "langchain-kimi-drain" for t in threading.enumerate())


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
        assert drains.running() == 1  # the drain runs on, after the caller has its answer...
        _wait_for_background_drains()
        assert drains.running() == 0  # ...and ends at its deadline, long before the read timeout


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


def test_an_interrupted_wait_for_a_turn_leaves_the_queue() -> None:
    """Ctrl-C while a sync call waits in its key's queue: it leaves the queue, so the next call
    is served instead of waiting behind nobody (the async twin handles cancellation)."""

    def interrupted(seconds: float) -> None:
        raise KeyboardInterrupt

    gate = Gate(time.monotonic)
    wait_turn(gate, gate.ticket(), time.monotonic() + 5)  # the first send: the next one is spaced
    with pytest.raises(KeyboardInterrupt):
        wait_turn(gate, gate.ticket(), time.monotonic() + 5, interrupted)
    assert gate.queued == 0
    assert wait_turn(gate, gate.ticket(), time.monotonic() + 5) is not None


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


def test_a_drain_that_cannot_get_a_thread_closes_and_gives_the_client_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _wait_for_background_drains()

    class NoThread(threading.Thread):
        def start(self) -> None:
            raise RuntimeError("can't start new thread")

    class DrainsThreading:  # the drain module's view of `threading`: no thread can start
        Lock = threading.Lock
        Timer = threading.Timer
        Thread = NoThread

    with running(EchoServer(stall_after_done=True)) as server:
        model = _stalling_model(server.url)
        monkeypatch.setattr(drains, "threading", DrainsThreading)
        with pytest.raises(RuntimeError, match="can't start new thread"):
            _streamed(model, "first")
        monkeypatch.undo()
        assert drains.running() == 0  # its room was released
        idle = fake_transport.idle_clients(model._transport())
        assert len(idle) == 1  # given back (its connection closed, not drained)
        assert _streamed(model, "second") == "second"
    _wait_for_background_drains()
