"""Every tunable number of the rate policy, in one frozen table with a one-line meaning each.

The modules of `limits/` read their numbers from `KNOBS` and nowhere else; the docs render the
table (`docs/hooks.py`, `<!-- table:rate-knobs -->`) and refer to single values as
`{knob:NAME}`, and `tests/unit_tests/http/limits/test_knobs.py` fails when a page states a number
in a rate-limit passage that the table does not hold, or names a knob it lacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


def _knob(value: float, unit: str, part: str, meaning: str) -> Any:
    return field(default=value, metadata={"unit": unit, "part": part, "meaning": meaning})


@dataclass(frozen=True)
class Knobs:
    """The numbers; `dataclasses.fields(Knobs)` carries each one's unit, part and meaning."""

    # -- retry.py: one decision per failed attempt
    backoff_first: float = _knob(
        0.5, "s", "retry", "backoff before a first retry when the gateway names no wait"
    )
    backoff_cap: float = _knob(8.0, "s", "retry", "longest backoff (it doubles per retry)")
    backoff_jitter: float = _knob(
        0.75, "share", "retry", "least share of the backoff waited (uniform draw up to 1)"
    )
    retry_after_cap: float = _knob(
        60.0, "s", "retry", "longest server-requested wait of a call without a pool timeout"
    )
    patience: float = _knob(
        900.0,
        "s",
        "retry",
        "longest a crowded call without a pool timeout loses turns to 429s before they spend"
        " retries",
    )
    # -- cool_down.py
    default_cool_down: float = _knob(
        0.5, "s", "cool-down", "pause of every call after a 429 without a wait, pacing off"
    )
    # -- admission.py: the queue and its capacity
    slow_answer: float = _knob(
        1.0, "s", "admission", "mean time a slot is held above which a full pool grows"
    )
    hold_weight: float = _knob(
        0.1, "share", "admission", "weight of each released slot in the mean hold time"
    )
    # -- in_flight.py: a concurrency limit, seen in the counts at the 429s
    cap_share: float = _knob(
        0.8, "share", "in-flight cap", "least share of the sends above the cap refused, to keep it"
    )
    cap_memory: float = _knob(2.0, "s", "in-flight cap", "the past of sends the cap is learnt from")
    cap_step: float = _knob(
        0.5, "s", "in-flight cap", "time without a 429 above the cap to raise it"
    )
    cap_backoff: float = _knob(
        2.0, "x", "in-flight cap", "a refused probe's next wait, in multiples of the last"
    )
    cap_probe: int = _knob(
        1, "requests", "in-flight cap", "first raise of a cap a step left unrefused"
    )
    # -- slow_start.py: before anything is known
    start_window: int = _knob(
        10, "requests", "slow start", "unproven requests allowed at first (TCP's initial window)"
    )
    first_horizon: float = _knob(
        0.25,
        "s",
        "slow start",
        "time after which a request not refused counts as admitted, before any 429",
    )
    min_horizon: float = _knob(0.05, "s", "slow start", "shortest horizon once a 429 was seen")
    quick_answers: float = _knob(
        1.25,
        "x",
        "slow start",
        "answers back within this many horizons (the first window's all answered, at most"
        " `late_answers` of the latest later): age proves nothing, the window bounds the"
        " unproven requests in flight",
    )
    late_answers: float = _knob(
        0.1,
        "share",
        "slow start",
        "share of the latest answers that may come back later while the answers count as quick"
        " (a busy event loop, a pause)",
    )
    answer_sample: int = _knob(
        40, "answers", "slow start", "the latest answers the quick answers are judged by"
    )
    horizon_per_refusal: float = _knob(
        2.0, "x", "slow start", "the horizon, in multiples of the slowest refusal seen"
    )
    serving_span: float = _knob(
        10.0,
        "s",
        "slow start",
        "time since the gateway last admitted one of the pool's requests in which it serves the"
        " pool (a 429 then costs a call that went with others its turn, not a retry)",
    )
    starting_span: float = _knob(
        10.0,
        "s",
        "slow start",
        "time after a pool's first send after `idle` in which it is starting (other processes"
        " may hold the key's rate: a 429 costs a call that went with others its turn)",
    )
    sharing_span: float = _knob(
        10.0,
        "s",
        "pacer",
        "time since the pool's last counted 429 in which a call alone shares the pool's rate"
        " (its 429s cost it turns, as its batch's did)",
    )
    window_cut: float = _knob(0.5, "share", "slow start", "share of the window a 429 keeps")
    idle: float = _knob(
        30.0, "s", "slow start", "time without a send after which a pool starts afresh"
    )
    # -- starved.py: a pool the gateway serves no more
    starved_probe: float = _knob(
        0.5, "s", "starved", "wait after a starved pool's first 429 before its next probe"
    )
    starved_probe_cap: float = _knob(
        4.0, "s", "starved", "longest wait between a starved pool's probes (it doubles)"
    )
    # -- pacer.py: from the first 429 on
    step: float = _knob(0.25, "s", "pacer", "shortest measuring step")
    step_sends: int = _knob(4, "sends", "pacer", "fewest sends a throttled step measures")
    longest_step: float = _knob(2.0, "s", "pacer", "longest step waiting for those sends")
    margin: float = _knob(
        0.9, "share", "pacer", "rate after a throttled step, of what the gateway admitted in it"
    )
    min_cut: float = _knob(0.5, "share", "pacer", "least share of its rate a throttled step keeps")
    probe: float = _knob(1.0, "requests/s", "pacer", "raise of a first clean step")
    probe_growth: float = _knob(
        2.0, "x", "pacer", "each further clean step raises by this times the last raise"
    )
    unmeasured_growth: float = _knob(
        2.0, "x", "pacer", "a clean step's raise while no step has measured the gateway"
    )
    max_probe: float = _knob(
        2.0, "share", "pacer", "largest raise of one step, of the rate (2: tripling)"
    )
    used: float = _knob(
        0.75, "share", "pacer", "share of the paced sends a clean step must make to raise the rate"
    )
    heal: float = _knob(
        2.0, "s", "pacer", "time without a 429 and without a waiting call before pacing stops"
    )
    min_rate: float = _knob(0.1, "requests/s", "pacer", "lowest rate: pacing never stops sending")
    slow_refusal: float = _knob(
        0.5,
        "s",
        "pacer",
        "429s slower than this: a step counts its sends one such refusal back",
    )
    hold_wait: float = _knob(
        2.0,
        "s",
        "pacer",
        "a step that admitted nothing, every 429 of it asking to wait longer (at most"
        " `retry_after_cap`), holds the pace until the first of those waits ends; after one"
        " such step, such a 429 holds it at once",
    )
    lookback: float = _knob(
        1.0,
        "s",
        "pacer",
        "the past whose admitted sends make the first rate; a throttled step measures at least it",
    )
    first_rate: float = _knob(
        1.0, "requests/s", "pacer", "least first rate (a first wave that got little through)"
    )
    client_burst: float = _knob(
        0.0625,
        "s",
        "pacer",
        "the client bucket's depth, in seconds of the rate (one send at least)",
    )


KNOBS = Knobs()
"""The shipped values."""


def rows() -> list[tuple[str, str, str, str, str]]:
    """(name, value, unit, part, meaning) of every knob, in the table's order."""
    return [
        (
            knob.name,
            format_value(getattr(KNOBS, knob.name)),
            knob.metadata["unit"],
            knob.metadata["part"],
            knob.metadata["meaning"],
        )
        for knob in fields(Knobs)
    ]


def format_value(value: float) -> str:
    """A knob's value as the docs write it: `0.25`, `10`, `4,000`."""
    return f"{value:,g}" if value != int(value) else f"{int(value):,}"
