"""What both stream decoders share: one SSE event's JSON, error events, and the end of a reply.

A subclass says which events carry reply data (`data_events`) and turns one parsed payload into
chunks (`_on_payload`); it calls `_end()` when its protocol's end event arrives. Decoders keep
reply state only: what the caller has seen is kept by the stream plan (`_call.plans.StreamPlan`).
"""

from __future__ import annotations

from typing import Any, NoReturn

from langchain_core.messages import AIMessageChunk

from langchain_kimi import _json as fast_json
from langchain_kimi._errors import KimiStreamError, error_from_stream_payload


class JsonEventDecoder:
    """SSE events whose `data` is JSON -> chunks; no I/O."""

    wire_name = "stream"
    """How error messages name this protocol's stream."""
    end_event = "the end event"
    """How error messages name this protocol's end event."""
    data_events: frozenset[str] = frozenset()
    """Event names that carry reply data; others (keep-alives, unknown events) are ignored."""

    def __init__(self) -> None:
        self._ended = False

    @property
    def ended(self) -> bool:
        """Whether the protocol's end event arrived (later events are ignored)."""
        return self._ended

    def feed(self, event: str, data: str) -> list[AIMessageChunk]:
        """Chunks for one SSE event (`event` name, raw `data` text); `KimiStreamError` for data
        that is not JSON, the typed error for an error payload (see `_raise_error`)."""
        if self._ended or event not in self.data_events:
            return []
        try:
            payload = fast_json.loads(data)
        except fast_json.TooDeepError as exc:
            name = event or "message"
            msg = f"the {self.wire_name} event {name!r} is {exc} (the most ChatKimi reads)"
            raise KimiStreamError(msg) from None
        except ValueError as exc:
            msg = f"malformed JSON in {self.wire_name} event {event or 'message'!r}: {data[:200]!r}"
            raise KimiStreamError(f"{msg} ({exc})") from exc
        return self._on_payload(event, payload)

    def finish(self) -> list[AIMessageChunk]:
        """Call when the stream closed: [] after the end event, else `KimiStreamError`."""
        if not self._ended:
            raise KimiStreamError(f"stream ended before {self.end_event}")
        return []

    # -- for subclasses ------------------------------------------------------------------

    def _end(self) -> None:
        self._ended = True

    @staticmethod
    def _raise_error(payload: Any) -> NoReturn:
        """An error object arrived inside the stream: its typed error."""
        raise error_from_stream_payload(payload)

    def _on_payload(self, event: str, payload: Any) -> list[AIMessageChunk]:
        """One parsed payload -> chunks (an error payload -> `_raise_error`)."""
        raise NotImplementedError
