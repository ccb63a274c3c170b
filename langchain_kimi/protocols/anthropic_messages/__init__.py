"""The Anthropic Messages protocol (`POST /v1/messages`): request builder, parser, SSE decoder."""

from __future__ import annotations

from langchain_kimi.protocols import ProtocolAdapter
from langchain_kimi.protocols.anthropic_messages.request import build_request
from langchain_kimi.protocols.anthropic_messages.response import (
    parse_response,
    usage_from_anthropic,
)
from langchain_kimi.protocols.anthropic_messages.shapes import bad_field
from langchain_kimi.protocols.anthropic_messages.stream import StreamDecoder

ADAPTER = ProtocolAdapter(
    path="/v1/messages",
    build_request=build_request,
    parse_response=parse_response,
    new_decoder=StreamDecoder,
    bad_field=bad_field,
)

__all__ = ["ADAPTER", "StreamDecoder", "build_request", "parse_response", "usage_from_anthropic"]
