"""JSON on the hot paths (request bodies, stream events), through orjson.

orjson (already installed with langchain-core, via langsmith) serializes a 4 MB history about
forty times faster than the standard library and parses stream events faster too (measured in
`docs/benchmarks.md`). Anything it refuses — non-string keys, integers beyond 64 bits — falls
back to the standard library, which then decides.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps_bytes(value: Any) -> bytes:
    """Compact UTF-8 JSON: the bytes `json.dumps(..., ensure_ascii=False)` gives, except that
    NaN and infinities become `null` (JSON has no such numbers; the standard library would
    write `NaN`, which the gateway cannot parse)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def loads(text: str | bytes) -> Any:
    """Parse JSON; raises ValueError (json.JSONDecodeError) when it is not JSON."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
