"""The controller interface between admission and the rate policy, and the two shipped policies.

Admission (`admission.py`) tells and asks a `Controller`, under its lock, with its clock: how
long the head of the queue waits before it may go (`delay`), how many requests may be in flight
(`limit`), that a request went (`sent`), how it ended (`record`), whether a 429 only cost the
request its turn (`lost_turn`: the call goes back to its place without spending a retry), and
since when the gateway has admitted none of the pool's requests (`starved_since`: a call whose
pool timeout runs out then fails with the rate limit, not a timeout), and whether a request sent
now shares the rate the pool's earlier requests were refused for though it goes alone
(`sharing`: a batch's last call, sent when its others are done, on a key other processes use,
lost its retries to their 429s; it loses turns as its batch did).
Its parts are controllers of their own kind, sans-I/O, each with one job: `slow_start` (sends
spread until the gateway has had a chance to refuse them, and where the answers come back
sooner than that, at most a window of them unanswered), `pacer` (a token bucket at the
admitted rate from the first 429 to a request sent with others on), `in_flight` (a cap on the
requests in flight where the 429s show a concurrency limit), `starved` (one probe at a time
while the gateway admits none of the pool's requests), `cool_down` (every call held back until a
pause the gateway asked for has passed).

- `Paced` (the default, `adaptive_concurrency=True`): the slow start until the first 429 to a
  request sent with others (a lone call's 429 is that call's own to wait), the pacer from then
  on until it heals, and the in-flight cap where the 429s come only above one
  count (the 429s it explains stop the pacer instead of slowing it); a 429 or an overload
  (503, 529) while the gateway serves the pool, while the pool starts or while it is starved
  is a lost turn (whether the call went with others is admission's to say). An overload holds
  back only the call it refused (its `Retry-After`): a busy gateway that still answers most
  calls must not stop the others (issue 29: 30 % of 503s held the whole pool, 2.5-2.8x). Once
  the gateway serves none of the pool's requests, a 429 to a call that went with others starves
  the pool (`starved`), and so does an overload that says when to come back (`Retry-After`)
  unless a fallback base would take the calls (`can_fall_back`: they spend their retries and
  move on, as `retry.RetryPlan` says); an overload naming no wait may be an outage, and the
  calls spend their retries.
- `Unpaced` (`adaptive_concurrency=False`): no pacing; a 429, or a 503 / 529 with
  `Retry-After`, holds every call back for the asked time (`default_cool_down` when a 429 names
  none); every refusal spends a retry.

Either one learns only from the answers (429s, `Retry-After`, answer times, the in-flight count
at each refused send): it is never told which kind of gateway it faces.
"""

from __future__ import annotations

from typing import Protocol

from langchain_kimi._http.limits.cool_down import CoolDown
from langchain_kimi._http.limits.in_flight import InFlightCap
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import Outcome, Request
from langchain_kimi._http.limits.pacer import Pacer
from langchain_kimi._http.limits.slow_start import SlowStart
from langchain_kimi._http.limits.starved import Starved


class Controller(Protocol):
    """The rate policy of one (gateway, key). Called under admission's lock."""

    def delay(self, now: float) -> float:
        """Seconds until the next request may go (0: now); claims nothing (`sent` does)."""
        ...

    def sent(self, request: Request, now: float) -> None:
        """`request` went out at `now`."""
        ...

    def record(self, request: Request, outcome: Outcome | None, now: float) -> None:
        """How `request` ended; None: its slot is given back (after its outcome, if it had one)."""
        ...

    def lost_turn(self, request: Request, now: float) -> bool:
        """Whether the 429 to `request` only cost the call its turn (it spends no retry)."""
        ...

    def rate(self, now: float) -> float | None:
        """The paced rate in requests/s; None while sends go at full speed (for reprs)."""
        ...

    def limit(self, now: float, in_flight: int) -> int | None:
        """The most requests allowed in flight, `in_flight` of the pool's out now (None: the
        pool's capacity only)."""
        ...

    def serving(self, now: float) -> bool:
        """Whether the gateway admitted a request lately (`knobs.serving_span`)."""
        ...

    def sharing(self, now: float) -> bool:
        """Whether a request sent now shares the rate the pool's earlier ones were refused
        for, though no other is out (in flight, waiting or asleep between attempts): a 429
        the pacer counted (to a request
        sent with others, or any while pacing) came within `knobs.sharing_span`, and the
        gateway admitted one of the pool's requests within it too (`serving`)."""
        ...

    def starved_since(self, now: float) -> float | None:
        """Since when the gateway serves none of the pool's requests (`starved.py`; None: it
        serves them)."""
        ...

    def starved_by(self) -> list[int]:
        """The statuses the gateway refused the starved pool's requests with, the latest last
        (empty: not starved)."""
        ...


