"""JSON on the hot paths (request bodies, stream events), through orjson.

orjson (already installed with langchain-core, via langsmith) serializes a 4 MB history about
forty times faster than the standard library and parses stream events faster too (measured in
`docs/benchmarks.md`). Anything it refuses — non-string keys, integers beyond 64 bits — falls
back to the standard library.

NaN and infinities are not JSON. orjson writes them as `null`; the standard library would write
`NaN` / `Infinity`, which no JSON parser on the gateway's side has to accept. Every path here
writes `null`, so a tool-call argument holding `float("nan")` is sent as `null` whichever path
serializes it.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson


def dumps_bytes(value: Any) -> bytes:
    """Compact UTF-8 JSON: the bytes `json.dumps(..., ensure_ascii=False)` gives, except that
    NaN and infinities become `null`."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return dumps_text(value, separators=(",", ":")).encode()


def dumps_text(value: Any, *, separators: tuple[str, str] | None = None) -> str:
    """`json.dumps(value, ensure_ascii=False)` (the standard library's spacing unless
    `separators`), with NaN and infinities written as `null`, as orjson writes them."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=separators)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        return json.dumps(_finite(value), ensure_ascii=False, separators=separators)


def _finite(value: Any) -> Any:
    """`value` with every NaN / infinity replaced by None (JSON's `null`)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def loads(text: str | bytes) -> Any:
    """Parse JSON; raises ValueError (json.JSONDecodeError) when it is not JSON."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
