"""A Messages stream that ends without `message_stop` (issue 11 item 2).

000 / 001: "La secuencia de eventos suele incluir message_start, content_block_*, message_delta
y message_stop" -- usually, not always. Once `message_delta` with a `stop_reason` arrived, the end
of the body completes the message; a stream cut before any `message_delta` is still an error.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from langchain_kimi import KimiStreamError
from langchain_kimi.protocols.anthropic_messages import StreamDecoder, parse_response
from langchain_kimi.testing import FakeKimiGateway

USAGE = {"input_tokens": 12, "output_tokens": 3}


def events(*, with_delta: bool) -> list[tuple[str, str]]:
    items: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_e",
                "model": "kimi-k3.1-pro",
                "content": [],
                "usage": {"input_tokens": 12, "output_tokens": 0},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "OK"}},
        {"type": "content_block_stop", "index": 0},
    ]
    if with_delta:
        items.append(
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": USAGE}
        )
    return [(item["type"], json.dumps(item)) for item in items]


def run(decoder: StreamDecoder, items: list[tuple[str, str]]) -> list[Any]:
    chunks = [c for event, data in items for c in decoder.feed(event, data)]
    return chunks + decoder.finish()


def test_end_after_message_delta_completes_the_message(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="langchain_kimi"):
        chunks = run(StreamDecoder(), events(with_delta=True))
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    expected = parse_response(
        {
            "id": "msg_e",
            "model": "kimi-k3.1-pro",
            "content": [{"type": "text", "text": "OK"}],
            "stop_reason": "end_turn",
            "usage": USAGE,
        }
    )
    assert chunks[-1].chunk_position == "last"
    assert total.content == expected.content
    assert total.usage_metadata == expected.usage_metadata
    assert total.response_metadata["finish_reason"] == "stop"
    assert total.response_metadata["usage"] == USAGE
    assert any(
        "message_stop" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records
    )


def sse(items: list[tuple[str, str]]) -> str:
    return "".join(f"event: {event}\ndata: {data}\n\n" for event, data in items)


def test_cut_before_message_delta_is_a_stream_error() -> None:
    with pytest.raises(KimiStreamError, match="message_stop"):
        run(StreamDecoder(), events(with_delta=False))
    # What arrived is kept by the stream plan (decoders keep reply state only).
    gateway = FakeKimiGateway().add_raw(sse(events(with_delta=False)))
    with pytest.raises(KimiStreamError, match="message_stop") as caught:
        list(gateway.chat_model(protocol="anthropic").stream("hi"))
    assert caught.value.partial is not None
    assert caught.value.partial.content == "OK"


def test_message_delta_without_stop_reason_is_not_an_end() -> None:
    items = events(with_delta=False)
    partial_delta = {"type": "message_delta", "delta": {}, "usage": USAGE}
    items.append(("message_delta", json.dumps(partial_delta)))
    with pytest.raises(KimiStreamError):
        run(StreamDecoder(), items)
