"""The content blocks a Messages request may carry, checked once the turns are built.

Whatever a block came from — the caller's own Anthropic-native block, a stored raw block replayed
unchanged, a rebuilt tool call — it leaves only in a shape the request documents give it (000 /
001 `ContentBlock`: the block types of the model's document, each with its required fields of
the documented types); otherwise a `ValueError` names the turn, the block and the field, before
anything is sent. The documents leave blocks open (extra keys are allowed), and so does this.
"""

from __future__ import annotations

from typing import Any

from langchain_kimi._request.profiles import Capabilities

_REQUIRED: dict[str, dict[str, tuple[type, ...]]] = {
    "text": {"text": (str,)},
    "image": {"source": (dict,)},
    "thinking": {"thinking": (str,)},
    "tool_use": {"id": (str,), "name": (str,), "input": (dict,)},
    "tool_result": {"tool_use_id": (str,), "content": (str, list)},
    "server_tool_use": {"id": (str,), "name": (str,), "input": (dict,)},
    "web_search_tool_result": {"tool_use_id": (str,), "content": (list, dict)},
}
_OPTIONAL: dict[str, dict[str, tuple[type, ...]]] = {
    "thinking": {"signature": (str,)},
    "tool_result": {"is_error": (bool,)},
}
_IMAGE_SOURCES = ("base64", "url")
_TYPE_NAMES = {str: "a string", dict: "an object", list: "a list", bool: "true or false"}


def check_turns(turns: list[dict[str, Any]], caps: Capabilities) -> None:
    """Refuse the first block no document of this model lets a request carry."""
    for index, turn in enumerate(turns):
        content = turn["content"]
        for position, block in enumerate(content if isinstance(content, list) else []):
            problem = _problem(block, caps)
            if problem is not None:
                msg = f"messages[{index}].content[{position}] ({turn['role']} turn): {problem}"
                raise ValueError(msg)


def _allowed(caps: Capabilities) -> tuple[str, ...]:
    kinds = ["text", "thinking", "tool_use", "tool_result"]
    if caps.image_inputs or not caps.known:
        kinds.insert(1, "image")
    if caps.server_tool_blocks or not caps.known:
        kinds += ["server_tool_use", "web_search_tool_result"]
    return tuple(kinds)


def _problem(block: Any, caps: Capabilities) -> str | None:
    if not isinstance(block, dict):
        return f"a content block must be an object, got {block!r:.60}"
    kind = block.get("type")
    if not isinstance(kind, str):
        return f"a content block needs 'type' as a string, got {kind!r:.60}"
    allowed = _allowed(caps)
    if kind not in allowed:
        documented = ", ".join(allowed)
        return f"{kind!r} blocks have no form in {caps.model} Messages requests ({documented})"
    fields = {**_REQUIRED[kind], **_OPTIONAL.get(kind, {})}
    for name, types in fields.items():
        if name not in block and name not in _REQUIRED[kind]:
            continue
        value = block.get(name)
        if name not in block or not isinstance(value, types):
            wanted = " or ".join(_TYPE_NAMES[t] for t in types)
            got = "nothing" if name not in block else f"{value!r:.60}"
            return f"a {kind} block needs {name!r} as {wanted}, got {got}"
    return _inner_problem(kind, block, caps)


def _inner_problem(kind: str, block: dict[str, Any], caps: Capabilities) -> str | None:
    if kind == "image":
        source_type = block["source"].get("type")
        if source_type not in _IMAGE_SOURCES:
            return f"an image block's source type must be 'base64' or 'url', got {source_type!r}"
    if kind == "tool_result" and isinstance(block["content"], list):
        if not caps.tool_result_blocks and caps.known:
            return f"{caps.model} takes a tool_result's content as a string only"
        for part in block["content"]:
            inner = _problem(part, caps)
            if inner is not None or part.get("type") not in ("text", "image"):
                return f"in a tool_result's content: {inner or 'text and image blocks only'}"
    return None
