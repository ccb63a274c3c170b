"""Sans-I/O plans for one ChatKimi call: which bodies to post and what to make of the replies.

Both the sync and the async drivers in `chat_models.py` run these same plans; only the thin
I/O loops are mirrored. A call is one round, except on Chat Completions with the built-in web
search: the gateway answers with `builtin_function` `$web_search` calls that the client must
echo back (the call's arguments as the tool message content) and re-post, until the answer comes.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.ai import UsageMetadata

from langchain_kimi._errors import KimiAPIError
from langchain_kimi._options import RequestOptions, WebSearchToolSpec
from langchain_kimi._stop import StopStreamFilter, truncate_at_stop
from langchain_kimi.protocols import ProtocolAdapter, StreamDecoder
from langchain_kimi.protocols.openai_chat import web_search
from langchain_kimi.protocols.openai_chat.response import raw_assistant_message, usage_from_openai


def _runs_builtin_loop(options: RequestOptions) -> bool:
    return options.caps.protocol == "openai" and any(
        isinstance(tool, WebSearchToolSpec) for tool in options.tools
    )


def _too_many_rounds(limit: int) -> KimiAPIError:
    return KimiAPIError(
        f"the built-in web search did not produce an answer within max_builtin_rounds={limit} "
        "rounds; raise max_builtin_rounds or narrow the question"
    )


class InvokePlan:
    """Non-streaming call: post `body`, feed each reply to `next_body` until it returns None."""

    def __init__(
        self,
        adapter: ProtocolAdapter,
        options: RequestOptions,
        body: dict[str, Any],
        *,
        max_builtin_rounds: int,
    ) -> None:
        self.adapter = adapter
        self.options = options
        self.body = body
        self._loop = _runs_builtin_loop(options)
        self._max_rounds = max_builtin_rounds
        self._rounds: list[dict[str, Any]] = []
        self._usages: list[UsageMetadata | None] = []
        self._first_id: str | None = None
        self.result: AIMessage | None = None

    def next_body(self, reply_body: dict[str, Any], base_url: str) -> dict[str, Any] | None:
        """The next body to post, or None when `result` holds the final message."""
        if self._loop and _first_choice_message(reply_body) is not None:
            assistant = raw_assistant_message(reply_body)
            if web_search.is_builtin_round(assistant):
                if len(self._rounds) >= self._max_rounds:
                    raise _too_many_rounds(self._max_rounds)
                self._rounds.append(assistant)
                self._usages.append(_reply_usage(reply_body))
                if self._first_id is None and isinstance(reply_body.get("id"), str):
                    self._first_id = reply_body["id"]
                self.body = web_search.next_body(self.body, assistant)
                return self.body
        message = self.adapter.parse_response(reply_body)
        if self._rounds:
            message = web_search.combine_rounds(self._rounds, message, self._usages)
            if self._first_id is not None:
                # One id per logical reply, the first round's, as a stream reports it.
                message.id = self._first_id
                message.response_metadata["id"] = self._first_id
        self.result = finalize_message(message, self.options, base_url)
        return None


def _first_choice_message(reply_body: dict[str, Any]) -> dict[str, Any] | None:
    choices = reply_body.get("choices") or []
    if choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return message
    return None


def _reply_usage(reply_body: dict[str, Any]) -> UsageMetadata | None:
    usage = reply_body.get("usage")
    if not isinstance(usage, dict):
        choices = reply_body.get("choices") or [{}]
        usage = choices[0].get("usage") if isinstance(choices[0], dict) else None
    return usage_from_openai(usage) if isinstance(usage, dict) else None


def finalize_message(message: AIMessage, options: RequestOptions, base_url: str) -> AIMessage:
    """Apply client-side stop emulation and record which base URL served the reply."""
    if options.stop and not options.native_stop and isinstance(message.content, str):
        text, matched = truncate_at_stop(message.content, options.stop)
        if matched is not None:
            message.content = text
            message.response_metadata["finish_reason"] = "stop"
            message.response_metadata["stop_sequence"] = matched
    message.response_metadata["base_url"] = base_url
    return message


class StreamPlan:
    """Streaming call: one decoder per round; chunks pass through the stop filter."""

    def __init__(
        self,
        adapter: ProtocolAdapter,
        options: RequestOptions,
        body: dict[str, Any],
        *,
        max_builtin_rounds: int,
    ) -> None:
        self.adapter = adapter
        self.options = options
        self.body = body
        self._loop = _runs_builtin_loop(options)
        self._max_rounds = max_builtin_rounds
        self._rounds = 0
        self._round_raws: list[dict[str, Any]] = []
        self._stop_filter = (
            StopStreamFilter(options.stop) if options.stop and not options.native_stop else None
        )
        self._base_url_sent = False
        self.decoder: StreamDecoder = adapter.new_decoder()

    def start_round(self, base_url: str) -> None:
        # A `$web_search` follow-up round must not repeat the header metadata (id, model_name,
        # protocol): LangChain concatenates response_metadata strings when merging chunks.
        if self._round_raws:
            self.decoder = web_search.continuation_decoder()
        else:
            self.decoder = self.adapter.new_decoder()
        self._base_url = base_url

    def on_chunks(self, chunks: list[AIMessageChunk]) -> list[AIMessageChunk]:
        return [self._shape(chunk) for chunk in chunks]

    def _shape(self, chunk: AIMessageChunk) -> AIMessageChunk:
        if not self._base_url_sent:
            # Each response_metadata key once per stream: strings concatenate when merged.
            chunk.response_metadata["base_url"] = self._base_url
            self._base_url_sent = True
        if self._stop_filter is not None and isinstance(chunk.content, str) and chunk.content:
            chunk.content = self._stop_filter.push(chunk.content)
        if self._stop_filter is not None and chunk.chunk_position == "last":
            chunk.content = (chunk.content if isinstance(chunk.content, str) else "") + (
                self._stop_filter.flush()
            )
            if self._stop_filter.matched is not None:
                chunk.response_metadata["finish_reason"] = "stop"
                chunk.response_metadata["stop_sequence"] = self._stop_filter.matched
        if self._round_raws and chunk.chunk_position == "last":
            # The same search count `combine_rounds` reports for invoke.
            chunk.response_metadata["server_tool_use"] = web_search.server_tool_use(
                self._round_raws
            )
        return chunk

    def end_round(self) -> tuple[list[AIMessageChunk], dict[str, Any] | None]:
        """After a round's stream ended: (extra chunks to emit, next body or None)."""
        if not self._loop:
            return [], None
        is_round = getattr(self.decoder, "is_builtin_round", False)
        if not is_round:
            return [], None
        self._rounds += 1
        if self._rounds > self._max_rounds:
            raise _too_many_rounds(self._max_rounds)
        assistant: dict[str, Any] = self.decoder.assistant_message()  # type: ignore[attr-defined]
        self._round_raws.append(assistant)
        self.body = web_search.next_body(self.body, assistant)
        return [web_search.round_chunk(assistant)], self.body
