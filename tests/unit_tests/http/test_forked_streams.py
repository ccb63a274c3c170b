"""A stream begun in one process is read in that process only.

A forked child copies its parent's open stream, connection included: if both went on reading,
each would take part of the bytes, and whichever read the end would return normally with chunks
missing. So the process is checked where the stream reads its next bytes: read in another process
than the one that began it, the stream reads nothing and fails with `KimiForkedStreamError`.
"""

from __future__ import annotations

import json
import os
import select
import threading
from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from langchain_kimi import ChatKimi, KimiForkedStreamError, KimiStreamError
from langchain_kimi._http import event_stream
from langchain_kimi._http._async import reading as async_reading
from langchain_kimi._http._sync import reading as sync_reading
from langchain_kimi.testing import FakeKimiGateway
from tests.support.loopback import LoopbackServer, QuietHandler, running

KEY = "sk-fork-test-0123456789"
HEAD = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "kimi-k3"}


def _event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {**HEAD, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


WORDS = [f"w{n} " for n in range(10)]
EVENTS = [_event({"role": "assistant", "content": WORDS[0]})]
EVENTS += [_event({"content": word}) for word in WORDS[1:]]
EVENTS += [_event({}, "stop"), b"data: [DONE]\n\n"]


class Pulls(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body of one event per read, counting the reads."""

    def __init__(self) -> None:
        self.reads = 0

    def __iter__(self) -> Iterator[bytes]:
        for event in EVENTS:
            self.reads += 1
            yield event

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in EVENTS:
            self.reads += 1
            yield event


def _another_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on the stream's loops see another process id (what a fork's child sees)."""
    other = SimpleNamespace(getpid=lambda: os.getpid() + 1)
    monkeypatch.setattr(sync_reading, "os", other)
    monkeypatch.setattr(async_reading, "os", other)


def _gateway(body: Pulls) -> FakeKimiGateway:
    gw = FakeKimiGateway()
    gw.add_raw(httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body))
    return gw


def _check(error: KimiForkedStreamError, body: Pulls, seen: list[str]) -> None:
    assert isinstance(error, KimiStreamError)
    assert error.message == (
        f"the stream was begun in another process (pid {os.getpid()}, this is {os.getpid()}) and"
        " shares its connection: read a stream where it began, start the call again here"
    )
    assert body.reads == 2  # nothing was read once in the other process
    assert error.partial is not None
    assert error.partial.content == "".join(seen)


def test_a_stream_read_in_another_process_reads_nothing_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = Pulls()
    chunks = _gateway(body).chat_model(protocol="openai").stream("hi")
    seen = [str(next(chunks).content) for _ in range(2)]
    _another_process(monkeypatch)
    with pytest.raises(KimiForkedStreamError) as caught:
        next(chunks)
    _check(caught.value, body, seen)


async def test_an_async_stream_read_in_another_process_reads_nothing_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = Pulls()
    chunks = _gateway(body).chat_model(protocol="openai").astream("hi")
    seen = [str((await anext(chunks)).content) for _ in range(2)]
    _another_process(monkeypatch)
    with pytest.raises(KimiForkedStreamError) as caught:
        await anext(chunks)
    _check(caught.value, body, seen)


async def test_the_drain_after_the_end_reads_nothing_in_another_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    closed: list[bool] = []

    async def close() -> None:
        closed.append(True)

    async def events() -> AsyncIterator[Any]:
        raise KimiForkedStreamError("begun elsewhere")
        yield  # pragma: no cover - a generator

    await event_stream.adrain_then_close(events(), close, httpx.Response(200))
    assert closed == [True]


def test_the_forked_error_survives_pickling() -> None:
    import pickle

    error = KimiForkedStreamError.begun_in(1)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is KimiForkedStreamError
    assert again.message == error.message


# -- a real fork -----------------------------------------------------------------------------


class Held(QuietHandler):
    """Sends the first events, then the rest once the test says so."""

    server: HeldServer

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(sum(len(e) for e in EVENTS)))
        self.end_headers()
        try:
            for number, event in enumerate(EVENTS):
                if number == 4:
                    self.wfile.flush()
                    self.server.go.wait(10)
                self.wfile.write(event)
            self.wfile.flush()
        except OSError:
            return
        self.close_connection = True


class HeldServer(LoopbackServer):
    def __init__(self) -> None:
        super().__init__(Held)
        self.go = threading.Event()


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
@pytest.mark.timeout(30)
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_fails_and_its_parent_reads_the_whole_stream() -> None:
    with running(HeldServer()) as server:
        assert isinstance(server, HeldServer)
        model = ChatKimi(api_key=KEY, base_url=server.url, protocol="openai", max_retries=0)
        chunks = model.stream("hi")
        seen = [str(next(chunks).content) for _ in range(2)]
        read_end, write_end = os.pipe()
        child = os.fork()
        if child == 0:  # pragma: no cover - the child's report goes through the pipe
            try:
                rest = [str(c.content) for c in chunks]
                report = f"read {len(rest)} chunks"
            except KimiForkedStreamError:
                report = "KimiForkedStreamError"
            except BaseException as exc:
                report = repr(exc)
            os.write(write_end, report.encode())
            os._exit(0)
        os.close(write_end)
        ready, _, _ = select.select([read_end], [], [], 5.0)
        report = os.read(read_end, 1000).decode() if ready else "(the child is still reading)"
        server.go.set()
        seen += [str(c.content) for c in chunks]
        os.waitpid(child, 0)
        os.close(read_end)
    assert report == "KimiForkedStreamError"
    assert "".join(seen) == "".join(WORDS)
