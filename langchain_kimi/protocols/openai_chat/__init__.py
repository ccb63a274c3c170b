"""The OpenAI Chat Completions protocol (`POST /v1/chat/completions`), all three Kimi models."""

from __future__ import annotations

from langchain_kimi.protocols import ProtocolAdapter
from langchain_kimi.protocols.openai_chat.request import build_request
from langchain_kimi.protocols.openai_chat.response import parse_response, usage_from_openai
from langchain_kimi.protocols.openai_chat.shapes import bad_field
from langchain_kimi.protocols.openai_chat.stream import StreamDecoder

ADAPTER = ProtocolAdapter(
    path="/v1/chat/completions",
    build_request=build_request,
    parse_response=parse_response,
    new_decoder=StreamDecoder,
    bad_field=bad_field,
)

__all__ = ["ADAPTER", "StreamDecoder", "build_request", "parse_response", "usage_from_openai"]
