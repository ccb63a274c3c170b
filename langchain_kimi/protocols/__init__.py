"""Protocol adapters: pure mapping between LangChain messages and one gateway wire protocol.

Both adapters expose the same names (a reader who knows one knows the other):

- ``request.build_request(messages, options) -> dict``: the JSON body (no I/O, validates input).
- ``response.parse_response(body) -> AIMessage``: a non-streaming reply.
- ``stream.StreamDecoder``: stateful SSE decoder, ``feed(event, data) -> list[AIMessageChunk]``
  and ``finish() -> list[AIMessageChunk]`` (raises `KimiStreamError` if the stream was cut).

`ProtocolAdapter` below bundles them for `ChatKimi`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage

from langchain_kimi._options import RequestOptions


class StreamDecoder(Protocol):
    """Turns SSE events of one response into chunks; no I/O."""

    def feed(self, event: str, data: str) -> list[AIMessageChunk]: ...

    def finish(self) -> list[AIMessageChunk]: ...


class ProtocolAdapter(Protocol):
    """What ChatKimi needs from a protocol."""

    path: str

    def build_request(
        self, messages: Sequence[BaseMessage], options: RequestOptions
    ) -> dict[str, Any]: ...

    def parse_response(self, body: dict[str, Any]) -> AIMessage: ...

    def new_decoder(self) -> StreamDecoder: ...
