"""`builtin_function` tool calls: the server-side `$web_search` on Chat Completions.

Spec: with `{"type": "web_search"}` declared, the model may answer with `tool_calls` of type
`builtin_function` named `$web_search`. The client answers each such call with a `tool` message
whose content is that call's own `function.arguments`, with the same `tool_call_id` (`name` is
not in the schema: not sent).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

BUILTIN = "builtin_function"


def is_builtin(call: dict[str, Any]) -> bool:
    return call.get("type") == BUILTIN


def is_builtin_round(calls: Iterable[dict[str, Any]]) -> bool:
    """True when there are tool calls and every one is a `builtin_function` call: the reply is
    not the answer yet (the `$web_search` loop continues)."""
    calls = list(calls)
    return bool(calls) and all(is_builtin(c) for c in calls)


def builtin_answers(
    calls: Iterable[dict[str, Any]], answered: Collection[Any] = ()
) -> list[dict[str, Any]]:
    """One `tool` message per builtin call (but those whose id is in `answered`)."""
    return [
        {"role": "tool", "tool_call_id": c["id"], "content": c["function"]["arguments"]}
        for c in calls
        if is_builtin(c) and c["id"] not in answered
    ]
