"""JSON on the hot paths (request bodies, stream events), through orjson.

orjson (already installed with langchain-core, via langsmith) serializes a 4 MB history about
forty times faster than the standard library and parses stream events faster too (measured in
`docs/benchmarks.md`). Anything it refuses — non-string keys, integers beyond 64 bits — falls
back to the standard library.

NaN and infinities are not JSON. orjson writes them as `null`; the standard library would write
`NaN` / `Infinity`, which no JSON parser on the gateway's side has to accept. Every path here
writes `null`, so a tool-call argument holding `float("nan")` is sent as `null` whichever path
serializes it.

A value with no JSON form — a string holding a lone surrogate (it has no UTF-8 form), bytes, a
set, an object, a dict that contains itself, nesting deeper than `MAX_DEPTH` — is refused with a
`ValueError` / `TypeError` naming where it is (`messages[0].content[1].text`), never with the bare
error of the encoder that met it. Finding the place costs a walk of the value, taken only once
orjson has refused it.

JSON we receive (a reply, an error body, a stream event) nests at most `MAX_READ_DEPTH` levels,
and tool-call arguments at most `MAX_DEPTH`: `loads` counts the brackets first, in one linear
scan, and refuses deeper text with `TooDeepError` (a `ValueError`) before any parser recurses.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from itertools import accumulate
from typing import Any

import orjson

MAX_DEPTH = 254
"""The most arrays and objects a value to send may nest: orjson's own limit (it refuses the
255th), applied to the standard library's fallback too (which would otherwise stop at the
interpreter's recursion limit)."""
MAX_READ_DEPTH = 512
"""The most arrays and objects received JSON may nest: twice what a request may carry, half the
interpreter's default recursion limit (the standard library parses what orjson refuses, and
recursively: about 1,000 levels raise `RecursionError`; orjson stops at 1,024)."""
_SURROGATE = re.compile("[\ud800-\udfff]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LONE = ", which UTF-8 cannot encode (text must be valid Unicode): remove or replace it"
_NOT_JSON = ", which is not JSON: JSON carries strings, numbers, booleans, None, lists and dicts"


def dumps_bytes(value: Any, *, what: str = "the request body") -> bytes:
    """Compact UTF-8 JSON: the bytes `json.dumps(..., ensure_ascii=False)` gives, except that
    NaN and infinities become `null`. `what` names the value in a refusal."""
    try:
        return orjson.dumps(value)
    except TypeError:
        pass  # non-string keys, integers beyond 64 bits, or something JSON cannot carry
    refusal = _refusal(value, what)
    if refusal is not None:
        raise refusal
    return dumps_text(value, separators=(",", ":"), what=what).encode()


def dumps_text(
    value: Any, *, separators: tuple[str, str] | None = None, what: str = "the value"
) -> str:
    """`json.dumps(value, ensure_ascii=False)` (the standard library's spacing unless
    `separators`), with NaN and infinities written as `null`, as orjson writes them. A lone
    surrogate passes (a text is not bytes yet); the body holding it is refused when encoded."""
    try:
        try:
            return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=separators)
        except ValueError as exc:
            if "Out of range float" not in str(exc):
                raise
            return json.dumps(_finite(value), ensure_ascii=False, separators=separators)
    except (TypeError, ValueError, RecursionError):
        refusal = _refusal(value, what)
        if refusal is None:  # pragma: no cover - every failure of the encoder has a cause
            raise
        raise refusal from None


def _refusal(value: Any, what: str) -> ValueError | TypeError | None:
    """The error naming the first place in `value` that JSON sent as UTF-8 cannot carry."""
    found = _first_problem(value)
    if found is None:
        return None
    problem, error = found
    return error(f"{what} cannot be sent: {problem}")


def _first_problem(value: Any) -> tuple[str, type[ValueError | TypeError]] | None:
    # Depth first, in order, with an explicit stack: the value may be too deep for recursion.
    stack: list[tuple[Any, str, tuple[int, ...]]] = [(value, "", ())]
    while stack:
        item, path, parents = stack.pop()
        where = path or "the value"
        if isinstance(item, str):
            surrogate = _SURROGATE.search(item)
            if surrogate is not None:
                return f"{where} holds a lone surrogate {surrogate.group()!r}{_LONE}", ValueError
        elif not (item is None or isinstance(item, bool | int | float)):
            if not isinstance(item, dict | list | tuple):
                return f"{where} is a {type(item).__name__}{_NOT_JSON}", TypeError
            if id(item) in parents:
                return f"{where} contains itself", ValueError
            if len(parents) == MAX_DEPTH:
                return f"{_short(where)} is nested deeper than {MAX_DEPTH} levels", ValueError
            found = _key_problem(item, path)
            if found is not None:
                return found
            inner = (*parents, id(item))
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            children = [
                (child, _join(path, key, isinstance(item, dict)), inner) for key, child in pairs
            ]
            stack.extend(reversed(children))
    return None


def _key_problem(item: Any, path: str) -> tuple[str, type[ValueError | TypeError]] | None:
    if not isinstance(item, dict):
        return None
    for key in item:
        if isinstance(key, str) and _SURROGATE.search(key):
            return f"a key of {_join(path, key, True)} holds a lone surrogate{_LONE}", ValueError
        if not (key is None or isinstance(key, str | bool | int | float)):
            where = path or "the value"
            return (
                f"{where} has a key of type {type(key).__name__} (JSON keys are strings)",
                TypeError,
            )
    return None


def _join(path: str, key: Any, named: bool) -> str:
    """`path.name`, `path['odd name']` or `path[3]`."""
    if not named:
        return f"{path}[{key}]"
    if isinstance(key, str) and _NAME.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{str(key)!r}]"


def _short(path: str, limit: int = 80) -> str:
    return path if len(path) <= limit else path[:limit] + "…"


def _finite(value: Any) -> Any:
    """`value` with every NaN / infinity replaced by None (JSON's `null`)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


class TooDeepError(ValueError):
    """JSON text nested deeper than the limit it was read under (its message names it)."""


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def nesting(text: str | bytes) -> int:
    """How deep arrays and objects nest in JSON text (brackets inside strings do not count): a
    linear scan that never recurses; an unterminated string's brackets count."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    brackets = _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets), initial=0))


def depth(value: Any) -> int:
    """How deep lists and dicts nest in a parsed value, level by level (no recursion; 0 for a
    scalar)."""
    deepest = 0
    level = [value] if isinstance(value, dict | list) else []
    while level:
        deepest += 1
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list)
        ]
    return deepest


def _openers(text: str | bytes) -> int:
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return text.count(b"[") + text.count(b"{")


def loads(text: str | bytes, *, max_depth: int = MAX_READ_DEPTH) -> Any:
    """Parse JSON; raises ValueError (json.JSONDecodeError) when it is not JSON, `TooDeepError`
    when it nests deeper than `max_depth`. orjson parses without recursing (and refuses past
    1,024 levels); the depth is measured only when the text holds more than `max_depth` brackets:
    on the parsed value, or on the text before the standard library's recursive parser sees it."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        _check_depth(text, max_depth, nesting)
        # Bytes that are not UTF-8 are read with U+FFFD in place of what does not decode.
        return json.loads(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)
    _check_depth(text, max_depth, lambda _: depth(value))
    return value


def _check_depth(text: str | bytes, max_depth: int, measure: Callable[[Any], int]) -> None:
    if _openers(text) > max_depth and measure(text) > max_depth:
        msg = f"nested deeper than {max_depth} levels"
        raise TooDeepError(msg)