class Paced:
    """The shipped policy: slow start, then the pacer from the first 429."""

    def __init__(self, max_window: int, *, can_fall_back: bool) -> None:
        self.slow_start = SlowStart(max_window=max_window)
        self.pacer = Pacer()
        self.in_flight = InFlightCap()
        self.starved = Starved()
        self.can_fall_back = can_fall_back
        """A fallback base takes the calls the primary keeps overloading (`retry.RetryPlan`)."""

    def delay(self, now: float) -> float:
        turn = self.pacer.delay(now)  # first: it may heal to inert as of `now`
        turn = turn if self.pacer.rate is not None else self.slow_start.delay(now)
        return max(turn, self.starved.delay(now)) if self._starving(now) else turn

    def sent(self, request: Request, now: float) -> None:
        self.slow_start.sent(request, now, spaced=self.pacer.rate is None)
        self.pacer.sent(now, request.in_flight)
        self.in_flight.sent(request, now)

    def record(self, request: Request, outcome: Outcome | None, now: float) -> None:
        self.slow_start.record(request, outcome, now)
        if outcome is None or outcome.kind not in ("throttled", "overloaded"):
            return
        served = self.slow_start.admitted_recently(now) or self.slow_start.starting(now)
        if request.crowded and not served and self._starves(outcome):
            # A lone call's refusal is its own to wait (its retries).
            status = outcome.status or (429 if outcome.kind == "throttled" else 503)
            self.starved.refused(request.sent_at, now, outcome.retry_after, status)
        if outcome.kind != "throttled":
            return
        if self.in_flight.refused(request, now):
            self.pacer.stop()  # the cap's 429s: the rate is not what limits
        else:
            self.pacer.throttled(
                request.sent_at,
                now,
                alone=not request.crowded,
                count=request.in_flight,
                retry_after=outcome.retry_after,
            )

    def _starves(self, outcome: Outcome) -> bool:
        """Whether this refusal, to a call that went with others while the gateway serves none
        of the pool's requests, starves the pool: a 429, or an overload that says when to come
        back where no fallback base would take the calls."""
        if outcome.kind == "throttled":
            return True
        return outcome.retry_after is not None and not self.can_fall_back

    def lost_turn(self, request: Request, now: float) -> bool:
        return self._starving(now) or self.slow_start.lost_turn(request, now)

    def starved_since(self, now: float) -> float | None:
        if self.starved.since is not None and self.slow_start.admitted_recently(now):
            self.starved.served()  # admitted, e.g. a probe held past the horizon
        return self.starved.since

    def _starving(self, now: float) -> bool:
        return self.starved_since(now) is not None

    def starved_by(self) -> list[int]:
        return list(self.starved.statuses)

    def rate(self, now: float) -> float | None:
        return self.pacer.current(now)

    def limit(self, now: float, in_flight: int) -> int | None:
        if self._starving(now):
            return self.starved.limit()
        cap = self.in_flight.limit(now)
        if self.pacer.rate is None:  # the slow start's turn: it bounds the unproven if quick
            window = self.slow_start.limit(in_flight)
            if window is not None:
                cap = window if cap is None else min(cap, window)
        return cap

    def serving(self, now: float) -> bool:
        return self.slow_start.admitted_recently(now)

    def sharing(self, now: float) -> bool:
        return self.pacer.throttled_within(now, KNOBS.sharing_span) and self.serving(now)


class Unpaced:
    """Pacing off: a 429 or 503's pause is every call's cool-down, and every 429 costs a retry."""

    def __init__(self, max_window: int) -> None:
        self.slow_start = SlowStart(max_window=max_window)  # it only says whether we are served
        self.cool_down = CoolDown(throttles=True)

    def delay(self, now: float) -> float:
        return self.cool_down.delay(now)

    def sent(self, request: Request, now: float) -> None:
        self.slow_start.sent(request, now)

    def record(self, request: Request, outcome: Outcome | None, now: float) -> None:
        self.slow_start.record(request, outcome, now)
        if outcome is not None:
            self.cool_down.record(outcome, now)

    def lost_turn(self, request: Request, now: float) -> bool:
        return False

    def starved_since(self, now: float) -> float | None:
        return None

    def starved_by(self) -> list[int]:
        return []

    def rate(self, now: float) -> float | None:
        return None

    def limit(self, now: float, in_flight: int) -> int | None:
        return None

    def serving(self, now: float) -> bool:
        return self.slow_start.admitted_recently(now)

    def sharing(self, now: float) -> bool:
        return False
