"""The Anthropic Messages protocol (`POST /v1/messages`): request builder, parser, SSE decoder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from langchain_kimi._options import RequestOptions
from langchain_kimi.protocols import ProtocolAdapter
from langchain_kimi.protocols.anthropic_messages.request import build_request
from langchain_kimi.protocols.anthropic_messages.response import (
    parse_response,
    usage_from_anthropic,
)
from langchain_kimi.protocols.anthropic_messages.stream import StreamDecoder


class _MessagesAdapter:
    path: str = "/v1/messages"

    def build_request(
        self, messages: Sequence[BaseMessage], options: RequestOptions
    ) -> dict[str, Any]:
        return build_request(messages, options)

    def parse_response(self, body: dict[str, Any]) -> AIMessage:
        return parse_response(body)

    def new_decoder(self) -> StreamDecoder:
        return StreamDecoder()


ADAPTER: ProtocolAdapter = _MessagesAdapter()

__all__ = ["ADAPTER", "StreamDecoder", "build_request", "parse_response", "usage_from_anthropic"]
