"""The OpenAI Chat Completions protocol (`POST /v1/chat/completions`), all three Kimi models."""

from __future__ import annotations

from langchain_kimi.protocols import ProtocolAdapter
from langchain_kimi.protocols.openai_chat import content_blocks
from langchain_kimi.protocols.openai_chat.request import build_request
from langchain_kimi.protocols.openai_chat.response import parse_response, usage_from_openai
from langchain_kimi.protocols.openai_chat.stream import StreamDecoder
from langchain_kimi.protocols.openai_chat.web_search import new_rounds

ADAPTER = ProtocolAdapter(
    path="/v1/chat/completions",
    build_request=build_request,
    parse_response=parse_response,
    new_decoder=StreamDecoder,
    new_rounds=new_rounds,
    message_blocks=content_blocks.message_blocks,
    chunk_blocks=content_blocks.chunk_blocks,
)

__all__ = ["ADAPTER", "StreamDecoder", "build_request", "parse_response", "usage_from_openai"]
