"""Adaptive concurrency for one connection pool: additive increase, multiplicative decrease.

Pure arithmetic, no I/O and no locking (the caller, `_admission`, holds the lock). The window is
inert (no limit of its own) until the gateway first answers 429; from then on it shrinks after a
429 and grows back slowly while the calls it lets through succeed, as TCP's congestion window
does. A shared cool-down alone would release every waiting call at once when it ends, and the
herd would hit the limit again in one burst. When `_admission` paces the pool (`_pacing`), the
window's count of what the gateway admitted of a throttled burst sets the pace.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DECREASE = 0.75
"""Multiplicative decrease after a 429. TCP Reno halves; a rate-limited gateway is not a lossy
link, and halving leaves the pool far below the admitted rate for many round trips."""


@dataclass
class AdaptiveWindow:
    """How many requests of one pool may be in flight at once, learned from 429s."""

    ceiling: int
    """The pool's own capacity: the window never exceeds it."""
    enabled: bool = True
    limit: float | None = None
    """None while inert (before the first 429, after recovering to the ceiling, or disabled)."""

    def allows(self, in_flight: int) -> bool:
        cap = self.ceiling if self.limit is None else min(self.ceiling, int(self.limit))
        return in_flight < cap

    _before: float = field(default=0.0, init=False, repr=False)  # in flight at the first 429
    _rejected: int = field(default=0, init=False, repr=False)  # 429s of that overload so far

    def throttled(self, in_flight: int) -> None:
        """The first 429 of an overload: shrink to `DECREASE` of what was in flight."""
        if not self.enabled:
            return
        self._before = min(float(in_flight), self.limit if self.limit is not None else float("inf"))
        self._rejected = 0
        self.limit = self._before
        self.throttled_again()

    def throttled_again(self) -> None:
        """A 429 of the same overload (sent before the first came back): the gateway admitted
        fewer than `DECREASE` of what was in flight, so the window is at most what it admitted."""
        if self.limit is None:  # disabled, or recovered since that overload
            return
        self._rejected += 1
        self.limit = max(1.0, min(self._before * DECREASE, self._before - self._rejected))

    def succeeded(self, demand: int) -> None:
        """A reply: grow by about one call per window of replies, while the window is what holds
        calls back (`demand` = calls in flight or queued). Calls the caller never made (its
        `max_concurrency` kept them out) never grow it, so it stays within what the caller sends."""
        if self.limit is None or demand < int(self.limit):
            return
        self.limit += 1.0 / self.limit
        if self.limit >= self.ceiling:
            self.limit = None
