"""The documented `$web_search` loop on Chat Completions, as this protocol's `CallRounds`.

A reply whose tool calls are all `builtin_function` calls (see `builtin.py`) is not the answer:
the client sends the assistant message back unchanged, then one `tool` answer per call, and
repeats the request, until the model answers. ChatKimi's plans drive the I/O; this module decides
the follow-up and folds the earlier rounds into the final message.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.ai import UsageMetadata, add_usage

from langchain_kimi._contract import BUILTIN_ROUNDS, REASONING
from langchain_kimi._errors import KimiAPIError
from langchain_kimi._options import RequestOptions, WebSearchToolSpec
from langchain_kimi.protocols import CallRounds, FollowUp, SingleRound
from langchain_kimi.protocols.openai_chat.builtin import builtin_answers, is_builtin
from langchain_kimi.protocols.openai_chat.builtin import is_builtin_round as _all_builtin
from langchain_kimi.protocols.openai_chat.response import (
    raw_assistant_message,
    raw_usage,
    usage_from_openai,
)
from langchain_kimi.protocols.openai_chat.stream import StreamDecoder


def is_builtin_round(assistant_raw: dict[str, Any]) -> bool:
    """True when the reply has tool calls and every one is a `builtin_function` call."""
    return _all_builtin(assistant_raw.get("tool_calls") or [])


def followup_messages(assistant_raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The unchanged assistant message followed by one `tool` answer per builtin call."""
    return [assistant_raw, *builtin_answers(assistant_raw.get("tool_calls") or [])]


def next_body(body: dict[str, Any], assistant_raw: dict[str, Any]) -> dict[str, Any]:
    """A copy of the request body with the follow-up messages appended."""
    new_body = dict(body)
    new_body["messages"] = [*body["messages"], *copy.deepcopy(followup_messages(assistant_raw))]
    return new_body


def server_tool_use(rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`response_metadata["server_tool_use"]` for the searches the loop ran."""
    count = sum(1 for r in rounds for c in r.get("tool_calls") or [] if is_builtin(c))
    return {"web_search_requests": count}


def combine_rounds(
    rounds: Sequence[dict[str, Any]],
    final: AIMessage,
    round_usages: Sequence[UsageMetadata | None],
) -> AIMessage:
    """The final reply of an invoke-style loop, carrying every earlier round.

    `rounds` are the raw assistant messages of the earlier (pure-builtin) rounds, `round_usages`
    their usage. Reasoning is the concatenation of all rounds (what streaming aggregates);
    each round's own part stays in its raw message inside `builtin_rounds`.
    """
    if not rounds:
        return final
    additional_kwargs = dict(final.additional_kwargs)
    additional_kwargs[BUILTIN_ROUNDS] = [m for r in rounds for m in followup_messages(r)]
    reasoning = "".join(r.get("reasoning_content") or "" for r in rounds)
    reasoning += final.additional_kwargs.get(REASONING) or ""
    if reasoning:
        additional_kwargs[REASONING] = reasoning
    usage: UsageMetadata | None = None
    for part in [*round_usages, final.usage_metadata]:
        if part is not None:
            usage = add_usage(usage, part)
    response_metadata = dict(final.response_metadata)
    response_metadata["server_tool_use"] = server_tool_use(rounds)
    return final.model_copy(
        update={
            "additional_kwargs": additional_kwargs,
            "usage_metadata": usage,
            "response_metadata": response_metadata,
        }
    )


def round_chunk(assistant_raw: dict[str, Any]) -> AIMessageChunk:
    """The chunk ChatKimi emits in streaming after a pure-builtin round."""
    return AIMessageChunk(
        content="", additional_kwargs={BUILTIN_ROUNDS: followup_messages(assistant_raw)}
    )


def continuation_decoder() -> StreamDecoder:
    """Decoder for a follow-up round: the first round already emitted the header metadata."""
    return StreamDecoder(continuation=True)


class WebSearchRounds:
    """The rounds of one call that declared the built-in web search."""

    def __init__(self, max_rounds: int) -> None:
        self._max_rounds = max_rounds
        self._rounds: list[dict[str, Any]] = []
        """Raw assistant messages of the `$web_search` rounds so far."""
        self._usages: list[UsageMetadata | None] = []
        self._first_id: str | None = None

    def new_decoder(self) -> StreamDecoder:
        # A follow-up round must not repeat the header metadata (id, model_name, protocol):
        # LangChain concatenates response_metadata strings when merging chunks.
        return continuation_decoder() if self._rounds else StreamDecoder()

    def follow_up(self, sent: dict[str, Any], reply: dict[str, Any]) -> FollowUp | None:
        assistant = raw_assistant_message(reply)
        if not is_builtin_round(assistant):
            return None
        if len(self._rounds) >= self._max_rounds:
            msg = (
                "the built-in web search did not produce an answer within "
                f"max_builtin_rounds={self._max_rounds} rounds; raise max_builtin_rounds or "
                "narrow the question"
            )
            raise KimiAPIError(msg)
        self._rounds.append(assistant)
        usage = raw_usage(reply)
        self._usages.append(usage_from_openai(usage) if usage else None)
        if self._first_id is None and isinstance(reply.get("id"), str):
            self._first_id = reply["id"]
        return FollowUp(body=next_body(sent, assistant), chunk=round_chunk(assistant))

    def final_message(self, message: AIMessage, reply: dict[str, Any]) -> AIMessage:
        if self._rounds:
            message = combine_rounds(self._rounds, message, self._usages)
            if self._first_id is not None:
                # One id per logical reply, the first round's, as a stream reports it.
                message.id = self._first_id
                message.response_metadata["id"] = self._first_id
        self.final_chunk(message, reply)
        return message

    def final_chunk(self, chunk: AIMessage, reply: dict[str, Any]) -> None:
        """`server_tool_use`: every `$web_search` call of the loop, including those of a last
        reply that mixed them with client calls (answered later, with the client's results)."""
        searches = server_tool_use([*self._rounds, raw_assistant_message(reply)])
        if searches["web_search_requests"]:
            chunk.response_metadata["server_tool_use"] = searches


def new_rounds(options: RequestOptions, max_rounds: int) -> CallRounds:
    """The `$web_search` loop when the call declared the built-in web search; else one round."""
    if any(isinstance(tool, WebSearchToolSpec) for tool in options.tools):
        return WebSearchRounds(max_rounds)
    return SingleRound(StreamDecoder)
