"""Chat Completions SSE events -> `AIMessageChunk`s (stateful, no I/O).

Streaming rules (docs/internals.md): string deltas only; the raw `tool_calls` list, usage and the
finish metadata are emitted once, on the last chunk, when `data: [DONE]` arrives (usage may come
after the finish chunk, as a trailing chunk with empty `choices`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessageChunk
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import ToolCallChunk

from langchain_kimi._contract import PROVIDER, RAW_TOOL_CALLS, REASONING, TOKEN_USAGE
from langchain_kimi._errors import KimiStreamError
from langchain_kimi.protocols.json_events import JsonEventDecoder
from langchain_kimi.protocols.openai_chat.builtin import BUILTIN, is_builtin_round
from langchain_kimi.protocols.openai_chat.response import (
    finish_metadata,
    merge_usage,
    message_metadata,
    usage_from_openai,
)

DONE = "[DONE]"


@dataclass
class _CallState:
    id: str | None = None
    type: str | None = None
    name: str = ""
    arguments: str = ""

    @property
    def is_builtin(self) -> bool:
        return self.type == BUILTIN

    def raw(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type or "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class StreamDecoder(JsonEventDecoder):
    """Decoder for one streamed reply.

    `continuation=True` is for a follow-up round of the `$web_search` loop: the header metadata
    (id, model_name, ...) was already emitted by the first round's decoder and must not be
    emitted again (LangChain would concatenate the strings). `final=True`: this reply is the
    answer whatever it holds (the loop offers no more searches), so a reply of `$web_search`
    calls only ends the message too. `token_usage=False`: the raw usage object is not put on the
    last chunk (the `$web_search` loop puts the sum of its rounds' there).
    """

    wire_name = "Chat Completions stream"
    end_event = DONE
    data_events = frozenset({"", "message", "chunk", "error"})

    def __init__(
        self,
        requested_model: str | None = None,
        *,
        continuation: bool = False,
        final: bool = False,
        token_usage: bool = True,
    ) -> None:
        super().__init__()
        self._report_token_usage = token_usage
        self._requested_model = requested_model
        self._final = final
        self._header_sent = continuation
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _CallState] = {}
        self._usage: dict[str, Any] | None = None
        self._usage_metadata: UsageMetadata | None = None
        self._raw_finish: str | None = None
        self._id: str | None = None
        self._head: dict[str, Any] | None = None
        """`model` and `created` of the first payload (for `reply()`)."""

    # -- public API ----------------------------------------------------------------------

    def feed(self, event: str, data: str) -> list[AIMessageChunk]:
        """One SSE event -> zero or more chunks (raises a typed error for an error payload)."""
        if not self._ended and data.strip() == DONE:
            self._end()
            return [self._final_chunk()]
        return super().feed(event, data)

    @property
    def is_builtin_round(self) -> bool:
        """Every tool call of this reply is a `$web_search` builtin call (the loop continues)."""
        return not self._final and is_builtin_round(call.raw() for call in self._calls.values())

    def assistant_message(self) -> dict[str, Any]:
        """The raw assistant message, as a non-streamed response's `choices[0].message` holds it."""
        calls = [self._calls[i].raw() for i in sorted(self._calls)]
        text = "".join(self._text)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": text or (None if calls else ""),
        }
        if self._reasoning:
            message["reasoning_content"] = "".join(self._reasoning)
        if calls:
            message["tool_calls"] = calls
        return message

    def reply(self) -> dict[str, Any]:
        """The reply so far as a `chat.completion` body."""
        choice = {"index": 0, "message": self.assistant_message()}
        if self._raw_finish is not None:
            choice["finish_reason"] = self._raw_finish
        body: dict[str, Any] = {"id": self._id, **(self._head or {}), "choices": [choice]}
        if self._usage:
            body["usage"] = self._usage
        return body

    # -- internals -----------------------------------------------------------------------

    def _on_payload(self, event: str, payload: Any) -> list[AIMessageChunk]:
        if not isinstance(payload, dict):
            msg = f"unexpected Chat Completions stream event (not an object): {payload!r:.200}"
            raise KimiStreamError(msg)
        if event == "error" or payload.get("error") is not None:
            self._raise_error(payload)
        self._id = self._id or payload.get("id")
        if self._head is None:
            self._head = {k: payload[k] for k in ("model", "created") if payload.get(k) is not None}
        self._usage = merge_usage(self._usage, payload.get("usage"))
        choices = payload.get("choices") or []
        choice: dict[str, Any] = choices[0] if choices and isinstance(choices[0], dict) else {}
        # Moonshot-style services report usage inside the choice of the finish chunk.
        self._usage = merge_usage(self._usage, choice.get("usage"))
        if self._usage is not None and (payload.get("usage") or choice.get("usage")):
            # Read when it arrives, so a malformed count fails on the event that carried it.
            self._usage_metadata = usage_from_openai(
                self._usage, model=self._head.get("model"), requested_model=self._requested_model
            )
        if choice.get("finish_reason"):
            self._raw_finish = choice["finish_reason"]
        delta: dict[str, Any] = choice.get("delta") or {}
        content = delta.get("content") or ""
        reasoning = delta.get("reasoning_content") or ""
        tool_chunks = self._tool_call_chunks(delta.get("tool_calls") or [])
        header = self._header(payload)
        if not (content or reasoning or tool_chunks or header):
            return []
        if content:
            self._text.append(content)
        additional_kwargs: dict[str, Any] = {}
        if reasoning:
            self._reasoning.append(reasoning)
            additional_kwargs[REASONING] = reasoning
        return [
            AIMessageChunk(
                content=content,
                id=self._id,
                additional_kwargs=additional_kwargs,
                tool_call_chunks=tool_chunks,
                # On every chunk, as the anthropic decoder does: langchain-core picks the v1
                # content-block translator per chunk from it (equal values merge, not concatenate).
                response_metadata={**header, "model_provider": PROVIDER},
            )
        ]

    def _header(self, payload: dict[str, Any]) -> dict[str, Any]:
        if self._header_sent:
            return {}
        self._header_sent = True
        return message_metadata(payload)

    def _tool_call_chunks(self, deltas: list[dict[str, Any]]) -> list[ToolCallChunk]:
        chunks: list[ToolCallChunk] = []
        for position, delta in enumerate(deltas):
            index = delta.get("index", position)
            state = self._calls.setdefault(index, _CallState())
            first_id = delta.get("id") if state.id is None else None
            if first_id:
                state.id = first_id
            # `type` may arrive only on the first delta of an index: remembered per index.
            state.type = state.type or delta.get("type")
            function = delta.get("function") or {}
            name_piece = function.get("name") or ""
            args_piece = function.get("arguments") or ""
            state.name += name_piece
            state.arguments += args_piece
            if state.is_builtin or not (first_id or name_piece or args_piece):
                continue
            chunks.append(
                ToolCallChunk(
                    type="tool_call_chunk",
                    index=index,
                    id=first_id or None,
                    name=name_piece or None,
                    args=args_piece,
                )
            )
        return chunks

    def _final_chunk(self) -> AIMessageChunk:
        calls = [self._calls[i] for i in sorted(self._calls)]
        builtin_round = self.is_builtin_round
        additional_kwargs: dict[str, Any] = {}
        response_metadata: dict[str, Any] = {"model_provider": PROVIDER}
        tool_chunks: list[ToolCallChunk] = []
        client_indexes = [i for i in sorted(self._calls) if not self._calls[i].is_builtin]
        if client_indexes:
            additional_kwargs[RAW_TOOL_CALLS] = [c.raw() for c in calls]
            # langchain-core re-parses `additional_kwargs["tool_calls"]` into tool_call_chunks
            # when a chunk has none (and without `index` they would duplicate, builtin calls
            # included); an empty piece for a known index prevents that and merges as a no-op.
            tool_chunks.append(
                ToolCallChunk(
                    type="tool_call_chunk", index=client_indexes[0], id=None, name=None, args=""
                )
            )
        if self._usage and self._report_token_usage:
            response_metadata[TOKEN_USAGE] = self._usage  # raw, as ChatOpenAI keeps it
        if not builtin_round:
            response_metadata.update(finish_metadata(self._raw_finish))
        # A pure-builtin round is not the end of the message: ChatKimi posts the follow-up and
        # keeps streaming, so only the final round's last chunk is marked "last".
        return AIMessageChunk(
            content="",
            id=self._id,
            additional_kwargs=additional_kwargs,
            tool_call_chunks=tool_chunks,
            response_metadata=response_metadata,
            usage_metadata=self._usage_metadata,
            chunk_position=None if builtin_round else "last",
        )
