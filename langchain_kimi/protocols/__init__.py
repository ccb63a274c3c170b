"""Protocol adapters: everything about one gateway wire protocol lives in its subpackage.

Code outside `protocols/` reaches a protocol only through this module: `adapter(protocol)` gives
its `ProtocolAdapter`. Both subpackages have the same file roles (a reader who knows one knows the
other):

- ``request.py``: ``build_request(messages, options) -> dict``, the JSON body (no I/O); it refuses
  only shapes the wire cannot express (capability refusals live in `_resolve.py`).
- ``content.py``: LangChain message content -> the wire's content (user parts, tool results,
  assistant replay).
- ``response.py``: ``parse_response(body) -> AIMessage`` for a non-streaming reply.
- ``stream.py``: ``StreamDecoder`` (a `JsonEventDecoder`), SSE events -> `AIMessageChunk`s.
- ``content_blocks.py``: its half of the ``"kimi"`` standard-block translator.
- ``shapes.py``: the documented shapes of its replies and events, naming the field of a reply
  the parser could not read (``bad_field``).
- ``rounds`` (the adapter's `new_rounds`): when one call takes several requests.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages import content as types

from langchain_kimi._request.options import RequestOptions

_PACKAGES = {"anthropic": "anthropic_messages", "openai": "openai_chat"}


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

    The plans in `_rounds.py` drive this for invoke and stream alike: a decoder per streamed
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
    read; only asked after a parser failed (the plan's guard, `_rounds`)."""


def adapter(protocol: str) -> ProtocolAdapter:
    """The adapter of `"openai"` or `"anthropic"` (imported on first use)."""
    module = importlib.import_module(f"{__name__}.{_PACKAGES[protocol]}")
    found: ProtocolAdapter = module.ADAPTER
    return found
