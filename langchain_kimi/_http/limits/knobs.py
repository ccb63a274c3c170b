"""Every tunable number of the rate policy, the retries and the connections, in one table.

The modules of `limits/` read their numbers from `KNOBS` and nowhere else; the docs render the
table (`docs/hooks.py`, `<!-- table:rate-knobs -->`) and write single values as `{knob:NAME}`,
so a page cannot state a number the code does not use.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


def _knob(value: float, unit: str, meaning: str) -> Any:
    return field(default=value, metadata={"unit": unit, "meaning": meaning})


@dataclass(frozen=True)
class Knobs:
    """The numbers; `dataclasses.fields(Knobs)` carries each one's unit and meaning."""

    start_rate: float = _knob(10.0, "requests/s", "send rate of a key before anything is known")
    doubling: float = _knob(
        0.25, "s", "the send rate doubles this often while nothing is refused for `span`"
    )
    cut: float = _knob(
        0.7,
        "share",
        "a 429 cuts the send rate to this share (never below this share of the"
        " answers per second over the last `span`)",
    )
    growth: float = _knob(0.2, "share", "after a 429 the send rate grows by this share per second")
    span: float = _knob(
        2.5, "s", "time after the last 429 before the rate doubles again; the answers it measures"
    )
    backoff_first: float = _knob(
        0.5, "s", "first wait before a retry when the gateway names none (it doubles per retry)"
    )
    backoff_cap: float = _knob(
        8.0, "s", "longest such wait; the send rate never falls below one request per it"
    )
    idle_connections: int = _knob(
        100,
        "connections",
        "idle keep-alive connections a client keeps at most (the openai and"
        " anthropic clients' cap; httpx keeps 20)",
    )


KNOBS = Knobs()
"""The shipped values."""


def rows() -> list[tuple[str, str, str, str]]:
    """(name, value, unit, meaning) of every knob, in the table's order."""
    return [
        (
            knob.name,
            format_value(getattr(KNOBS, knob.name)),
            knob.metadata["unit"],
            knob.metadata["meaning"],
        )
        for knob in fields(Knobs)
    ]


def format_value(value: float) -> str:
    """A knob's value as the docs write it: `0.25`, `10`, `4,000`."""
    return f"{value:,g}" if value != int(value) else f"{int(value):,}"
