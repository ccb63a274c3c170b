"""Pacing for one connection pool: after a 429, sends spread at the rate the gateway admits.

Pure arithmetic, no I/O and no locking (the caller, `_admission`, holds the lock). Inert until the
gateway first answers 429. From then on a client-side token bucket stands in front of the
gateway's: it starts empty, refills at the rate the gateway admitted and holds at most the burst
it admitted, and every send takes a token (a call whose token is not there yet reserves the next
one and waits for it, so the waits are spread, first come first served).

- **First estimate.** The throttled burst: the requests the gateway let through (the adaptive
  window's count) per second of the cool-down it asked for (50 admitted, `Retry-After: 1`:
  50/s). Spreading the waiting calls over the cool-down at that rate replaces releasing them
  together when it ends.
- **Afterwards.** Replies seen over the last `WINDOW` seconds are the admitted rate: a later 429
  lowers the rate to that measurement (never compounding), and each reply raises it by about one
  request/s per second, to find capacity that was not used.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

WINDOW = 2.0
"""Seconds of replies the admitted-rate measurement covers."""
_MIN_COOL_DOWN = 0.1


@dataclass
class Pacer:
    """When each request of one pool may be sent; inert (`rate` None) until the first 429."""

    rate: float | None = None
    """Requests per second; None while inert."""
    burst: float = 1.0
    """Most requests sent back to back after a quiet spell (what the gateway admitted at once)."""
    _tokens: float = field(default=0.0, repr=False)  # below 0: sends already promised
    _stamp: float = field(default=0.0, repr=False)
    _started: float = field(default=0.0, repr=False)
    _replies: deque[float] = field(default_factory=deque, repr=False)

    def throttled(self, admitted: float, cool_down: float, now: float) -> None:
        """A 429: `admitted` = what the gateway let through of the burst that met the limit."""
        floor = 1.0 / max(cool_down, _MIN_COOL_DOWN)
        if self.rate is not None:
            self._refill(now)
        self._tokens = min(self._tokens, 0.0)  # the gateway's bucket is empty now
        self._stamp = now
        if self.rate is None or now - self._started < WINDOW:
            # The first overload (its 429s arrive over a moment): what it admitted per cool-down.
            self._started = now if self.rate is None else self._started
            self.burst = max(1.0, admitted)
            self.rate = self.burst * floor
            return
        self._trim(now)
        self.rate = max(floor, min(self.rate, len(self._replies) / WINDOW))

    def replied(self, now: float) -> None:
        """A reply (the gateway admitted its request): measured, and the rate probes upward."""
        self._replies.append(now)
        self._trim(now)
        if self.rate is not None:
            self.rate += 1.0 / self.rate

    def delay(self, now: float) -> float:
        """Seconds until the next send may start (0 while inert); `take` reserves it."""
        if self.rate is None:
            return 0.0
        self._refill(now)
        return max(0.0, (1.0 - self._tokens) / self.rate)

    def take(self, now: float) -> None:
        if self.rate is not None:
            self._refill(now)
            self._tokens -= 1.0

    def _refill(self, now: float) -> None:
        assert self.rate is not None
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    def _trim(self, now: float) -> None:
        while self._replies and self._replies[0] < now - WINDOW:
            self._replies.popleft()
