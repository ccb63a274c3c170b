"""What every protocol provides and what the call plans drive: the adapter and its parts.

`ProtocolAdapter` is what ChatKimi needs from one wire protocol; `StreamDecoder` turns one
response's events into chunks; `CallRounds` says how one call proceeds (`SingleRound` unless the
protocol says otherwise, `FollowUp` when a reply asks for another request).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages import content as types

from langchain_kimi._request.options import RequestOptions


class StreamDecoder(Protocol):
    """Turns SSE events of one response into chunks; no I/O."""

    def feed(self, event: str, data: str) -> list[AIMessageChunk]: ...

    def finish(self) -> list[AIMessageChunk]: ...

    @property
    def ended(self) -> bool:
        """Whether the protocol's end event arrived: the reply is complete, nothing after it
        belongs to it (the stream plan stops reading there)."""
        ...

    def reply(self) -> dict[str, Any]:
        """The reply decoded so far, shaped as the protocol's non-streamed response body."""
        ...


@dataclass(frozen=True)
class FollowUp:
    """A reply that is not the answer yet: post `body` next.

    `chunk` is what a stream emits for the round that just ended (its raw data, so that the
    aggregated stream equals the invoke result).
    """

    body: dict[str, Any]
    chunk: AIMessageChunk


class CallRounds(Protocol):
    """The rounds of one call, as its protocol runs them. Most calls are one round.

    The plans in `_call/plans.py` drive this for invoke and stream alike: a decoder per streamed
    round, then "given the body sent and the reply, the follow-up or None", then the final
    message (or last chunk) completed with what the earlier rounds contributed. A decoder is
    made here so a protocol decides per round how its replies are read (and where they end).
    """

    def new_decoder(self) -> StreamDecoder: ...

    def follow_up(self, sent: dict[str, Any], reply: dict[str, Any]) -> FollowUp | None: ...

    def final_message(self, message: AIMessage, reply: dict[str, Any]) -> AIMessage: ...

    def final_chunk(self, chunk: AIMessageChunk, reply: dict[str, Any]) -> None: ...


class SingleRound:
    """A call of one request: the reply is the answer."""

    def __init__(self, new_decoder: Callable[[], StreamDecoder]) -> None:
        self._new_decoder = new_decoder

    def new_decoder(self) -> StreamDecoder:
        return self._new_decoder()

    def follow_up(self, sent: dict[str, Any], reply: dict[str, Any]) -> FollowUp | None:
        return None

    def final_message(self, message: AIMessage, reply: dict[str, Any]) -> AIMessage:
        return message

    def final_chunk(self, chunk: AIMessageChunk, reply: dict[str, Any]) -> None:
        return None


BlockTranslation = Callable[[Any], Iterator[types.ContentBlock]]


@dataclass(frozen=True)
class ProtocolAdapter:
    """What ChatKimi needs from a protocol: its path, its pure functions, its round logic."""

    path: str
    build_request: Callable[[Sequence[BaseMessage], RequestOptions], dict[str, Any]]
    parse_response: Callable[[dict[str, Any], str | None], AIMessage]
    """`(body, requested model)` -> the reply; the requested model decides the usage
    accounting when the reply names no known model."""
    new_decoder: Callable[[], StreamDecoder]
    new_rounds: Callable[[RequestOptions, int], CallRounds]
    """`(options, max_rounds)` -> the rounds of one call."""
    message_blocks: Callable[[AIMessage], Iterator[types.ContentBlock]]
    """Standard content blocks of a complete message from this protocol."""
    chunk_blocks: Callable[[AIMessageChunk], Iterator[types.ContentBlock]]
    """Standard blocks for the raw data a streamed chunk of this protocol carries."""
    bad_field: Callable[[str | None, Any], str | None]
    """Names the field of a reply (event None) or stream event payload the parser could not
    read; only asked after a parser failed (the plan's `readable()`, `_call/plans.py`)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Headers every request of this protocol carries (a caller's `default_headers` win)."""
    default_max_tokens: int | None = None
    """The `max_tokens` a request carries when the caller set none (None: the field is left out
    and the service applies its own default); what tracing reports as `ls_max_tokens`."""
