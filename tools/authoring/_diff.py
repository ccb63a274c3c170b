"""`python -m tools.authoring --diff DIR`: recorded cassettes against the authored ones, by structure.

Each recorded interaction is paired with the authored interaction that has the same path and
request body; an error reply without an authored twin, with the documented error body; anything
else, with the authored plain reply of its protocol (streamed or not). What
is compared is structure only — status, field paths, event types and their order, usage keys —
never the text of the answers, which differs on every run.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools import cassette_format
from tools.live.checks import sse_events
from tools.live.exchanges import ENDPOINTS
from tools.live.loopback import CASSETTE_ROOT, error_reply, interaction_entry

_PLAIN = {
    ("/v1/messages", False): "core_cassettes/anthropic_plain.yaml#0",
    ("/v1/messages", True): "core_cassettes/anthropic_plain.yaml#1",
    ("/v1/chat/completions", False): "core_cassettes/openai_plain.yaml#0",
    ("/v1/chat/completions", True): "core_cassettes/openai_plain.yaml#1",
}
# Values under these keys are the model's own data (tool arguments), not protocol structure.
_OPAQUE = frozenset({"input", "arguments", "partial_json"})


@dataclass
class Shape:
    status: int
    fields: set[str] = field(default_factory=set)
    events: list[str] = field(default_factory=list)
    usage_keys: set[str] = field(default_factory=set)


def _paths(value: Any, prefix: str) -> set[str]:
    if isinstance(value, dict):
        found = {prefix} if prefix else set()
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            found |= {path} if key in _OPAQUE else _paths(item, path)
        return found
    if isinstance(value, list):
        return set().union({prefix}, *(_paths(item, prefix + "[]") for item in value))
    return {prefix}


def _event_name(name: str, payload: Any) -> str:
    if not isinstance(payload, dict):
        return str(payload)  # [DONE]
    if name == "content_block_start":
        return f"content_block_start:{(payload.get('content_block') or {}).get('type')}"
    if name == "content_block_delta":
        return f"content_block_delta:{(payload.get('delta') or {}).get('type')}"
    if payload.get("object") != "chat.completion.chunk":
        return name
    parts = []
    for choice in payload.get("choices") or []:
        parts += sorted(k for k, v in (choice.get("delta") or {}).items() if v not in (None, ""))
        parts += ["finish_reason"] if choice.get("finish_reason") else []
    parts += ["usage"] if payload.get("usage") else []
    return "chunk:" + "+".join(parts or ["empty"])


def _usage_dicts(value: Any) -> Iterable[dict[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "usage" and isinstance(item, dict):
                yield item
            else:
                yield from _usage_dicts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _usage_dicts(item)


def shape(status: int, content_type: str, text: str) -> Shape:
    result = Shape(status)
    if "text/event-stream" in content_type or text.startswith(("event:", "data:")):
        payloads = []
        for name, data in sse_events(text):
            try:
                payloads.append((name, json.loads(data)))
            except ValueError:
                payloads.append((name, data.strip()))
        names = [_event_name(name, payload) for name, payload in payloads]
        result.events = [name for name, _ in itertools.groupby(names)]
        for name, payload in payloads:
            result.fields |= _paths(payload, name)
    else:
        try:
            payload = json.loads(text)
        except ValueError:
            return result
        result.fields = _paths(payload, "body")
        payloads = [("body", payload)]
    for _, payload in payloads:
        for usage in _usage_dicts(payload):
            result.usage_keys |= _paths(usage, "")
    return result


def _authored_index() -> dict[Any, tuple[str, Shape]]:
    index: dict[Any, tuple[str, Shape]] = {}
    for path in sorted(CASSETTE_ROOT.rglob("*.yaml")):
        name = path.relative_to(CASSETTE_ROOT).as_posix()
        for number, interaction in enumerate(cassette_format.load_interactions(str(path))):
            key, reply = interaction_entry(interaction)
            label = f"{name}#{number}"
            item = (label, shape(reply.status, reply.content_type, reply.body))
            index.setdefault(key, item)
            index[label] = item
    return index


def _compare(authored: Shape, recorded: Shape) -> list[str]:
    lines = []
    if authored.status != recorded.status:
        lines.append(f"status: authored {authored.status}, recorded {recorded.status}")
    for label, keys in (
        ("fields only in recorded", recorded.fields - authored.fields),
        ("fields only in authored", authored.fields - recorded.fields),
        ("usage keys only in recorded", recorded.usage_keys - authored.usage_keys),
        ("usage keys only in authored", authored.usage_keys - recorded.usage_keys),
    ):
        if keys:
            lines.append(f"{label}: {', '.join(sorted(keys))}")
    if authored.events != recorded.events:
        lines.append(f"events authored: {' > '.join(authored.events)}")
        lines.append(f"events recorded: {' > '.join(recorded.events)}")
    return lines


def _counterpart(
    index: dict[Any, tuple[str, Shape]], key: tuple[str, str], status: int, stream: bool
) -> tuple[str, Shape, str]:
    """What a recorded reply is compared with: its authored twin, else the documented shape."""
    match = index.get(key)
    if match is not None and (match[1].status == status or status < 400):
        return (*match, "same request")
    if status >= 400:
        # No authored error for this request (or a 401 where the key was wrong on purpose):
        # compare with the documented error body of the protocol.
        protocol = ENDPOINTS[key[0]]
        documented = error_reply(protocol, status, "error_type", "message", "request_id")
        return (
            f"spec ErrorResponse ({protocol})",
            shape(status, documented.content_type, documented.body),
            "documented error body",
        )
    return (*index[_PLAIN[(key[0], stream)]], "no authored twin; vs plain reply")


def diff(directory: Path) -> tuple[list[str], int, int]:
    """The report lines, how many recorded interactions there are and how many differ."""
    index, lines, differing, total = _authored_index(), [], 0, 0
    for path in sorted(directory.rglob("*.yaml")):
        for number, interaction in enumerate(cassette_format.load_interactions(str(path))):
            key, reply = interaction_entry(interaction)
            stream = bool((json.loads(key[1]) or {}).get("stream"))
            label, authored, how = _counterpart(index, key, reply.status, stream)
            found = _compare(authored, shape(reply.status, reply.content_type, reply.body))
            title = f"{path.relative_to(directory).as_posix()}#{number} vs {label} ({how})"
            lines.append(f"{title}: {'differs' if found else 'same structure'}")
            lines += [f"  {line}" for line in found]
            differing += bool(found)
            total += 1
    return lines, total, differing
