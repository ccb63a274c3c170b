"""Reference points measured in the same run: what any client must pay, whoever writes it.

- `FloorChatModel`: a do-nothing `BaseChatModel` that yields chunks (or returns a message)
  built beforehand: LangChain's own `stream()` / `invoke()` machinery and nothing else.
- `ParseFloorChatModel`: the least a streaming parser does: SSE framing (httpx-sse over the
  in-memory body), `json.loads` per event and one `AIMessageChunk` per delta; no I/O.
- `raw_httpx_invoke`: one httpx POST of pre-encoded bytes and `response.json()`, no LangChain.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
from httpx_sse import EventSource
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from benchmarks.clients import API_KEY, MODEL


class FloorChatModel(BaseChatModel):
    """Yields `chunks` / returns `message` as given: LangChain's machinery, nothing else."""

    chunks: list[AIMessageChunk]
    message: AIMessage

    @property
    def _llm_type(self) -> str:
        return "benchmark-floor"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self.chunks:
            yield ChatGenerationChunk(message=chunk)


def _anthropic_delta(payload: dict[str, Any]) -> tuple[str, str]:
    delta = payload.get("delta") or {}
    return delta.get("text") or "", delta.get("thinking") or ""


def _openai_delta(payload: dict[str, Any]) -> tuple[str, str]:
    choices = payload.get("choices") or [{}]
    delta = choices[0].get("delta") or {}
    return delta.get("content") or "", delta.get("reasoning_content") or ""


class ParseFloorChatModel(BaseChatModel):
    """Parses the same SSE body from memory with the minimum of work per event."""

    sse_body: bytes
    protocol: str

    @property
    def _llm_type(self) -> str:
        return "benchmark-parse-floor"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:  # pragma: no cover - only streamed
        raise NotImplementedError

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        response = httpx.Response(
            200, content=self.sse_body, headers={"content-type": "text/event-stream"}
        )
        extract = _anthropic_delta if self.protocol == "anthropic" else _openai_delta
        for sse in EventSource(response).iter_sse():
            if sse.data == "[DONE]":
                return
            text, reasoning = extract(json.loads(sse.data))
            if text or reasoning:
                extra = {"reasoning_content": reasoning} if reasoning else {}
                chunk = AIMessageChunk(content=text, additional_kwargs=extra)
                yield ChatGenerationChunk(message=chunk)


def raw_httpx_invoke(port: int, protocol: str) -> Callable[[], None]:
    """A call that POSTs a small pre-encoded body and decodes the JSON reply, nothing more."""
    client = httpx.Client(timeout=30.0)
    path = "/v1/messages" if protocol == "anthropic" else "/v1/chat/completions"
    url = f"http://127.0.0.1:{port}{path}"
    content = json.dumps(
        {"model": MODEL, "max_tokens": 1024, "messages": [{"role": "user", "content": "Hi"}]}
    ).encode()
    headers = {"authorization": f"Bearer {API_KEY}", "content-type": "application/json"}

    def call() -> None:
        client.post(url, content=content, headers=headers).json()

    return call
