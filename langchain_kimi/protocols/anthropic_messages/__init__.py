"""The Anthropic Messages protocol (`POST /v1/messages`): request builder, parser, SSE decoder."""

from __future__ import annotations

from functools import partial

from langchain_kimi._request.options import RequestOptions
from langchain_kimi.protocols.anthropic_messages import content_blocks
from langchain_kimi.protocols.anthropic_messages.request import (
    DEFAULT_MAX_TOKENS,
    HEADERS,
    build_request,
)
from langchain_kimi.protocols.anthropic_messages.response import (
    parse_response,
    usage_from_anthropic,
)
from langchain_kimi.protocols.anthropic_messages.shapes import bad_field
from langchain_kimi.protocols.anthropic_messages.stream import StreamDecoder
from langchain_kimi.protocols.interfaces import CallRounds, ProtocolAdapter, SingleRound


def _new_rounds(options: RequestOptions, _max_rounds: int) -> CallRounds:
    # Server tools run inside one Messages reply: every call is one round.
    return SingleRound(partial(StreamDecoder, options.model))


ADAPTER = ProtocolAdapter(
    path="/v1/messages",
    build_request=build_request,
    parse_response=parse_response,
    new_decoder=StreamDecoder,
    new_rounds=_new_rounds,
    message_blocks=content_blocks.message_blocks,
    chunk_blocks=content_blocks.chunk_blocks,
    bad_field=bad_field,
    headers=HEADERS,
    default_max_tokens=DEFAULT_MAX_TOKENS,
)

__all__ = ["ADAPTER", "StreamDecoder", "build_request", "parse_response", "usage_from_anthropic"]
