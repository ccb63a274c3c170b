"""The `AIMessage` contract both protocols honour (docs/internals.md): its keys and its two rules.

Every module that writes or reads a ChatKimi message names its keys from here, so the contract is
spelled once. Raw protocol data (`anthropic_blocks`, `builtin_rounds`, ...) is written by the
adapter that owns that wire; this module only names it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

PROVIDER = "kimi"
"""`response_metadata["model_provider"]`: picks the `"kimi"` content-block translator."""

REASONING = "reasoning_content"
"""`additional_kwargs`: the full reasoning text (str), deltas while streaming."""
THINKING_BLOCKS = "thinking_blocks"
"""`additional_kwargs` (anthropic): the thinking / redacted_thinking blocks as received."""
ANTHROPIC_BLOCKS = "anthropic_blocks"
"""`additional_kwargs` (anthropic): the whole assistant `content` array as received."""
RAW_TOOL_CALLS = "tool_calls"
"""`additional_kwargs` (openai): the raw tool calls as received (no `index`)."""
BUILTIN_ROUNDS = "builtin_rounds"
"""`additional_kwargs` (openai): raw messages of the `$web_search` rounds before the answer."""

RAW_USAGE = "usage"
"""`response_metadata` (anthropic): the reply's raw `usage` object, as ChatAnthropic keeps it."""
TOKEN_USAGE = "token_usage"
"""`response_metadata` (openai): the reply's raw `usage` object (summed over `$web_search`
rounds), as ChatOpenAI keeps it."""
WEB_SEARCH_LIMIT = "web_search_limit"
"""`response_metadata` (openai): `{"max_uses": n, "declined": m}` once the caller's `max_uses` was
reached (`m` `$web_search` calls were not run; the requests after the cap offer no search)."""

FOREIGN_TURN_REASONING = "(reasoning not available)"
"""What both protocols send for an assistant tool-call turn that carries no reasoning: Chat
Completions as `reasoning_content`, Messages as an unsigned `thinking` block (no signature can be
made; both Messages schemas require only `type` and `thinking`).

Kimi services reject such a turn while thinking is on ("thinking is enabled but reasoning_content
is missing in assistant tool call message at index N", 400; an empty string counts as missing).
ChatKimi's own replies always carry their reasoning; a turn without it came from elsewhere
(another model behind `with_fallbacks`, a multi-agent history, hand-written few-shot examples, a
history rebuilt from a store). The live mode's open question (`tools/live/questions.py`) sends
this same constant, so one live run settles whether the service accepts exactly it."""


def content_text(content: str | list[Any]) -> str:
    """The text of a message's content: the string, or its text parts joined (nothing else)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and part.get("type") == "text":
            parts.append(str(part.get("text") or ""))
    return "".join(parts)


def reasoning_text(message: AIMessage) -> str:
    """`additional_kwargs["reasoning_content"]`, or "" when absent or not a string."""
    value = message.additional_kwargs.get(REASONING)
    return value if isinstance(value, str) else ""


def raw_unchanged(message: AIMessage, *, raw_text: str, raw_reasoning: str) -> bool:
    """The one "unchanged" rule: the message's current text and reasoning still equal what its
    stored raw form says (`raw_text` / `raw_reasoning`, computed by the protocol that owns it).

    Unchanged, the raw form may be used verbatim; changed, it is rebuilt from the fields.
    A message without `reasoning_content` makes no claim about reasoning.
    """
    if raw_text != content_text(message.content):
        return False
    stored = message.additional_kwargs.get(REASONING)
    return stored is None or stored == raw_reasoning


def dicts(value: Any) -> list[dict[str, Any]]:
    """The dict items of a list (raw protocol data may hold anything)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]
