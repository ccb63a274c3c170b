"""The multi-turn rules the documents state, checked on every request the fake gateway receives.

- Reasoning comes back unchanged: Messages thinking blocks "Devuélvelo sin cambios junto con la
  firma" (000/001, `ThinkingBlock`): a signed block must carry the signature issued for exactly
  its text. Chat Completions `reasoning_content` and `tool_calls`: "Devuélvelo(as) sin cambios"
  (004): a turn the gateway issued must come back with both as issued.
- A tool-call turn carries its reasoning: Kimi refuses one without ("thinking is enabled but
  reasoning_content is missing in assistant tool call message at index N").
- Tool results answer tool calls: each result names a call of the assistant turn right before it,
  and each call of that turn is answered before the conversation goes on.

Pure: `Issued` remembers what the gateway sent; `problems` returns what breaks a rule.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass, field
from typing import Any

_SIGNING_KEY = b"langchain-kimi FakeKimiGateway"
"""Fixed, so signatures are reproducible and any fake gateway accepts another one's history."""
_MISSING_REASONING = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message "
    "at index {}"
)


def sign(text: str) -> str:
    """A signature that looks like the service's (base64, opaque) and verifies `text`."""
    digest = hmac.new(_SIGNING_KEY, text.encode("utf-8"), hashlib.sha256).digest()
    return base64.b64encode(b"\x12\x0cfake-kimi-gw" + digest + digest[:16]).decode("ascii")


@dataclass
class Issued:
    """What the gateway sent, by tool call id: the Chat Completions assistant message, or the
    Messages content block carrying that id."""

    openai_turns: dict[str, dict[str, Any]] = field(default_factory=dict)
    anthropic_blocks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def remember_openai(self, message: dict[str, Any]) -> None:
        for call in message.get("tool_calls") or []:
            self.openai_turns[call["id"]] = message

    def remember_anthropic(self, content: list[dict[str, Any]]) -> None:
        for block in content:
            key = block.get("id") or block.get("tool_use_id")
            if block["type"] != "thinking" and key is not None:
                self.anthropic_blocks[f"{block['type']}:{key}"] = block


def problems(body: dict[str, Any], protocol: str, issued: Issued) -> list[str]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    if protocol == "anthropic":
        return _anthropic(messages, issued)
    return _openai(messages, issued)


def _openai(messages: list[Any], issued: Issued) -> list[str]:
    found: list[str] = []
    expected: dict[str, int] = {}  # call id -> index of the assistant turn still to be answered
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role != "tool" and expected:
            found.append(_unanswered(sorted(expected), expected))
            expected = {}
        if role == "assistant" and message.get("tool_calls"):
            calls = [c for c in message["tool_calls"] if isinstance(c, dict)]
            if not message.get("reasoning_content"):
                found.append(_MISSING_REASONING.format(index))
            found += _openai_unchanged(index, message, calls, issued)
            expected = {str(c.get("id")): index for c in calls}
        elif role == "tool":
            call_id = str(message.get("tool_call_id"))
            if expected.pop(call_id, None) is None:
                found.append(
                    f"messages[{index}]: tool message with tool_call_id {call_id!r} answers no "
                    "tool call of the assistant message before it"
                )
    if expected:
        found.append(_unanswered(sorted(expected), expected))
    return found


def _unanswered(ids: list[str], expected: dict[str, int]) -> str:
    where = expected[ids[0]]
    return (
        f"messages[{where}]: an assistant message with tool_calls must be followed by tool "
        f"messages answering each tool_call_id; not answered: {ids}"
    )


def _openai_unchanged(
    index: int, message: dict[str, Any], calls: list[dict[str, Any]], issued: Issued
) -> list[str]:
    original = next(
        (issued.openai_turns[c["id"]] for c in calls if c.get("id") in issued.openai_turns), None
    )
    if original is None:
        return []  # not issued by this gateway (another model's turn, a hand-written example)
    changed = [
        name
        for name in ("reasoning_content", "tool_calls")
        if message.get(name) != original.get(name)
    ]
    if not changed:
        return []
    return [
        f"messages[{index}]: {' and '.join(changed)} of an assistant turn must be sent back "
        "unchanged in later turns"
    ]


def _anthropic(messages: list[Any], issued: Issued) -> list[str]:
    found: list[str] = []
    expected: list[str] = []  # tool_use ids of the last assistant turn, to answer next
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if message.get("role") == "assistant":
            if expected:
                found.append(_tool_use_without_result(index - 1, expected))
            found += _assistant_blocks(index, blocks, issued)
            expected = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
            continue
        answered = [str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"]
        unexpected = [a for a in answered if a not in expected]
        if unexpected:
            found.append(
                f"messages.{index}: unexpected tool_use_id found in tool_result blocks: "
                f"{unexpected}. Each tool_result block must have a corresponding tool_use block "
                "in the previous message."
            )
        missing = [e for e in expected if e not in answered]
        if missing:
            found.append(_tool_use_without_result(index - 1, missing))
        expected = []
    if expected:
        found.append(_tool_use_without_result(len(messages) - 1, expected))
    return found


def _tool_use_without_result(index: int, ids: list[str]) -> str:
    return (
        f"messages.{index}: tool_use ids were found without tool_result blocks immediately "
        f"after: {ids}. Each tool_use block must have a corresponding tool_result block in the "
        "next message."
    )


def _assistant_blocks(index: int, blocks: list[dict[str, Any]], issued: Issued) -> list[str]:
    found: list[str] = []
    has_thinking = False
    for position, block in enumerate(blocks):
        kind = block.get("type")
        if kind in ("thinking", "redacted_thinking"):
            has_thinking = True
        signed = kind == "thinking" and "signature" in block
        if signed and block.get("signature") != sign(str(block.get("thinking"))):
            found.append(
                f"messages.{index}.content.{position}: Invalid `signature` in `thinking` "
                "block (thinking must be sent back unchanged with its signature)"
            )
        key = block.get("id") or block.get("tool_use_id")
        original = issued.anthropic_blocks.get(f"{kind}:{key}")
        if original is not None and block != original:
            found.append(
                f"messages.{index}.content.{position}: a {kind} block of an assistant turn must "
                "be sent back unchanged in later turns"
            )
    if not has_thinking and any(b.get("type") == "tool_use" for b in blocks):
        found.append(_MISSING_REASONING.format(index))
    return found
