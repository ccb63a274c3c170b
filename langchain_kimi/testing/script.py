"""What a `FakeKimiGateway` script holds: replies, web searches and errors, protocol-neutral.

A step says what the service answers, never how: the same script is rendered as Chat Completions
or Messages, as JSON or as an event stream (`wire.py`), whichever the request asks for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


class ScriptError(AssertionError):
    """The script cannot answer a request: no step left, a step the request makes impossible
    (it names both), or a step that calls in flight together could each take. It fails the
    test (it is an `AssertionError`) with what to change."""


DEFAULT_REASONING = "The user asked a question; I will answer it."
"""Every Kimi reply carries reasoning (it is always on): a reply scripted without one gets this."""


@dataclass(frozen=True)
class Usage:
    """Token counts as LangChain reports them: `input_tokens` is ALL input (cache reads and
    writes included), `output_tokens` includes the reasoning tokens. `cache_write_1h`: the part
    of `cache_write` written with the 1h TTL (the rest is 5m; K3.1 Messages reports the split,
    000 `cache_creation`)."""

    input_tokens: int
    output_tokens: int
    reasoning_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0

    @classmethod
    def of(
        cls, given: Mapping[str, int] | None, *, prompt: int, text: str, reasoning: str
    ) -> Usage:
        """The scripted usage, or an estimate (about 4 characters a token) when none was given."""
        estimated_reasoning = _estimate(reasoning)
        counts: dict[str, int] = {
            "input_tokens": max(1, prompt // 4),
            "output_tokens": _estimate(text) + estimated_reasoning,
            "reasoning_tokens": estimated_reasoning,
        }
        unknown = sorted(set(given or {}) - set(counts) - set(_CACHE_KEYS))
        if unknown:
            msg = (
                f"usage: unknown key(s) {unknown}; use input_tokens (all input), output_tokens "
                "(reasoning included), reasoning_tokens, cache_read, cache_write, cache_write_1h"
            )
            raise ValueError(msg)
        given = dict(given or {})
        if "output_tokens" in given and "reasoning_tokens" not in given:
            counts["reasoning_tokens"] = min(estimated_reasoning, given["output_tokens"])
        usage = cls(**{**counts, **given})
        if usage.cache_read + usage.cache_write > usage.input_tokens:
            raise ValueError("usage: cache_read + cache_write must not exceed input_tokens")
        if usage.reasoning_tokens > usage.output_tokens:
            # 004 `reasoning_tokens`: "ya incluidos en completion_tokens" (already included in
            # them); 000 `output_tokens`: "incluidos los tokens de thinking".
            raise ValueError("usage: reasoning_tokens must not exceed output_tokens")
        if usage.cache_write_1h > usage.cache_write:
            raise ValueError("usage: cache_write_1h is a part of cache_write")
        return usage


_CACHE_KEYS = ("cache_read", "cache_write", "cache_write_1h")


def _estimate(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any]
    arguments: str | None = None
    """The raw arguments string as the model wrote it (malformed JSON allowed); None: `args`."""


@dataclass(frozen=True)
class WebSearch:
    """One built-in web search the model runs (a `$web_search` round on Chat Completions, a
    `server_tool_use` with its `web_search_tool_result` on Messages). `same_round`: in the
    round of the search before it (one assistant turn with several `$web_search` calls).
    `error_code`: the search failed (Messages: a `web_search_tool_result_error` object)."""

    query: str
    results: tuple[dict[str, str], ...]
    same_round: bool = False
    error_code: str | None = None
    reasoning: str | None = None
    """Chat Completions: the round's reasoning_content (a default when None)."""
    usage: Mapping[str, int] | None = None
    """Chat Completions: the round's usage (estimated when None)."""

    def reasoning_text(self) -> str:
        """Chat Completions: this search's part of the round's reasoning_content."""
        if self.reasoning is not None:
            return self.reasoning
        return f"I should search the web for {self.query}."


@dataclass(frozen=True)
class Reply:
    text: str
    reasoning: str
    tool_calls: tuple[ToolCall, ...]
    usage: Mapping[str, int] | None
    searches: tuple[WebSearch, ...] = ()
    refusal: bool = False
    """The model declines: K3.1 Messages `stop_reason` "refusal" (000's enum)."""
    finish: str | None = None
    """"max_tokens" (scripted as truncated, or cut by the request's cap) or "stop_sequence"."""
    stop_sequence: str | None = None
    """The stop sequence that cut the reply (with `finish="stop_sequence"`)."""
    same_round: bool = False
    """Chat Completions: the reply's calls join the `$web_search` round before it."""


@dataclass(frozen=True)
class Error:
    status: int
    message: str
    error_type: str
    code: str | None
    retry_after: float | None
    headers: Mapping[str, str] = field(default_factory=dict)


Step = Reply | WebSearch | Error

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error_type_for(status: int) -> str:
    """The error `type` the gateway's error bodies carry for a status (Anthropic's names)."""
    return _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def tool_calls_of(calls: Sequence[Mapping[str, Any]] | None) -> tuple[ToolCall, ...]:
    out = []
    for call in calls or ():
        name, args, raw = call.get("name"), call.get("args", {}), call.get("arguments")
        if not isinstance(name, str) or not name or not isinstance(args, dict):
            msg = f"tool_calls: each needs a 'name' (str) and 'args' (dict), got {call!r}"
            raise ValueError(msg)
        if raw is not None and (not isinstance(raw, str) or "args" in call):
            msg = f"tool_calls: 'arguments' is the raw string, instead of 'args'; got {call!r}"
            raise ValueError(msg)
        out.append(ToolCall(name, dict(args), raw))
    return tuple(out)


def search_results(
    query: str, results: Sequence[Mapping[str, str]] | None
) -> tuple[dict[str, str], ...]:
    if results is None:
        slug = "-".join(query.lower().split()) or "search"
        return ({"title": f"About {query}", "url": f"https://example.com/{slug}"},)
    for result in results:
        if not {"title", "url"} <= set(result):
            raise ValueError(f"web search results need 'title' and 'url', got {result!r}")
    return tuple(dict(r) for r in results)
