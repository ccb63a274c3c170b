"""The send rate of one (gateway, key): how fast its requests may go. Sans-I/O.

One paragraph says it all. A key starts at `start_rate` requests/s, doubling every `doubling`
seconds. A 429 cuts the rate to `cut` times the rate its request was sent at, but never below
`cut` times the answers per second of the last `span`; the 429s of requests sent before that cut
cut nothing more (they answer the rate the cut already corrected: TCP's one cut per window). After
a cut the rate grows by `growth` per second, and once `span` has passed without a 429 it doubles
again (a limit that rose is found within seconds). It never falls below one request per
`backoff_cap`. Overloads (503, 529) do not touch the rate: a busy gateway that still answers most
calls must not slow the others. The policy never learns which kind of limit it faces (a token
bucket, a window, a concurrency or token limit): every kind answers too much with 429s.

`gate.Gate` calls it under its lock, with its clock, for every thread and event loop.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from langchain_kimi._http.limits.knobs import KNOBS

MAX_RATE = 1e6
"""Requests/s that count as unpaced (a doubling rate stops there instead of overflowing)."""


@dataclass(frozen=True)
class Sent:
    """A request as the policy saw it go: when, and at what rate."""

    at: float
    rate: float


class RatePolicy:
    """The send rate of one (gateway, key). Not thread-safe: `gate.Gate` holds the lock."""

    def __init__(self, now: float, *, adaptive: bool = True) -> None:
        self.adaptive = adaptive
        """False (`adaptive_concurrency=False`): never paced; refused calls still wait."""
        self.rate = KNOBS.start_rate if adaptive else math.inf
        self._updated = now
        self._next_send = -math.inf
        self._cut_at = -math.inf
        self._refused_at = -math.inf
        self._answers: deque[float] = deque()

    def __repr__(self) -> str:
        return f"RatePolicy(rate={self.rate:.3g}/s)"

    def delay(self, now: float) -> float:
        """Seconds until the next request may go (0: now)."""
        self._grow(now)
        return max(0.0, self._next_send - now)

    def sent(self, now: float) -> Sent:
        """A request goes now: the next one is spaced `1 / rate` after it."""
        self._grow(now)
        if self.rate < MAX_RATE:
            self._next_send = max(self._next_send, now) + 1.0 / self.rate
        return Sent(now, self.rate)

    def answered(self, now: float) -> None:
        """The gateway admitted a request (its answer or first stream event came back)."""
        self._answers.append(now)
        self._forget(now)

    def refused(self, request: Sent, now: float) -> None:
        """A 429 (not a spent quota) came back for `request`."""
        if not self.adaptive:
            return
        self._grow(now)
        self._refused_at = now
        if request.at < self._cut_at:
            return
        self._forget(now)
        admitted = len(self._answers) / KNOBS.span
        floor = max(1.0 / KNOBS.backoff_cap, KNOBS.cut * admitted)
        self.rate = max(floor, KNOBS.cut * min(self.rate, request.rate))
        self._cut_at = now

    def _grow(self, now: float) -> None:
        """Bring the rate up to `now`: `growth` per second until `span` after the last 429,
        doubling every `doubling` seconds from then on."""
        if now <= self._updated or not self.adaptive:
            return
        doubling_from = max(self._updated, self._refused_at + KNOBS.span)
        slow = max(0.0, min(now, doubling_from) - self._updated)
        fast = max(0.0, now - doubling_from)
        rate = self.rate * (1.0 + KNOBS.growth) ** slow * 2.0 ** min(64.0, fast / KNOBS.doubling)
        self.rate = min(MAX_RATE, rate)
        self._updated = now

    def _forget(self, now: float) -> None:
        while self._answers and self._answers[0] < now - KNOBS.span:
            self._answers.popleft()
