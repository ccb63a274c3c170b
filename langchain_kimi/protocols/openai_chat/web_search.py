"""Pure steps of the documented `$web_search` loop on Chat Completions.

Spec: with `{"type": "web_search"}` declared, the model may answer with `tool_calls` of type
`builtin_function` named `$web_search`. The client sends back the assistant message unchanged,
then for each such call a `tool` message whose content is that call's `function.arguments`, with
the same `tool_call_id` (`name` is not in the schema: not sent), and repeats the request.
ChatKimi drives the I/O; these functions only shape the data.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.ai import UsageMetadata, add_usage
from langchain_core.utils._merge import merge_dicts

from langchain_kimi.protocols.openai_chat.response import BUILTIN
from langchain_kimi.protocols.openai_chat.stream import StreamDecoder

SEARCH_LIMIT_REACHED = (
    "Search not run: the web search limit for this reply (max_uses) was reached. "
    "Answer with the results you already have."
)
"""The `tool` answer a `$web_search` call gets instead of its arguments once the caller's
`max_uses` searches ran: echoing the arguments is what runs a search, so this text does not."""


def is_builtin_round(assistant_raw: dict[str, Any]) -> bool:
    """True when the reply has tool calls and every one is a `builtin_function` call."""
    calls = assistant_raw.get("tool_calls") or []
    return bool(calls) and all(c.get("type") == BUILTIN for c in calls)


def builtin_calls(assistant_raw: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in assistant_raw.get("tool_calls") or [] if c.get("type") == BUILTIN]


def followup_messages(
    assistant_raw: dict[str, Any], *, allowed: int | None = None
) -> list[dict[str, Any]]:
    """The unchanged assistant message followed by one `tool` answer per builtin call.

    Only the first `allowed` calls (all when None) are answered with their arguments, which runs
    the search; the others get `SEARCH_LIMIT_REACHED`.
    """
    calls = builtin_calls(assistant_raw)
    cap = len(calls) if allowed is None else allowed
    answers = [
        {
            "role": "tool",
            "tool_call_id": c["id"],
            "content": c["function"]["arguments"] if i < cap else SEARCH_LIMIT_REACHED,
        }
        for i, c in enumerate(calls)
    ]
    return [assistant_raw, *answers]


def next_body(
    body: dict[str, Any], assistant_raw: dict[str, Any], *, allowed: int | None = None
) -> dict[str, Any]:
    """A copy of the request body with the follow-up messages appended."""
    followup = followup_messages(assistant_raw, allowed=allowed)
    new_body = dict(body)
    new_body["messages"] = [*body["messages"], *copy.deepcopy(followup)]
    return new_body


def _search_count(rounds: Sequence[dict[str, Any]]) -> int:
    return sum(1 for r in rounds for c in r.get("tool_calls") or [] if c.get("type") == BUILTIN)


def server_tool_use(rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`response_metadata["server_tool_use"]` for the searches the loop ran."""
    return {"web_search_requests": _search_count(rounds)}


def combine_rounds(
    rounds: Sequence[dict[str, Any]],
    final: AIMessage,
    round_usages: Sequence[UsageMetadata | None],
    *,
    allowed: Sequence[int | None] = (),
    raw_usages: Sequence[dict[str, Any] | None] = (),
) -> AIMessage:
    """The final reply of an invoke-style loop, carrying every earlier round.

    `rounds` are the raw assistant messages of the earlier (pure-builtin) rounds, `round_usages`
    their usage, `allowed` how many searches of each round ran (default: all), `raw_usages` their
    raw usage objects. Reasoning is the concatenation of all rounds (what streaming aggregates);
    each round's own part stays in its raw message inside `builtin_rounds`.
    """
    if not rounds:
        return final
    caps = [*allowed, *[None] * (len(rounds) - len(allowed))]
    additional_kwargs = dict(final.additional_kwargs)
    additional_kwargs["builtin_rounds"] = [
        m for r, cap in zip(rounds, caps, strict=True) for m in followup_messages(r, allowed=cap)
    ]
    reasoning = "".join(r.get("reasoning_content") or "" for r in rounds)
    reasoning += final.additional_kwargs.get("reasoning_content") or ""
    if reasoning:
        additional_kwargs["reasoning_content"] = reasoning
    usage: UsageMetadata | None = None
    for part in [*round_usages, final.usage_metadata]:
        if part is not None:
            usage = add_usage(usage, part)
    response_metadata = dict(final.response_metadata)
    response_metadata["server_tool_use"] = server_tool_use(rounds)
    token_usage = final.response_metadata.get("token_usage")
    for raw in raw_usages:
        if raw:
            # As streaming aggregates it (LangChain adds numbers when merging chunks).
            token_usage = merge_dicts(raw, token_usage) if token_usage else raw
    if token_usage:
        response_metadata["token_usage"] = token_usage
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
    return AIMessageChunk(content="", additional_kwargs={"builtin_rounds": followup})


def continuation_decoder() -> StreamDecoder:
    """Decoder for a follow-up round: the first round already emitted the header metadata."""
    return StreamDecoder(continuation=True)
