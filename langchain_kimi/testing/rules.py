"""The multi-turn rules the documents state, checked on every request the fake gateway receives.

- Reasoning comes back unchanged: Messages thinking blocks "Devuélvelo sin cambios junto con la
  firma" (000/001, `ThinkingBlock`): a signature the gateway issued must come back with exactly
  its text (altered, stripped or dropped: refused); a well-formed signature it did not issue
  (a history recorded from the service) cannot be verified here, so it is accepted and listed
  in `Judged.unverified`. Chat Completions `reasoning_content` and `tool_calls`: "Devuélvelo(as)
  sin cambios" (004): a turn the gateway issued must come back with both as issued.
- A tool-call turn carries its reasoning: Kimi refuses one without ("thinking is enabled but
  reasoning_content is missing in assistant tool call message at index N"); ChatKimi's
  placeholder for a foreign turn rests on `chat-tool-turn-reasoning` /
  `messages-tool-turn-thinking` (`assumptions.py`).
- Tool results answer tool calls: each result names a call of the assistant turn right before it,
  and each call of that turn is answered before the conversation goes on. A `$web_search` call
  is answered with its arguments (004: "reenvía function.arguments de cada llamada como
  contenido de un mensaje tool"); another answer rests on `web-search-limit-answer`.
- Block-level `cache_control` marks may ride on any block sent back (000: "las marcas en bloques
  de mensaje no lo sustituyen"): they are not a change.

Pure: `Issued` remembers what the gateway sent; `problems` returns what breaks a rule.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from dataclasses import dataclass, field
from typing import Any

from langchain_kimi._contract import FOREIGN_TURN_REASONING
from langchain_kimi.testing.assumptions import Assumed

_SIGNING_KEY = b"langchain-kimi FakeKimiGateway"
"""Fixed, so signatures are reproducible and any fake gateway accepts another one's history."""
_SIGNATURE_PREFIX = b"\x12\x0cfake-kimi-gw"
_MISSING_REASONING = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message "
    "at index {}"
)


def sign(text: str) -> str:
    """A signature that looks like the service's (base64, opaque) and verifies `text`."""
    digest = hmac.new(_SIGNING_KEY, text.encode("utf-8"), hashlib.sha256).digest()
    return base64.b64encode(_SIGNATURE_PREFIX + digest + digest[:16]).decode("ascii")


def signature_kind(signature: Any) -> str:
    """`ours` (this fake's form), `foreign` (a well-formed opaque token it did not issue: at
    least 32 characters of the base64 / base64url alphabet) or `malformed`."""
    if not isinstance(signature, str) or not _WELL_FORMED.fullmatch(signature):
        return "malformed"
    try:
        raw = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return "foreign"
    return "ours" if raw.startswith(_SIGNATURE_PREFIX) else "foreign"


_WELL_FORMED = re.compile(r"[A-Za-z0-9+/_-]{32,}={0,2}")


@dataclass
class Issued:
    """What the gateway sent, by tool call id: the Chat Completions assistant message, or the
    Messages content block carrying that id (and the thinking blocks of its turn)."""

    openai_turns: dict[str, dict[str, Any]] = field(default_factory=dict)
    anthropic_blocks: dict[str, dict[str, Any]] = field(default_factory=dict)
    anthropic_thinking: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    reasoning: set[str] = field(default_factory=set)
    """Every thinking text issued (a block coming back with it but no signature was stripped)."""

    def remember_openai(self, message: dict[str, Any]) -> None:
        for call in message.get("tool_calls") or []:
            self.openai_turns[call["id"]] = message

    def remember_anthropic(self, content: list[dict[str, Any]]) -> None:
        thinking = [b for b in content if b["type"] == "thinking"]
        self.reasoning |= {b["thinking"] for b in thinking}
        for block in content:
            key = block.get("id") or block.get("tool_use_id")
            if block["type"] != "thinking" and key is not None:
                self.anthropic_blocks[f"{block['type']}:{key}"] = block
            if block["type"] == "tool_use":
                self.anthropic_thinking[block["id"]] = thinking


@dataclass
class Judged:
    """Where one request's judgement is written: the assumption choices (and their record), the
    request's number, and the signatures accepted without verification."""

    assumed: Assumed = field(default_factory=Assumed)
    request: int = 0
    unverified: list[str] = field(default_factory=list)


def problems(
    body: dict[str, Any], protocol: str, issued: Issued, judged: Judged | None = None
) -> list[str]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    judged = judged if judged is not None else Judged()
    if protocol == "anthropic":
        return _anthropic(messages, issued, judged)
    return _openai(messages, issued, judged)


