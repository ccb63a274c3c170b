"""What a request's `max_tokens` and `stop_sequences` do to a scripted reply, before it is sent.

- 000 (K3.1 Messages) `stop_sequences`: "una coincidencia exacta detiene la generación y se
  excluye de la salida" (an exact match stops the generation and is left out of the output):
  the answer text is cut before the first match; the stop reason is the `stop-sequence-reason`
  assumption's (strict: `end_turn` with `stop_sequence` naming the match, 000's enum).
- `max_tokens` (Messages) / `max_completion_tokens` or its alias `max_tokens` (004): "Máximo de
  tokens generados, incluidos el razonamiento y la respuesta final" (reasoning included): a
  reply that reaches it is cut there, reasoning first, tool calls dropped, with the stop reason
  `max_tokens` (000, 001) / `length` (004). Tokens are the script's (`usage` output_tokens) or
  the estimate of 4 characters a token.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from langchain_kimi.testing.script import Reply, Usage

CHARS_PER_TOKEN = 4


def output_budget(body: dict[str, Any], protocol: str) -> int | None:
    """The request's cap on generated tokens (None: the default, larger than any script)."""
    names = ("max_tokens",) if protocol == "anthropic" else ("max_completion_tokens", "max_tokens")
    for name in names:
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def stop_sequences(body: dict[str, Any], protocol: str) -> list[str]:
    """K3.1 Messages stops (the only model x protocol whose document has `stop_sequences`)."""
    if protocol != "anthropic" or body.get("model") == "kimi-k3":
        return []
    stops = body.get("stop_sequences")
    return [s for s in stops if isinstance(s, str) and s] if isinstance(stops, list) else []


def cut(reply: Reply, body: dict[str, Any], protocol: str) -> Reply:
    """`reply` as the request lets it out: cut at a stop sequence, then at the token budget."""
    reply = _at_stop_sequence(reply, stop_sequences(body, protocol))
    budget = output_budget(body, protocol)
    if budget is None:
        return reply
    return _at_budget(reply, budget)


def _at_stop_sequence(reply: Reply, stops: list[str]) -> Reply:
    found = [(reply.text.find(s), s) for s in stops if s in reply.text]
    if not found:
        return reply
    position, matched = min(found)
    return dataclasses.replace(
        reply,
        text=reply.text[:position],
        tool_calls=(),
        finish="stop_sequence",
        stop_sequence=matched,
    )


def _at_budget(reply: Reply, budget: int) -> Reply:
    scripted = Usage.of(reply.usage, prompt=0, text=reply.text, reasoning=reply.reasoning)
    if scripted.output_tokens < budget:
        return reply  # a reply of exactly `budget` tokens reached the cap: it was cut there
    chars = budget * CHARS_PER_TOKEN
    reasoning = reply.reasoning[:chars]
    text = reply.text[: max(0, chars - len(reasoning))]
    reasoning_tokens = min(budget, -(-len(reasoning) // CHARS_PER_TOKEN))
    usage = {**(reply.usage or {}), "output_tokens": budget, "reasoning_tokens": reasoning_tokens}
    return dataclasses.replace(
        reply,
        text=text,
        reasoning=reasoning,
        tool_calls=(),
        finish="max_tokens",
        stop_sequence=None,
        usage=usage,
    )
