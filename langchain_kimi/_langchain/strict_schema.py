"""Strict-mode JSON schemas: the rewrite sent to the service, and the undo on what comes back.

Strict mode (OpenAI-style `strict: true`) needs every object closed and every property required;
`make_strict` rewrites a caller's schema that way (optional properties become nullable), and
`drop_optional_nulls` removes from the model's answer the nulls that rewrite made it add.
"""

from __future__ import annotations

import copy
from typing import Any


def make_strict(schema: dict[str, Any]) -> dict[str, Any]:
    """A strict-mode-compatible copy: objects with `properties` closed
    (`additionalProperties: false`), every property required, the optional ones made nullable,
    and `default`s dropped (nothing can be omitted in strict mode, so they never apply).

    The parser removes the nulls the model puts on formerly optional properties, so the caller's
    schema accepts exactly what it accepted before. Free-form maps (objects without `properties`
    or with an `additionalProperties` schema) are left open: strict mode cannot express them.
    """
    strict: dict[str, Any] = _strict_node(copy.deepcopy(schema))
    return strict


_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("$defs", "definitions")
_SUBSCHEMA_ONE = ("items", "not", "additionalProperties")


def _strict_node(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out = {key: value for key, value in node.items() if key != "default"}
    for key in _SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_strict_node(item) for item in out[key]]
    for key in _SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: _strict_node(sub) for name, sub in out[key].items()}
    for key in _SUBSCHEMA_ONE:
        if isinstance(out.get(key), dict):
            out[key] = _strict_node(out[key])
    properties = out.get("properties")
    if isinstance(properties, dict) and out.get("additionalProperties", False) is False:
        required = set(out.get("required") or [])
        out["properties"] = {
            name: _strict_node(prop) if name in required else _nullable(_strict_node(prop))
            for name, prop in properties.items()
        }
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


def _accepts_null(prop: Any) -> bool:
    if not isinstance(prop, dict):
        return True
    kind = prop.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    options = prop.get("anyOf") or prop.get("oneOf") or []
    return any(_accepts_null(option) for option in options if isinstance(option, dict))


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    if _accepts_null(prop):
        return prop
    kind = prop.get("type")
    if isinstance(kind, str) and "enum" not in prop and "const" not in prop:
        return {**prop, "type": [kind, "null"]}
    if isinstance(kind, list):
        return {**prop, "type": [*kind, "null"]}
    if isinstance(prop.get("anyOf"), list):
        return {**prop, "anyOf": [*prop["anyOf"], {"type": "null"}]}
    return {"anyOf": [prop, {"type": "null"}]}


def drop_optional_nulls(value: Any, schema: Any) -> Any:
    """Remove the `null`s strict mode forced onto properties the caller's schema left optional
    and non-nullable (a property that accepts null keeps it)."""
    if isinstance(value, list) and isinstance(schema, dict):
        items = schema.get("items")
        return [drop_optional_nulls(item, items) for item in value]
    if not isinstance(value, dict) or not isinstance(schema, dict):
        return value
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        for option in schema.get("anyOf") or schema.get("oneOf") or []:
            if isinstance(option, dict) and isinstance(option.get("properties"), dict):
                return drop_optional_nulls(value, option)
        return value
    required = set(schema.get("required") or [])
    cleaned = {}
    for key, item in value.items():
        prop = properties.get(key)
        if item is None and key in properties and key not in required and not _accepts_null(prop):
            continue
        cleaned[key] = drop_optional_nulls(item, prop)
    return cleaned
