"""Which field of a reply has the wrong shape: the diagnosis behind "the reply could not be read".

Parsers stay lenient and fast; only when one fails does the call's guard (`_call/plans.py`) ask this
module where the reply departs from the shape the protocol documents, to name that field.

A shape is written like the JSON it describes: a dict of field shapes (an object; other keys are
free), a one-element list (a list of that shape), a type (`str`, `int`, `dict`, ...), or a tuple of
alternatives. `null` (None) passes everywhere: the parsers treat it as an absent field.
"""

from __future__ import annotations

from typing import Any

Shape = Any

_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    dict: "an object",
    list: "a list",
}


def describe(value: Any) -> str:
    """`value`'s JSON kind and a short preview, for an error message."""
    kind = {str: "string", bool: "boolean", int: "integer", float: "number", list: "list"}.get(
        type(value), "object" if isinstance(value, dict) else type(value).__name__
    )
    preview = repr(value)
    return f"{kind} {preview[:60]}{'…' if len(preview) > 60 else ''}"


def mismatch(value: Any, shape: Shape, path: str = "") -> str | None:
    """The first field of `value` that does not fit `shape`, as `path: expected …, got …`."""
    if value is None:
        return None
    if isinstance(shape, tuple):
        problems = [mismatch(value, alternative, path) for alternative in shape]
        if None in problems:
            return None
        for alternative, problem in zip(shape, problems, strict=True):
            if _kind(alternative) is type(value) or isinstance(value, _kind(alternative)):
                return problem  # the alternative it was meant to be: the deeper complaint
        wanted = " or ".join(_NAMES.get(_kind(a), "a value") for a in shape)
        return _expected(path, wanted, value)
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return _expected(path, "an object", value)
        for key, field_shape in shape.items():
            problem = mismatch(value.get(key), field_shape, f"{path}.{key}" if path else key)
            if problem is not None:
                return problem
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return _expected(path, "a list", value)
        for index, item in enumerate(value):
            problem = mismatch(item, shape[0], f"{path}[{index}]")
            if problem is not None:
                return problem
        return None
    numeric_ok = shape is float and isinstance(value, int)
    if isinstance(value, bool) and shape is not bool:
        return _expected(path, _NAMES.get(shape, shape.__name__), value)
    if not (isinstance(value, shape) or numeric_ok):
        return _expected(path, _NAMES.get(shape, shape.__name__), value)
    return None


def _kind(shape: Shape) -> type:
    if isinstance(shape, dict):
        return dict
    if isinstance(shape, list):
        return list
    return shape if isinstance(shape, type) else object


def _expected(path: str, wanted: str, value: Any) -> str:
    return f"{path or 'the body'}: expected {wanted}, got {describe(value)}"
