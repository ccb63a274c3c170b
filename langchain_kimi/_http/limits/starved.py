"""A pool the gateway has stopped serving sends one probe at a time, further and further apart,
while its calls wait in the queue for the gateway to let one through.

A part of the controller (`controller.py`), sans-I/O. A pool is *starved* from a 429 to a request
sent with others (a lone call's 429 is that call's own to wait, `retry`) that came when the
gateway had admitted none of the pool's requests within `serving_span` and the pool was no
longer starting (`slow_start.admitted_recently`, `slow_start.starting`), until the gateway admits
one of its requests again. Several processes sharing a key behind a small concurrency limit do
this to each other: a process whose requests hold the limit's slots takes each slot back with its
next request the moment an answer frees it, so another process may see nothing but 429s for as
long as the others have calls to send (issue 29: 16 processes behind a limit of 20 kept one out
for up to 32 s; 4 behind 10 kept one out from its start for over 20 s). No process can tell that
from a key refused for good, and no count of retries fits every crowd; so a starved pool waits,
cheaply.

An overload (503, 529) that says when to come back (`Retry-After`) starves the pool the same way
where no fallback base would take the calls (`Paced`): a batch's last few calls in a long
overload (70 % 529 with `Retry-After: 1` for 30 s) were refused 10-20 times while the rest of
their pool was done, then three more, and lost their answers (issue 29: "an overload that says
when to come back must cost no answer"). A starved pool has:

- one request in flight at a time (`limit`), the next one `starved_probe` after the last
  refusal, then twice as long after each further one, up to `starved_probe_cap` (a slot freed for
  good is found within that), or the refusal's `Retry-After` when it asks for longer;
- a 429 (or such an overload) to a call that went with others costs it its turn, not a retry
  (`Paced.lost_turn`); a call alone still spends its retries, and every call still waits at most
  its pool timeout for its turn (`admission`), so a key refused for good, or a gateway down for
  good, fails every call within that, with an error naming the statuses it answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_kimi._http.limits.knobs import KNOBS


@dataclass
class Starved:
    """Since when the pool is starved (None: it is not), and when its next probe may go."""

    since: float | None = None
    statuses: list[int] = field(default_factory=list)
    """The statuses of the refusals since it starved (429, 503, 529), each once, the latest last
    (empty while it is not)."""
    _interval: float = field(default=0.0, repr=False)
    _next_probe: float = field(default=float("-inf"), repr=False)

    def refused(
        self, sent_at: float, now: float, retry_after: float | None = None, status: int = 429
    ) -> None:
        """A refusal (`status`: a 429, or an overload) came, to a request sent at `sent_at`,
        while the gateway served none of the pool's requests, asking to retry after
        `retry_after` seconds (None: it named no wait). Each probe refused doubles the wait (not
        each refusal of the wave that was already out when the starvation began); a longer
        `Retry-After` is waited whole: a key refused for hours fails every waiting call at once
        (`admission`: the turn would outlast its pool timeout) instead of sending them one probe
        at a time."""
        if self.since is None:
            self.since = now
            self._interval = KNOBS.starved_probe
        elif sent_at > self.since:
            self._interval = min(KNOBS.starved_probe_cap, 2.0 * self._interval)
        if status in self.statuses:
            self.statuses.remove(status)
        self.statuses.append(status)
        wait = max(self._interval, retry_after or 0.0)
        self._next_probe = max(self._next_probe, now + wait)

    def served(self) -> None:
        """The gateway admitted a request of the pool: it is served again."""
        self.since = None
        self.statuses = []
        self._next_probe = float("-inf")

    def delay(self, now: float) -> float:
        """Seconds until the next probe may go (0: now, or not starved)."""
        return max(0.0, self._next_probe - now)

    def limit(self) -> int | None:
        """One request in flight while starved; None: no limit of its own."""
        return None if self.since is None else 1
