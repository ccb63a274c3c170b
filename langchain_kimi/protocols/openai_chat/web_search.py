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

from langchain_kimi._contract import (
    BUILTIN_ROUNDS,
    RAW_TOOL_CALLS,
    REASONING,
    TOKEN_USAGE,
    WEB_SEARCH_LIMIT,
    sum_usage,
)
from langchain_kimi._errors import KimiAPIError
from langchain_kimi.protocols.interfaces import FollowUp
from langchain_kimi.protocols.openai_chat.builtin import builtin_answers, is_builtin
from langchain_kimi.protocols.openai_chat.builtin import is_builtin_round as _all_builtin
from langchain_kimi.protocols.openai_chat.response import (
    raw_assistant_message,
    raw_usage,
    usage_from_openai,
)
from langchain_kimi.protocols.openai_chat.stream import StreamDecoder

SEARCH_LIMIT_REACHED = (
    "Search not run: the web search limit for this reply (max_uses) was reached. "
    "Answer with the results you already have."
)
"""The `tool` answer a `$web_search` call gets instead of its arguments once the caller's
`max_uses` searches ran. 004 documents only the echo of the arguments ("reenvía
function.arguments de cada llamada como contenido de un mensaje tool"); ChatKimi assumes that
echoing them is what runs a search, so that this text runs none, and that the service accepts it
(live question `web-search-limit-answer`)."""


def is_builtin_round(assistant_raw: dict[str, Any]) -> bool:
    """True when the reply has tool calls and every one is a `builtin_function` call."""
    return _all_builtin(assistant_raw.get("tool_calls") or [])


def builtin_calls(assistant_raw: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in assistant_raw.get("tool_calls") or [] if is_builtin(c)]


def followup_messages(
    assistant_raw: dict[str, Any], *, allowed: int | None = None
) -> list[dict[str, Any]]:
    """The unchanged assistant message followed by one `tool` answer per builtin call.

    Only the first `allowed` calls (all when None) are answered with their arguments, which runs
    the search; the others get `SEARCH_LIMIT_REACHED`.
    """
    answers = builtin_answers(assistant_raw.get("tool_calls") or [])
    for declined in answers[len(answers) if allowed is None else allowed :]:
        declined["content"] = SEARCH_LIMIT_REACHED
    return [assistant_raw, *answers]


def next_body(
    body: dict[str, Any], assistant_raw: dict[str, Any], *, allowed: int | None = None
) -> dict[str, Any]:
    """A copy of the request body with the follow-up messages appended."""
    followup = followup_messages(assistant_raw, allowed=allowed)
    new_body = dict(body)
    new_body["messages"] = [*body["messages"], *copy.deepcopy(followup)]
    return new_body


