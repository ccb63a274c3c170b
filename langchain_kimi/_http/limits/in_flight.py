"""How many requests of one pool a gateway that limits concurrency lets be in flight, learnt
from the pool's in-flight count at the sends it refused.

A part of the controller (`controller.py`), sans-I/O. Each send carries the pool's count of
requests in flight, itself included (`admission.Permit.in_flight`; it counts answers not read
yet, so it is never below the gateway's own count). A gateway that admits C at a time refuses
only sends counted above C, nearly all of those, and at any time; a rate limit refuses at
whatever count its bucket runs dry, so the counts of its 429s move with the pace (or, in a
first burst, rise with it, all within an instant). So, over the sends of the last `cap_memory`:

- **A cap is learnt** at a 429 when the lowest count refused is above `start_window` (small
  counts say more about a burst than a limit), at least `step_sends` 429s at that count or one
  above came spread over a `step` or more, and at least `cap_share` of the sends counted that
  high were refused. The cap is one below that count; the 429s above it are the cap's, and the
  pacer does not slow down for them (`refused` returns True; the controller stops pacing).
- **Before a cap is learnt** the pacer's first step keeps its rate where its 429s came only
  above the counts it admitted, after a fall in the count (`pacer.py`): cutting it held the
  pool far below the limit, where no 429 came to teach the cap until the raises brought the
  rate back.
- **A 429 at or below the cap** drops it: that gateway is not limiting concurrency there. So
  does a 429 that took `slow_refusal` or longer: it held its slot all that time, and the
  counts include refusals still on their way (429s taking 2 s had a cap hold the pool at 2.8x
  ideal in one simulated seed).
  (Several processes sharing a key each count only their own requests, so a concurrency limit
  they share shows no single count: a cap is learnt now and then and soon dropped, and mostly
  the pacer paces as for a rate.)
- **Probing.** After `cap_step` without a 429 above it, the cap grows by `cap_probe`, then by
  `probe_growth` times as much each further `cap_step`: a limit that rose is found within a
  few, and the next 429 above the cap sets it back. A probe refused makes the next one wait
  `cap_backoff` times as long (at most `cap_memory`): a limit that stays put costs fewer and
  fewer requests.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import Request


@dataclass
class InFlightCap:
    """The requests of one pool allowed in flight at once (`limit`; None: no cap)."""

    _sends: deque[tuple[float, int]] = field(default_factory=deque, repr=False)  # (at, count)
    _refused: deque[tuple[float, int]] = field(default_factory=deque, repr=False)  # by 429 time
    _cap: int | None = field(default=None, repr=False)  # no 429 at or below it since learnt
    _extra: int = field(default=0, repr=False)  # the probe above it
    _raise: float = field(default=0.0, repr=False)  # the next probe's
    _raised_at: float = field(default=0.0, repr=False)
    _interval: float = field(default=0.0, repr=False)  # between raises

    def sent(self, request: Request, now: float) -> None:
        self._sends.append((now, request.in_flight))
        self._forget(now)

    def refused(self, request: Request, now: float) -> bool:
        """A 429 to `request`; True when the cap explains it (it was sent above the cap)."""
        count = request.in_flight
        self._refused.append((now, count))
        self._forget(now)
        if now - request.sent_at >= KNOBS.slow_refusal:  # it held a slot: counts say nothing
            self._cap = None
            return False
        if self._cap is not None:
            if count <= self._cap:
                self._cap = None
                return False
            if self._extra:  # the probe was refused: the next one waits longer
                self._interval = min(KNOBS.cap_memory, KNOBS.cap_backoff * self._interval)
            self._probe_from(now)
            return True
        lowest = min(at for _, at in self._refused)
        if lowest - 1 < KNOBS.start_window:
            return False
        times = [when for when, at in self._refused if at <= lowest + 1]
        if len(times) < KNOBS.step_sends or max(times) - min(times) < KNOBS.step:
            return False
        above = sum(at >= lowest for _, at in self._sends)
        if len(self._refused) < KNOBS.cap_share * above:
            return False
        self._cap = lowest - 1
        self._interval = KNOBS.cap_step
        self._probe_from(now)
        return True

    def limit(self, now: float) -> int | None:
        """The most requests allowed in flight as of `now` (None: no cap)."""
        if self._cap is None:
            return None
        if now - self._raised_at >= self._interval:  # no 429 above the cap for that long
            if self._extra:  # the probe held: probe at the first pace again
                self._interval = KNOBS.cap_step
            self._cap += self._extra
            self._extra = int(self._raise)
            self._raise *= KNOBS.probe_growth
            self._raised_at = now
        return self._cap + self._extra

    def _probe_from(self, now: float) -> None:
        self._extra = 0
        self._raise = KNOBS.cap_probe
        self._raised_at = now

    def _forget(self, now: float) -> None:
        for past in (self._sends, self._refused):
            while past and past[0][0] < now - KNOBS.cap_memory:
                past.popleft()
