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