def _openai(messages: list[Any], issued: Issued, judged: Judged) -> list[str]:
    found: list[str] = []
    expected: dict[str, int] = {}  # call id -> index of the assistant turn still to be answered
    searches: dict[str, str] = {}  # $web_search call id -> its arguments
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role != "tool" and expected:
            found.append(_unanswered(sorted(expected), expected))
            expected = {}
        if role == "assistant" and message.get("tool_calls"):
            calls = [c for c in message["tool_calls"] if isinstance(c, dict)]
            found += _openai_reasoning(index, message, calls, issued, judged)
            expected = {str(c.get("id")): index for c in calls}
            searches = {
                str(c.get("id")): str((c.get("function") or {}).get("arguments"))
                for c in calls
                if (c.get("function") or {}).get("name") == "$web_search"
            }
        elif role == "tool":
            call_id = str(message.get("tool_call_id"))
            if expected.pop(call_id, None) is None:
                found.append(
                    f"messages[{index}]: tool message with tool_call_id {call_id!r} answers no "
                    "tool call of the assistant message before it"
                )
            elif call_id in searches and message.get("content") != searches[call_id]:
                refusal = judged.assumed.judge(
                    "web-search-limit-answer",
                    judged.request,
                    f"messages[{index}]: a $web_search call answered with other text than its "
                    "arguments",
                )
                found += [refusal] if refusal else []
    if expected:
        found.append(_unanswered(sorted(expected), expected))
    return found


def _openai_reasoning(
    index: int, message: dict[str, Any], calls: list[dict[str, Any]], issued: Issued, judged: Judged
) -> list[str]:
    if not message.get("reasoning_content"):
        return [_MISSING_REASONING.format(index)]
    found = _openai_unchanged(index, message, calls, issued)
    foreign = not any(c.get("id") in issued.openai_turns for c in calls)
    if foreign and message.get("reasoning_content") == FOREIGN_TURN_REASONING:
        refusal = judged.assumed.judge(
            "chat-tool-turn-reasoning",
            judged.request,
            f"messages[{index}]: a tool-call turn with the placeholder reasoning_content",
        )
        found += [refusal] if refusal else []
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


def _anthropic(messages: list[Any], issued: Issued, judged: Judged) -> list[str]:
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
            found += _assistant_blocks(index, blocks, issued, judged)
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


def _without_marks(block: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in block.items() if key != "cache_control"}


def _assistant_blocks(
    index: int, blocks: list[dict[str, Any]], issued: Issued, judged: Judged
) -> list[str]:
    found: list[str] = []
    for position, block in enumerate(blocks):
        where = f"messages.{index}.content.{position}"
        if block.get("type") == "thinking":
            found += _thinking_block(where, block, issued, judged)
        key = block.get("id") or block.get("tool_use_id")
        original = issued.anthropic_blocks.get(f"{block.get('type')}:{key}")
        if original is not None and _without_marks(block) != original:
            found.append(
                f"{where}: a {block.get('type')} block of an assistant turn must be sent back "
                "unchanged in later turns"
            )
    return found + _turn_thinking(index, blocks, issued, judged)


def _thinking_block(where: str, block: dict[str, Any], issued: Issued, judged: Judged) -> list[str]:
    text = str(block.get("thinking"))
    if "signature" not in block:
        if text in issued.reasoning:
            return [f"{where}: `signature` missing from a signed `thinking` block (stripped)"]
        return []
    kind = signature_kind(block.get("signature"))
    if kind == "foreign":
        judged.unverified.append(f"request #{judged.request} {where}")
        return []
    if kind == "malformed" or block.get("signature") != sign(text):
        return [
            f"{where}: Invalid `signature` in `thinking` block (thinking must be sent back "
            "unchanged with its signature)"
        ]
    return []


def _turn_thinking(
    index: int, blocks: list[dict[str, Any]], issued: Issued, judged: Judged
) -> list[str]:
    """A tool-use turn's thinking: as issued when the gateway issued the turn; else some."""
    uses = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
    if not uses:
        return []
    thinking = [
        _without_marks(b) for b in blocks if b.get("type") in ("thinking", "redacted_thinking")
    ]
    ours = next(
        (issued.anthropic_thinking[u] for u in uses if u in issued.anthropic_thinking), None
    )
    if ours is not None:
        if thinking != ours:
            return [
                f"messages.{index}: the signed thinking block issued with this turn's tool_use "
                "was dropped or replaced (it must be sent back unchanged)"
            ]
        return []
    if not thinking:
        return [_MISSING_REASONING.format(index)]
    if all(b.get("type") == "thinking" and "signature" not in b for b in thinking):
        refusal = judged.assumed.judge(
            "messages-tool-turn-thinking",
            judged.request,
            f"messages.{index}: a tool-use turn whose thinking is an unsigned placeholder",
        )
        return [refusal] if refusal else []
    return []
