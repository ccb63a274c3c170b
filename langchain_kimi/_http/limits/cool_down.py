"""The shared cool-down of one (gateway, key): every call waits until the pause a refusal asked for
has passed.

Sans-I/O, like every part of the controller (`controller.py`). Used when pacing is off
(`adaptive_concurrency=False`): a 429, or a 503 / 529 with `Retry-After`, holds every call back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import Outcome


@dataclass
class CoolDown:
    """When every call of the pool may go again; `throttles`: a 429 pauses them too."""

    throttles: bool
    _resume_at: float = field(default=float("-inf"), repr=False)

    def delay(self, now: float) -> float:
        """Seconds until the pause is over (0: it is)."""
        return max(0.0, self._resume_at - now)

    def record(self, outcome: Outcome, now: float) -> None:
        overloaded = outcome.kind == "overloaded" and outcome.retry_after is not None
        if overloaded or (outcome.kind == "throttled" and self.throttles):
            pause = outcome.retry_after
            if pause is None or pause <= 0:
                pause = KNOBS.default_cool_down if outcome.kind == "throttled" else 0.0
            # A call whose pool timeout is shorter fails at once instead (`admission`).
            self._resume_at = max(self._resume_at, now + min(pause, KNOBS.retry_after_cap))
