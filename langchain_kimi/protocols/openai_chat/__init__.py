"""The OpenAI Chat Completions protocol (`POST /v1/chat/completions`), all three Kimi models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from langchain_kimi._options import RequestOptions
from langchain_kimi.protocols.openai_chat.request import build_request
from langchain_kimi.protocols.openai_chat.response import parse_response, usage_from_openai
from langchain_kimi.protocols.openai_chat.stream import StreamDecoder


class _OpenAIChatAdapter:
    path = "/v1/chat/completions"

    def build_request(
        self, messages: Sequence[BaseMessage], options: RequestOptions
    ) -> dict[str, Any]:
        return build_request(messages, options)

    def parse_response(self, body: dict[str, Any]) -> AIMessage:
        return parse_response(body)

    def new_decoder(self) -> StreamDecoder:
        return StreamDecoder()


ADAPTER = _OpenAIChatAdapter()

__all__ = ["ADAPTER", "StreamDecoder", "build_request", "parse_response", "usage_from_openai"]
