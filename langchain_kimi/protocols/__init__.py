"""Protocol adapters: pure mapping between LangChain messages and one gateway wire protocol.

Both adapters expose the same names (a reader who knows one knows the other):

- ``request.build_request(messages, options) -> dict``: the JSON body (no I/O, validates input).
- ``response.parse_response(body) -> AIMessage``: a non-streaming reply.
- ``stream.StreamDecoder``: stateful SSE decoder, ``feed(event, data) -> list[AIMessageChunk]``
  and ``finish() -> list[AIMessageChunk]`` (raises `KimiStreamError` if the stream was cut).

`ProtocolAdapter` below bundles them for `ChatKimi`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage

from langchain_kimi._options import RequestOptions


class StreamDecoder(Protocol):
    """Turns SSE events of one response into chunks; no I/O."""

    def feed(self, event: str, data: str) -> list[AIMessageChunk]: ...

    def finish(self) -> list[AIMessageChunk]: ...

    @property
    def done(self) -> bool:
        """The protocol's end event arrived: nothing after it belongs to the reply."""
        ...


@dataclass(frozen=True)
class ProtocolAdapter:
    """What ChatKimi needs from a protocol: its path and its three pure functions."""

    path: str
    build_request: Callable[[Sequence[BaseMessage], RequestOptions], dict[str, Any]]
    parse_response: Callable[[dict[str, Any]], AIMessage]
    new_decoder: Callable[[], StreamDecoder]
    bad_field: Callable[[str | None, Any], str | None] = lambda _event, _payload: None
    """Names the field of a reply (event None) or stream event payload the parser could not
    read; only asked after a parser failed."""
