"""A reply is parsed from the bytes that arrived: orjson reads UTF-8 itself, so a long reply (10 MB
of reasoning) is not first decoded to a text that orjson would encode back. Only an error's text
is decoded, as UTF-8 whatever the charset says, what does not decode becoming U+FFFD.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from langchain_kimi import KimiAPIError, KimiConnectionError, KimiStreamError, _json
from langchain_kimi._http.limits.retry import Failure
from langchain_kimi._http.replies import json_body_or_error, judge_reply
from langchain_kimi.testing import FakeKimiGateway

KEY = "sk-test-SECRET-5d0c"
JSON = {"content-type": "application/json; charset=latin-1"}


def _reply(content: str) -> bytes:
    message = {"role": "assistant", "content": content, "reasoning_content": "r" * 1000}
    body = {"id": "c1", "object": "chat.completion", "created": 1, "model": "kimi-k3"}
    body["choices"] = [{"index": 0, "finish_reason": "stop", "message": message}]
    return json.dumps(body, ensure_ascii=False).encode()


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_reply_is_parsed_from_its_bytes(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    parsed: list[type] = []
    real = _json.orjson.loads

    def recording(data: Any) -> Any:
        parsed.append(type(data))
        return real(data)

    monkeypatch.setattr(_json.orjson, "loads", recording)
    gw = FakeKimiGateway()
    gw.add_raw(httpx.Response(200, content=_reply("Grüße ✓"), headers=JSON))
    model = gw.chat_model(protocol="openai")
    reply = model.invoke("hi") if mode == "invoke" else await model.ainvoke("hi")
    assert reply.content == "Grüße ✓"
    assert parsed == [bytes]


def test_bytes_that_are_not_utf8_are_read_with_replacement_characters() -> None:
    body = _reply("caf\u00e9").replace("é".encode(), b"\xe9")
    gw = FakeKimiGateway()
    gw.add_raw(httpx.Response(200, content=body, headers=JSON))
    assert gw.chat_model(protocol="openai").invoke("hi").content == "caf\ufffd"


def _judge(status: int, body: bytes, **kwargs: Any) -> Any:
    return judge_reply(
        status,
        {"x-request-id": "req-3", **JSON},
        body,
        kwargs.pop("read_error", None),
        "h",
        stream=kwargs.pop("stream", False),
        secret=KEY,
    )


def test_the_texts_of_errors_are_decoded_from_the_bytes() -> None:
    refused = _judge(500, b'{"error": {"message": "na\xc3\xafve \xff ' + KEY.encode() + b'"}}')
    assert isinstance(refused, Failure)
    assert refused.error.message == "na\u00efve \ufffd ***"
    assert refused.error.request_id == "req-3"

    cut = _judge(200, b'{"id": "\xc3\xa9', read_error=httpx.ReadError("reset"))
    assert cut.error.body == '{"id": "\u00e9'
    assert isinstance(cut.error, KimiConnectionError)
    assert cut.error.message == "the connection to h dropped mid-response (ReadError: reset)"

    not_a_stream = _judge(200, b'{"error": {"message": "caf\xc3\xa9"}}', stream=True)
    assert not_a_stream.error.message == "caf\u00e9"

    html = judge_reply(
        200, {"content-type": "text/html"}, b"<p>\xc3\xa9</p>", None, "h", stream=True, secret=KEY
    )
    assert (
        html.error.message
        == "expected an event stream from h, got HTTP 200 text/html: <p>\u00e9</p>"
    )
    bare = judge_reply(200, {}, b"hello", None, "h", stream=True, secret=KEY)
    assert bare.error.message == "expected an event stream from h, got HTTP 200 (none): hello"

    not_json = _judge(200, b"<html>\xc3\xa9 " + KEY.encode() + b"</html>")
    assert isinstance(not_json.error, KimiAPIError)
    assert not_json.error.message == (
        "h answered HTTP 200 with a body that is not a JSON object: <html>\u00e9 ***</html>"
    )
    assert not_json.error.status_code == 200

    error_body = _judge(200, b'{"error": {"message": "caf\xc3\xa9 ' + KEY.encode() + b'"}}')
    assert error_body.error.message == "caf\u00e9 ***"
    assert error_body.error.request_id == "req-3"


def test_a_reply_read_as_text_is_judged_the_same() -> None:
    body = '{"id": "caf\u00e9"}'
    assert json_body_or_error(body, "h", 200, None, secret=KEY) == {"id": "caf\u00e9"}
    assert json_body_or_error(body.encode(), "h", 200, None, secret=KEY) == {"id": "caf\u00e9"}
    text_error = json_body_or_error("[1]", "h", 200, None, secret=KEY)
    assert isinstance(text_error, KimiAPIError)
    assert text_error.message == "h answered HTTP 200 with a body that is not a JSON object: [1]"
    assert not isinstance(text_error, KimiStreamError)


class Pieces(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body in several pieces, then (optionally) a dropped connection."""

    def __init__(self, pieces: list[bytes], cut: bool = False) -> None:
        self.pieces = pieces
        self.cut = cut

    def __iter__(self) -> Any:
        yield from self.pieces
        if self.cut:
            raise httpx.ReadError("reset")

    async def __aiter__(self) -> Any:
        for piece in self.pieces:
            yield piece
        if self.cut:
            raise httpx.ReadError("reset")


def _pieces(body: bytes, size: int = 7) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_reply_in_pieces_is_read_whole(mode: str) -> None:
    gw = FakeKimiGateway()
    stream = Pieces(_pieces(_reply("Grüße ✓")))
    gw.add_raw(httpx.Response(200, headers=JSON, stream=stream))
    model = gw.chat_model(protocol="openai")
    reply = model.invoke("hi") if mode == "invoke" else await model.ainvoke("hi")
    assert reply.content == "Grüße ✓"


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_reply_cut_keeps_what_arrived_in_pieces(mode: str) -> None:
    gw = FakeKimiGateway()
    stream = Pieces(_pieces(b'{"id": "caf\xc3\xa9", "choices": ['), cut=True)
    gw.add_raw(httpx.Response(200, headers=JSON, stream=stream))
    model = gw.chat_model(protocol="openai")
    with pytest.raises(KimiConnectionError) as caught:
        _ = model.invoke("hi") if mode == "invoke" else await model.ainvoke("hi")
    assert caught.value.body == '{"id": "caf\u00e9", "choices": ['
