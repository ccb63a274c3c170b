"""Raw usage objects added up (the `$web_search` rounds of one call, the calls of a `generate()`).

langchain-core's `merge_dicts` keeps one of two equal numbers instead of adding them, so it cannot
sum usage: two rounds of 20 completion tokens each would count 20.
"""

from __future__ import annotations

from typing import Any


def sum_usage(total: dict[str, Any] | None, part: dict[str, Any]) -> dict[str, Any]:
    """`total` + `part`, field by field (nested details too); other values: the first one seen."""
    summed = dict(total or {})
    for key, value in part.items():
        old = summed.get(key)
        if isinstance(value, dict):
            summed[key] = sum_usage(old if isinstance(old, dict) else None, value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            summed[key] = (old if isinstance(old, int | float) else 0) + value
        elif key not in summed:
            summed[key] = value
    return summed
