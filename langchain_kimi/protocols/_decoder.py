"""What both stream decoders share: one SSE event's JSON, error events, and the end of a reply.

A subclass says which events carry reply data (`_wants`) and turns one parsed payload into
chunks (`_on_payload`); it calls `_end()` when its protocol's end event arrives. Decoders keep
reply state only: what the caller has seen is kept by the stream plan (`_rounds.StreamPlan`).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessageChunk

from langchain_kimi import _json as fast_json
from langchain_kimi._errors import KimiStreamError, error_from_stream_payload


class JsonEventDecoder:
    """SSE events whose `data` is JSON -> chunks; no I/O."""

    wire_name = "stream"
    """How error messages name this protocol's stream."""
    end_event = "the end event"
    """How error messages name this protocol's end event."""

    def __init__(self) -> None:
        self._ended = False

    @property
    def ended(self) -> bool:
        """Whether the protocol's end event arrived (later events are ignored)."""
        return self._ended

    def feed(self, event: str, data: str) -> list[AIMessageChunk]:
        """Chunks for one SSE event (`event` name, raw `data` text); a typed error for an error
        payload, `KimiStreamError` for data that is not JSON."""
        if self._ended or not self._wants(event, data):
            return []
        try:
            payload = fast_json.loads(data)
        except ValueError as exc:
            msg = f"malformed JSON in {self._describe(event)}: {data[:200]!r} ({exc})"
            raise KimiStreamError(msg) from exc
        if self._is_error(event, payload):
            raise error_from_stream_payload(payload)
        return self._on_payload(event, payload)

    def finish(self) -> list[AIMessageChunk]:
        """Call when the stream closed: [] after the end event, else `KimiStreamError`."""
        if not self._ended:
            raise KimiStreamError(f"stream ended before {self.end_event}")
        return []

    # -- for subclasses ------------------------------------------------------------------

    def _end(self) -> None:
        self._ended = True

    def _wants(self, event: str, data: str) -> bool:
        """Whether this event carries reply data (keep-alives and unknown events do not)."""
        return True

    def _describe(self, event: str) -> str:
        return f"{self.wire_name} event {event or 'message'!r}"

    def _is_error(self, event: str, payload: Any) -> bool:
        return event == "error"

    def _on_payload(self, event: str, payload: Any) -> list[AIMessageChunk]:
        raise NotImplementedError