def server_tool_use(rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`response_metadata["server_tool_use"]` for the searches the loop ran."""
    count = sum(1 for r in rounds for c in r.get("tool_calls") or [] if is_builtin(c))
    return {"web_search_requests": count}


def combine_rounds(
    rounds: Sequence[dict[str, Any]],
    final: AIMessage,
    round_usages: Sequence[UsageMetadata | None],
    *,
    allowed: Sequence[int | None] = (),
) -> AIMessage:
    """The final reply of an invoke-style loop, carrying every earlier round.

    `rounds` are the raw assistant messages of the earlier (pure-builtin) rounds, `round_usages`
    their usage, `allowed` how many searches of each round ran (default: all). Reasoning is the
    concatenation of all rounds (what streaming aggregates); each round's own part stays in its
    raw message inside `builtin_rounds`. (The raw usage objects are added up by
    `WebSearchRounds.final_chunk`, for invoke and stream alike.)
    """
    if not rounds:
        return final
    caps = [*allowed, *[None] * (len(rounds) - len(allowed))]
    additional_kwargs = dict(final.additional_kwargs)
    additional_kwargs[BUILTIN_ROUNDS] = [
        m for r, cap in zip(rounds, caps, strict=True) for m in followup_messages(r, allowed=cap)
    ]
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


def round_chunk(assistant_raw: dict[str, Any], *, allowed: int | None = None) -> AIMessageChunk:
    """The chunk ChatKimi emits in streaming after a pure-builtin round (what was sent)."""
    followup = followup_messages(assistant_raw, allowed=allowed)
    return AIMessageChunk(content="", additional_kwargs={BUILTIN_ROUNDS: followup})


def continuation_decoder(
    requested_model: str | None = None, *, final: bool = False
) -> StreamDecoder:
    """Decoder for a follow-up round: the first round already emitted the header metadata."""
    return StreamDecoder(requested_model, continuation=True, final=final, token_usage=False)


def without_web_search(body: dict[str, Any]) -> dict[str, Any]:
    """`body` no longer offering `$web_search` (a `tool_choice` goes with the last tool)."""
    tools = [tool for tool in body.get("tools") or [] if tool.get("type") != "web_search"]
    trimmed = {k: v for k, v in body.items() if k not in ("tools", "tool_choice")}
    if tools:
        trimmed["tools"] = tools
        if "tool_choice" in body:
            trimmed["tool_choice"] = body["tool_choice"]
    return trimmed


class WebSearchRounds:
    """The rounds of one call that declared the built-in web search."""

    def __init__(
        self, max_rounds: int, max_uses: int | None = None, requested_model: str | None = None
    ) -> None:
        self._max_rounds = max_rounds
        self._requested_model = requested_model
        self._max_uses = max_uses
        """The caller's cap on searches for this reply (None: no cap)."""
        self._rounds: list[dict[str, Any]] = []
        """Raw assistant messages of the `$web_search` rounds so far."""
        self._allowed: list[int | None] = []
        """Per round, how many of its searches ran (None: all of them)."""
        self._usages: list[UsageMetadata | None] = []
        self._raw_usages: list[dict[str, Any] | None] = []
        self._first_id: str | None = None
        self._searches_run = 0
        self._searches_declined = 0
        self._capped = False
        """The cap was reached: the requests after it offer no `$web_search`, and the next reply
        is the answer whatever it holds (a search asked for then is declined, not run)."""

    def new_decoder(self) -> StreamDecoder:
        # A follow-up round must not repeat the header metadata (id, model_name, protocol):
        # LangChain concatenates response_metadata strings when merging chunks.
        if self._rounds:
            return continuation_decoder(self._requested_model, final=self._capped)
        # The raw usage objects of the rounds are added up once, on the last chunk (final_chunk).
        return StreamDecoder(self._requested_model, token_usage=False)

    def follow_up(self, sent: dict[str, Any], reply: dict[str, Any]) -> FollowUp | None:
        assistant = raw_assistant_message(reply)
        if self._capped or not is_builtin_round(assistant):
            # The one reply after the cap is the answer: at most one billed round beyond it.
            return None
        if len(self._rounds) >= self._max_rounds:
            msg = (
                "the built-in web search did not produce an answer within "
                f"max_builtin_rounds={self._max_rounds} rounds; raise max_builtin_rounds or "
                "narrow the question"
            )
            raise KimiAPIError(msg)
        allowed = self._allowance(assistant)
        self._rounds.append(assistant)
        self._allowed.append(allowed)
        usage = raw_usage(reply)
        self._raw_usages.append(usage)
        self._usages.append(
            usage_from_openai(
                usage, model=reply.get("model"), requested_model=self._requested_model
            )
            if usage
            else None
        )
        if self._first_id is None and isinstance(reply.get("id"), str):
            self._first_id = reply["id"]
        body = next_body(sent, assistant, allowed=allowed)
        if self._max_uses is not None and self._searches_run >= self._max_uses:
            self._capped = True
            body = without_web_search(body)
        return FollowUp(body=body, chunk=round_chunk(assistant, allowed=allowed))

    def _allowance(self, assistant: dict[str, Any]) -> int | None:
        """How many of this round's searches may run under `max_uses` (None: all)."""
        calls = len(builtin_calls(assistant))
        if self._max_uses is None or self._searches_run + calls <= self._max_uses:
            self._searches_run += calls
            return None
        allowed = max(0, self._max_uses - self._searches_run)
        self._searches_run += allowed
        self._searches_declined += calls - allowed
        return allowed

    def final_message(self, message: AIMessage, reply: dict[str, Any]) -> AIMessage:
        if self._rounds:
            message = combine_rounds(
                self._rounds,
                message,
                self._usages,
                allowed=self._allowed,
            )
            if self._first_id is not None:
                # One id per logical reply, the first round's, as a stream reports it.
                message.id = self._first_id
                message.response_metadata["id"] = self._first_id
        raw_calls = message.additional_kwargs.get(RAW_TOOL_CALLS) or []
        if self._capped and raw_calls and all(is_builtin(call) for call in raw_calls):
            # Searches asked for after the cap were not run: nothing a replay would run later
            # (and a stream of that reply carries no raw calls either).
            del message.additional_kwargs[RAW_TOOL_CALLS]
        self.final_chunk(message, reply)
        return message

    def final_chunk(self, chunk: AIMessage, reply: dict[str, Any]) -> None:
        """`server_tool_use`: every `$web_search` call the loop ran, plus those of a last reply
        that mixed them with client calls (answered later, with the client's results) unless
        the cap was reached; and `web_search_limit` once the caller's `max_uses` was reached
        (how many calls were declined: answered with `SEARCH_LIMIT_REACHED`, or asked for in
        the reply after the cap). (Also called on an error's `.partial` with an empty reply:
        the earlier rounds only.)"""
        token_usage: dict[str, Any] | None = None
        for raw in [*self._raw_usages, raw_usage(reply)]:
            if raw:
                token_usage = sum_usage(token_usage, raw)
        if token_usage:
            chunk.response_metadata[TOKEN_USAGE] = token_usage
        last_calls = len(builtin_calls(raw_assistant_message(reply)))
        searches = self._searches_run + (0 if self._capped else last_calls)
        if searches:
            chunk.response_metadata["server_tool_use"] = {"web_search_requests": searches}
        if self._capped or self._searches_declined:
            chunk.response_metadata[WEB_SEARCH_LIMIT] = {
                "max_uses": self._max_uses,
                "declined": self._searches_declined + (last_calls if self._capped else 0),
            }
