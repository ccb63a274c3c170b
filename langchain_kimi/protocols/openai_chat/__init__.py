"""The OpenAI Chat Completions protocol (`POST /v1/chat/completions`), all three Kimi models."""

from __future__ import annotations

from functools import partial

from langchain_kimi._request.options import RequestOptions, WebSearchToolSpec
from langchain_kimi.protocols.interfaces import CallRounds, ProtocolAdapter, SingleRound
from langchain_kimi.protocols.openai_chat import content_blocks
from langchain_kimi.protocols.openai_chat.request import build_request
from langchain_kimi.protocols.openai_chat.response import parse_response, usage_from_openai
from langchain_kimi.protocols.openai_chat.shapes import bad_field
from langchain_kimi.protocols.openai_chat.stream import StreamDecoder
from langchain_kimi.protocols.openai_chat.web_search import WebSearchRounds


def _new_rounds(options: RequestOptions, max_rounds: int) -> CallRounds:
    """The `$web_search` loop when the call declared the built-in web search; else one round."""
    for tool in options.tools:
        if isinstance(tool, WebSearchToolSpec):
            return WebSearchRounds(max_rounds, tool.max_uses, options.model)
    return SingleRound(partial(StreamDecoder, options.model))


ADAPTER = ProtocolAdapter(
    path="/v1/chat/completions",
    build_request=build_request,
    parse_response=parse_response,
    new_decoder=StreamDecoder,
    new_rounds=_new_rounds,
    message_blocks=content_blocks.message_blocks,
    chunk_blocks=content_blocks.chunk_blocks,
    bad_field=bad_field,
)

__all__ = ["ADAPTER", "StreamDecoder", "build_request", "parse_response", "usage_from_openai"]
