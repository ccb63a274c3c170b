"""Messages SSE events -> `AIMessageChunk`s. Stateful, no I/O (`_http/sse.py` parses the lines).

Summing every chunk gives what `parse_response` gives for the same reply: text and reasoning
arrive as deltas; each complete block is emitted once, at its `content_block_stop`, in
`anthropic_blocks` (and `thinking_blocks`); usage and finish metadata come once, on the last chunk.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from langchain_core.messages import AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk

from langchain_kimi import _json as fast_json
from langchain_kimi._contract import ANTHROPIC_BLOCKS, PROVIDER, REASONING, THINKING_BLOCKS
from langchain_kimi._errors import KimiStreamError
from langchain_kimi._json import MAX_DEPTH
from langchain_kimi.protocols.anthropic_messages.content import THINKING_TYPES
from langchain_kimi.protocols.anthropic_messages.response import (
    finish_metadata,
    message_metadata,
    usage_from_anthropic,
)
from langchain_kimi.protocols.json_events import JsonEventDecoder

logger = logging.getLogger("langchain_kimi")

_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use"})
_UNNAMED = ("", "message")
"""Events without an `event:` line: the payload's `type` names them."""


class StreamDecoder(JsonEventDecoder):
    """Decoder for one streamed Messages reply: `feed` each SSE event, then `finish`."""

    wire_name = "Messages stream"
    end_event = "message_stop"

    def __init__(self, requested_model: str | None = None) -> None:
        super().__init__()
        self._requested_model = requested_model
        self._id: str | None = None
        self._model: str | None = None
        self._blocks: dict[int, dict[str, Any]] = {}
        self._complete: list[dict[str, Any]] = []
        self._partial_json: dict[int, str] = {}
        self._usage: dict[str, Any] = {}
        self._stop_reason: Any = None
        self._stop_sequence: Any = None

    def reply(self) -> dict[str, Any]:
        """The reply so far as a Messages body (complete content blocks only)."""
        return {
            "id": self._id,
            "type": "message",
            "role": "assistant",
            "model": self._model,
            "content": list(self._complete),
            "stop_reason": self._stop_reason,
            "stop_sequence": self._stop_sequence,
            "usage": dict(self._usage),
        }

    # -- the shared decoder's hooks -------------------------------------------------------

    def _on_payload(self, event: str, payload: Any) -> list[AIMessageChunk]:
        if event in _UNNAMED and isinstance(payload, dict):
            event = str(payload.get("type") or "")  # no `event:` line: the type names it
        if event == "error":
            self._raise_error(payload)
        handler = _HANDLERS.get(event)
        if handler is None or not isinstance(payload, dict):
            return []
        return handler(self, payload)

    def finish(self) -> list[AIMessageChunk]:
        """[] after `message_stop`; the last chunk when the body ended after a `message_delta`
        with a `stop_reason`; otherwise the stream was cut: `KimiStreamError` (the stream plan
        attaches what arrived).

        The documents say the events "suele incluir" (usually include) `message_stop`: once the
        stop reason arrived, the reply is complete without it.
        """
        if self.ended:
            return []
        if self._stop_reason is not None:
            logger.debug("Messages stream ended after message_delta without message_stop")
            return self._on_message_stop({})
        msg = "stream ended before message_stop (no message_delta with a stop_reason arrived)"
        raise KimiStreamError(msg)

    # -- helpers --------------------------------------------------------------------------

    def _chunk(self, **kwargs: Any) -> AIMessageChunk:
        kwargs.setdefault("content", "")
        # `model_provider` goes on every chunk: langchain-core picks the content-block translator
        # per chunk from it (v1 output), and merges equal values of this key without
        # concatenating. Every other metadata key is emitted once.
        kwargs["response_metadata"] = {
            **kwargs.get("response_metadata", {}),
            "model_provider": PROVIDER,
        }
        return AIMessageChunk(id=self._id, **kwargs)

    def _block(self, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        index = payload.get("index")
        if not isinstance(index, int) or index not in self._blocks:
            msg = f"{payload.get('type')} for unknown content block index {index!r}"
            raise KimiStreamError(msg)
        return index, self._blocks[index]

    # -- events ---------------------------------------------------------------------------

    def _on_message_start(self, payload: dict[str, Any]) -> list[AIMessageChunk]:
        message = payload.get("message")
        message = message if isinstance(message, dict) else {}
        self._id = message.get("id")
        self._model = message.get("model")
        if isinstance(message.get("usage"), dict):
            self._usage = dict(message["usage"])
        meta = message_metadata(message.get("id"), message.get("model"))
        return [self._chunk(response_metadata=meta)]

    def _on_block_start(self, payload: dict[str, Any]) -> list[AIMessageChunk]:
        index = payload.get("index")
        block = payload.get("content_block")
        if not isinstance(index, int) or not isinstance(block, dict):
            msg = "content_block_start without an index or content_block"
            raise KimiStreamError(msg)
        block = dict(block)
        self._blocks[index] = block
        self._partial_json[index] = ""
        kind = block.get("type")
        # Some servers put initial text/thinking in the start event: it is content too.
        if kind == "text" and block.get("text"):
            return [self._chunk(content=block["text"])]
        if kind == "thinking" and block.get("thinking"):
            return [self._chunk(additional_kwargs={REASONING: block["thinking"]})]
        if kind == "tool_use":
            call = tool_call_chunk(name=block.get("name"), id=block.get("id"), args="", index=index)
            return [self._chunk(tool_call_chunks=[call])]
        return []

    def _on_block_delta(self, payload: dict[str, Any]) -> list[AIMessageChunk]:
        index, block = self._block(payload)
        delta = payload.get("delta")
        delta = delta if isinstance(delta, dict) else {}
        kind = delta.get("type")
        if kind == "text_delta":
            text = str(delta.get("text") or "")
            block["text"] = str(block.get("text") or "") + text
            return [self._chunk(content=text)] if text else []
        if kind == "thinking_delta":
            text = str(delta.get("thinking") or "")
            block["thinking"] = str(block.get("thinking") or "") + text
            if not text:
                return []
            return [self._chunk(additional_kwargs={REASONING: text})]
        if kind == "signature_delta":
            block["signature"] = str(block.get("signature") or "") + str(
                delta.get("signature") or ""
            )
        elif kind == "citations_delta":
            citations = block.get("citations")
            block["citations"] = [*(citations or []), delta.get("citation")]
        elif kind == "input_json_delta":
            piece = str(delta.get("partial_json") or "")
            self._partial_json[index] += piece
            if piece and block.get("type") == "tool_use":
                call = tool_call_chunk(name=None, id=None, args=piece, index=index)
                return [self._chunk(tool_call_chunks=[call])]
        return []

    def _on_block_stop(self, payload: dict[str, Any]) -> list[AIMessageChunk]:
        index, block = self._block(payload)
        del self._blocks[index]
        partial = self._partial_json.pop(index, "")
        chunks: list[AIMessageChunk] = []
        if block.get("type") in _INPUT_BLOCKS:
            if partial.strip():
                try:
                    block["input"] = fast_json.loads(partial, max_depth=MAX_DEPTH)
                except ValueError:
                    # Broken JSON from the service: the tool call chunks carry the raw text, and
                    # LangChain turns it into an invalid_tool_call.
                    block["input"] = {}
            elif block.get("input") and block.get("type") == "tool_use":
                # The whole input came in the start event (no deltas): stream it as args now.
                args = json.dumps(block["input"])
                call = tool_call_chunk(name=None, id=None, args=args, index=index)
                chunks.append(self._chunk(tool_call_chunks=[call]))
            elif block.get("input") is None:
                block["input"] = {}
        self._complete.append(block)
        extra: dict[str, Any] = {ANTHROPIC_BLOCKS: [block]}
        if block.get("type") in THINKING_TYPES:
            extra[THINKING_BLOCKS] = [block]
        chunks.append(self._chunk(additional_kwargs=extra))
        return chunks

    def _on_message_delta(self, payload: dict[str, Any]) -> list[AIMessageChunk]:
        delta = payload.get("delta")
        if isinstance(delta, dict):
            if delta.get("stop_reason") is not None:
                self._stop_reason = delta["stop_reason"]
            if delta.get("stop_sequence") is not None:
                self._stop_sequence = delta["stop_sequence"]
        usage = payload.get("usage")
        if isinstance(usage, dict):
            # Later values override earlier ones field by field (message_start had estimates).
            self._usage.update({k: v for k, v in usage.items() if v is not None})
        return []

    def _on_message_stop(self, _payload: dict[str, Any]) -> list[AIMessageChunk]:
        self._end()
        usage = self._usage or None
        meta = finish_metadata(self._stop_reason, self._stop_sequence, usage)
        return [
            self._chunk(
                response_metadata=meta,
                usage_metadata=(
                    usage_from_anthropic(
                        usage, model=self._model, requested_model=self._requested_model
                    )
                    if usage
                    else None
                ),
                chunk_position="last",
            )
        ]


_HANDLERS = {
    "message_start": StreamDecoder._on_message_start,
    "content_block_start": StreamDecoder._on_block_start,
    "content_block_delta": StreamDecoder._on_block_delta,
    "content_block_stop": StreamDecoder._on_block_stop,
    "message_delta": StreamDecoder._on_message_delta,
    "message_stop": StreamDecoder._on_message_stop,
}
# `ping` keeps the connection alive; unknown events are ignored (the protocol may add new ones).
StreamDecoder.data_events = frozenset({*_HANDLERS, "error", *_UNNAMED})
