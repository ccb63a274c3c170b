"""The words of the transport's errors, each case word for word: what failed (a reply or a
stream), how (dropped, undecodable, timed out), and the httpx error it came from (its name alone
when it has no message). And the deadlines of `docs/errors.md` name what was late."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from langchain_kimi import ChatKimi, KimiTimeoutError
from langchain_kimi._http.replies import (
    error_after_response,
    failure_before_response,
    is_event_stream,
)
from langchain_kimi.testing import FakeKimiGateway

KEY = "sk-test-SECRET-5d0c"


@pytest.mark.parametrize(
    ("exc", "streaming", "words"),
    [
        (httpx.DecodingError("bad gzip"), False, "the reply from h could not be decoded"),
        (httpx.DecodingError("bad gzip"), True, "the stream from h could not be decoded"),
        (httpx.ReadTimeout("slow"), False, "no data from h within the read timeout"),
        (httpx.ReadTimeout("slow"), True, "no stream data from h within the read timeout"),
        (httpx.ReadError("reset"), False, "the connection to h dropped mid-response"),
        (httpx.ReadError("reset"), True, "the connection to h dropped mid-stream"),
    ],
)
def test_an_error_after_the_response_word_for_word(
    exc: Exception, streaming: bool, words: str
) -> None:
    error = error_after_response(exc, "h", secret=KEY, streaming=streaming)  # type: ignore[arg-type]
    assert error.message == f"{words} ({type(exc).__name__}: {exc})"


def test_an_httpx_error_without_words_is_named_alone() -> None:
    error = error_after_response(httpx.ReadError(""), "h", secret=KEY, streaming=True)
    assert error.message == "the connection to h dropped mid-stream (ReadError)"
    before = failure_before_response(httpx.ConnectError(""), "h", secret=KEY)
    assert before.error.message == "could not reach h (ConnectError)"
    timed_out = failure_before_response(httpx.ConnectTimeout(""), "h", secret=KEY)
    assert timed_out.error.message == "timed out talking to h (ConnectTimeout)"
    # Only the separator is stripped, not the message's own last letters.
    proxy = error_after_response(httpx.ReadError("MUX"), "h", secret=KEY, streaming=True)
    assert proxy.message == "the connection to h dropped mid-stream (ReadError: MUX)"
    refused = failure_before_response(httpx.ConnectError("BOX"), "h", secret=KEY)
    assert refused.error.message == "could not reach h (ConnectError: BOX)"


def test_only_the_media_type_says_event_stream() -> None:
    assert is_event_stream({"content-type": "Text/Event-Stream; charset=utf-8"})
    assert not is_event_stream({"content-type": "text/plain; note=text/event-stream"})
    assert not is_event_stream({})


class Slow(httpx.SyncByteStream, httpx.AsyncByteStream):
    """Pieces of a body (or of a stream), each `gap` seconds after the previous one."""

    def __init__(self, pieces: list[bytes], gap: float) -> None:
        self.pieces = pieces
        self.gap = gap

    def __iter__(self) -> Iterator[bytes]:
        for piece in self.pieces:
            time.sleep(self.gap)
            yield piece

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            await asyncio.sleep(self.gap)
            yield piece


REPLY = b'{"id": "c1", "choices": []}'
EVENTS = [b'data: {"id": "c1", "choices": [{"index": 0, "delta": {"content": "a"}}]}\n\n']
EVENTS += [b'data: {"id": "c1", "choices": [{"index": 0, "del', b"ta", b"}]}\n\n"]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_body_late_as_a_whole_names_its_deadline(mode: str) -> None:
    gw = FakeKimiGateway()
    pieces = [REPLY[i : i + 4] for i in range(0, len(REPLY), 4)]
    gw.add_raw(httpx.Response(200, stream=Slow(pieces, 0.02)))
    model = gw.chat_model(protocol="openai", timeout=httpx.Timeout(5.0, read=0.05))
    with pytest.raises(KimiTimeoutError) as caught:
        _ = model.invoke("hi") if mode == "sync" else await model.ainvoke("hi")
    assert caught.value.message == (
        "no data from direct.evolink.ai within the read timeout"
        " (ReadTimeout: the reply was not complete within 0.05 s)"
    )


async def _read_all(model: ChatKimi, mode: str) -> None:
    if mode == "sync":
        list(model.stream("hi"))
    else:
        _ = [chunk async for chunk in model.astream("hi")]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_an_event_late_as_a_whole_names_its_deadline(mode: str) -> None:
    gw = FakeKimiGateway()
    headers = {"content-type": "text/event-stream"}
    gw.add_raw(httpx.Response(200, headers=headers, stream=Slow(EVENTS, 0.03)))
    model = gw.chat_model(protocol="openai", timeout=httpx.Timeout(5.0, read=0.05))
    with pytest.raises(KimiTimeoutError) as caught:
        await _read_all(model, mode)
    assert caught.value.message == (
        "no stream data from direct.evolink.ai within the read timeout"
        " (ReadTimeout: no complete event within 0.05 s)"
    )
