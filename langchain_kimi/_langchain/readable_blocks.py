"""Content blocks langchain-core reads before ChatKimi sees a call's messages.

`BaseChatModel` turns LangChain v0 data blocks into v1 ones (`_normalize_messages`) before any
hook of ChatKimi runs, and meets some blocks with a bare error of its own: a `type` that is a
list or a dict (`TypeError: unhashable type`), a v0 block without the key its `source_type`
reads (`KeyError: 'data'`). ChatKimi checks those blocks first, when a call's input is
converted, and refuses them with a `ValueError` naming the message and the block. Every other
block reaches the protocol's own content conversion, which says what it cannot send.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

_V0_KINDS = frozenset({"image", "audio", "file"})
_V0_KEYS = {"url": "url", "base64": "data", "id": "id", "text": "url"}
"""LangChain v0 data blocks: the key each `source_type` keeps its value under (a `text` file's
text is under `url` in v0)."""


def check(messages: Sequence[BaseMessage]) -> None:
    for index, message in enumerate(messages):
        content = message.content
        for position, block in enumerate(content if isinstance(content, list) else []):
            problem = _problem(block) if isinstance(block, dict) else None
            if problem is not None:
                where = f"messages[{index}] ({type(message).__name__}), content[{position}]"
                msg = f"{where}: {problem}"
                raise ValueError(msg)


def _problem(block: dict[str, Any]) -> str | None:
    kind = block.get("type")
    if "type" in block and not isinstance(kind, str):
        return f"a content block's 'type' must be a string, got {kind!r:.60}"
    source_type = block.get("source_type")
    if kind in _V0_KINDS and isinstance(source_type, str) and source_type in _V0_KEYS:
        key = _V0_KEYS[source_type]
        if key not in block:
            return (
                f"a LangChain v0 {kind} block with source_type {source_type!r} needs {key!r} "
                f"(v1 blocks have no source_type), got keys {sorted(block)}"
            )
    return None
