"""Content blocks langchain-core cannot read, refused in ChatKimi's words before it tries.

Before a chat model's hooks run, langchain-core turns LangChain's v0 data blocks
(`{"type": "image" | "audio" | "file", "source_type": ...}`) into v1 blocks, reading one key per
source type unguarded: `url`, `data` (base64), `id`, and `url` again for `source_type: "text"`,
though a v0 text file holds its text in `text`. A block without that key dies inside
langchain-core with a bare `KeyError`, and a block whose `type` is not a string with a bare
`TypeError`. ChatKimi checks every way in first (`_convert_input`, `generate`, `agenerate`).
It sends text, image and video parts only, so a file or audio block gets the refusal the request
builders give such a part, and an image block the key it lacks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langchain_core.messages import BaseMessage

_KEY_READ = {"url": "url", "base64": "data", "id": "id", "text": "url"}
"""The key langchain-core reads for each v0 `source_type`."""
_V0_DATA_TYPES = frozenset({"image", "audio", "file"})


def refuse_unreadable_blocks(histories: Iterable[Sequence[BaseMessage]]) -> None:
    """`ValueError` for the first block langchain-core could not read."""
    for messages in histories:
        for index, message in enumerate(messages):
            content = message.content
            for position, block in enumerate(content if isinstance(content, list) else []):
                if isinstance(block, dict):
                    where = f"messages[{index}] ({type(message).__name__}), content[{position}]"
                    _refuse_if_unreadable(block, where)


def _refuse_if_unreadable(block: dict[str, object], where: str) -> None:
    kind, source = block.get("type"), block.get("source_type")
    if "type" in block and not isinstance(kind, str):
        msg = f"{where}: a content block's 'type' must be a string, got {kind!r:.60}"
        raise ValueError(msg)
    if kind not in _V0_DATA_TYPES or not isinstance(source, str) or source not in _KEY_READ:
        return
    key = _KEY_READ[source]
    if key in block:
        return
    if kind == "image":
        msg = f"a LangChain v0 image block with source_type {source!r} needs its {key!r} ({where})"
    else:
        msg = f"unsupported content block type {kind!r} (text, image and video only)"
        if kind == "file":
            msg += "; send a file's text as a text block"
    raise ValueError(msg)
