"""The pacer of one (gateway, key): after a 429, sends are paced at the rate the gateway admitted.

A part of the controller (`controller.py`). Sans-I/O: plain arithmetic on the times it is given
(admission holds the lock and the clock). Inert (no pacing, full speed; `slow_start` bounds a
first burst) until the gateway first answers 429 to a request sent with others: a lone call's
429 says nothing of the rate, and that call waits what the gateway asked, or its backoff, as the
peers' SDKs do (`retry`). From then on a client-side token bucket paces the sends at `rate`, and
the rate is re-measured step by step:

- **Start.** At the first 429 the rate is what the gateway admitted over the last
  `lookback` (sends not answered 429; those still in flight count as admitted: a 429
  comes back at once). Every 429 of that first wave lowers it again as it arrives. Until a step
  has measured the gateway, each clean step multiplies the rate by `unmeasured_growth`. Nothing
  is remembered from an earlier episode (a memory of its rate changed no simulated profile).
- **Steps** of at least `step` seconds (a step with 429s: and `step_sends` sends). A step in
  which a request sent at the current rate met a 429 sets the rate to what the gateway admitted
  during the step (the sends minus their 429s, per second), times `margin`, but never below
  `min_cut` of the rate: a token-bucket gateway whose bucket is empty admits exactly its rate,
  so one step measures it, whatever its burst or `Retry-After` (the first step, if the gateway
  refused most of its sends, however far below: the first rate counted the burst). A step
  that admitted nothing takes what the gateway admitted over the last `lookback` of the
  episode instead (at most the rate): a window per second, its count spent, refuses the rest
  of its second (issue 29: windows 1.39-1.52x ideal with the step alone). Taking the larger of
  the two for every throttled step was tried and not kept (docs/benchmarks.md). Once a 429
  has taken `slow_refusal` or longer to come back, a step counts its sends one such refusal
  back (the 429s of the last ones are still out): 429s taking 2 s had the pacer read every
  step as admitted (issue 29: 2.25x ideal in the simulation, 1.34-1.49x since). Below
  `slow_refusal` a step is judged at its end, 429s still out or not: waiting for them (429s
  of 0.03-0.5 s) cut the requests behind 429s of 0.2-0.4 s but slowed pools behind quicker
  ones at higher rates (docs/benchmarks.md, "A step judged before its 429s were back").
- **A first step whose 429s came only above the counts it admitted** holds the rate (neither
  cut nor raised; the gateway counts as not measured yet, so the next clean step doubles it).
  Each send carries the pool's in-flight count (`admission.Permit.in_flight`), and in that step
  every send not refused (and sent a slowest refusal before the step ends: its 429 would be
  back) was counted at most as high as the lowest count refused, one of them above
  `start_window` (the first window says more about a burst than a limit), and one sent after
  the first 429 at a lower count: the count fell and the gateway admitted again, which a bucket
  that ran dry does not do, whatever the count. Those 429s are a concurrency limit's: cutting
  the rate for them held the pool far below the limit, where no 429 came again to teach the
  in-flight cap (`in_flight`) until the raises brought the rate back, about 1.5 s later (issue
  29: a concurrency limit of 20 with 0.1-0.5 s answers, 1.23x ideal worst of 16 seeds, 1.12x
  since). Only the first step: later, and without the fall in the count, it held the rate of
  rate limits too (several processes, slow answers).
- **Probing.** A clean step in which calls waited for their turn and the pace was used raises
  the rate: by `probe` requests/s, then twice as much after each further clean step (never more
  than `max_probe` of the rate: tripling it), so a gateway whose limit rose, or a share another
  process gave up, is found within a few steps. The raises are the same number of requests/s
  for every pool: pools of several processes behind one key drift toward equal shares, as TCP
  flows sharing a link do. A 429 that comes back after its step closed clean, to a send of the
  step that last raised the rate, takes that raise back: the step was judged before its last
  sends' 429s were in (429s taking 50-200 ms, 16 seeds: 1.11-1.22 requests per answer, 1.10-1.15
  since).
- **A window that says when it reopens.** A step the gateway admitted nothing of, every 429 of
  it asking to wait longer than `hold_wait` (more than any rounding of a short wait) and at most
  `retry_after_cap`, holds the pace until the first of those waits ends, its rate unchanged (a
  hold's wait raises nothing). A window counted per minute refuses everything to the minute's
  end once its count is spent, and says so: the steps halved the rate into those refusals and
  kept sending (simulated 60 a minute: 13-32 refusals a lockout, 1.51-1.59 requests per answer;
  1.29-1.41 since, none after a minute's first seconds). Once a step of the episode was held
  so (the gateway closes altogether, and says until when), a later 429 asking such a wait,
  every 429 of its step so far having asked one, holds the pace at once, and that step is not
  measured (what it admitted before was the reopened window's count): a reopening's sends no
  longer run on for a step into the next lockout (60 a minute: 1.11-1.23 requests per answer).
  Not before: a gateway that asks the same long wait of every 429 while it admits a steady rate
  (a fixed `Retry-After: 60`) would have the pool held for it at every 429.
- **Healing.** `heal` seconds with neither a 429 nor a call waiting for its turn: inert again;
  at once when the 429s turn out to be a concurrency limit's (`in_flight`: `stop`).

It assumes what a 429 says: the gateway refused that request because too many were sent, and
admits some steady rate (the same for requests of any size); the `Retry-After` of the refused
call is honoured by that call (`retry.RetryPlan.after`), not used as a measure of the rate,
because gateways round it (whole seconds), omit it, or say 0 (only a long one, on every 429 of
a step that admitted nothing, holds the pace).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

from langchain_kimi._http.limits.knobs import KNOBS

_EPSILON = 1e-9  # a token refilled but for rounding is there


@dataclass
class Pacer:
    """When the next request of one pool may be sent; inert (`rate` None) until the first 429."""

    rate: float | None = None
    """Requests per second; None while inert."""
    _tokens: float = field(default=0.0, repr=False)  # the client bucket: sends it allows now
    _stamp: float = field(default=0.0, repr=False)  # when `_tokens` was last refilled
    _step_start: float = field(default=0.0, repr=False)
    _step_sent: int = field(default=0, repr=False)
    _step_throttled: int = field(default=0, repr=False)  # 429s of requests sent in this step
    _lag: float = field(default=0.0, repr=False)  # this episode's slowest 429, from its send
    _clean_steps: int = field(default=0, repr=False)
    _last_throttled: float = field(default=float("-inf"), repr=False)
    _waited_until: float = field(default=float("-inf"), repr=False)  # end of the last wait
    _episode_start: float = field(default=0.0, repr=False)  # its first 429
    _first_step: bool = field(default=False, repr=False)  # the step the first wave started
    _measured: bool = field(default=False, repr=False)  # a throttled step measured the gateway
    _sends: deque[float] = field(default_factory=deque, repr=False)  # the recent sends
    _refused: deque[float] = field(default_factory=deque, repr=False)  # their 429s' send times
    _raised_from: float | None = field(default=None, repr=False)  # the rate before the last raise
    _raised_step: float = field(default=0.0, repr=False)  # when the step that raised it began
    _step_counts: list[tuple[float, int]] = field(default_factory=list, repr=False)  # its sends
    _step_refusals: list[tuple[float, int]] = field(default_factory=list, repr=False)  # their 429s
    # When each 429 of the step said the gateway admits again (None: no wait long enough)
    _step_reopens: list[float | None] = field(default_factory=list, repr=False)
    _held_until: float = field(default=float("-inf"), repr=False)  # the last hold's end
    _closes: bool = field(default=False, repr=False)  # a step of the episode was held

    # -- what happened -------------------------------------------------------------------------

    def sent(self, now: float, count: int = 0) -> None:
        """A request of the pool went out (it took its turn); `count`: the pool's requests in
        flight, itself included (0: not known)."""
        self._advance(now)
        self._sends.append(now)
        self._forget(now)
        if self.rate is None:
            return
        self._refill(now)
        self._tokens -= 1.0
        self._step_sent += 1
        self._step_counts.append((now, count))

    def throttled(
        self,
        sent_at: float,
        now: float,
        *,
        alone: bool = False,
        count: int = 0,
        retry_after: float | None = None,
    ) -> None:
        """A request sent at `sent_at` was answered 429; `alone`: no other request of the pool
        was in flight, waiting or asleep between attempts at its send (`admission`); `count`:
        the in-flight count it was sent at; `retry_after`: the wait it asked for (None: none)."""
        self._advance(now)
        self._refused.append(sent_at)
        if alone and self.rate is None:
            # A lone call's 429 starts no pacing: that call waits what the gateway asked, or
            # its backoff, as the peers' SDKs do; a paced turn would come on top of it.
            return
        self._last_throttled = now
        self._lag = max(self._lag, now - sent_at)
        self._forget(now)
        if self.rate is None or (self._first_step and sent_at <= self._step_start):
            self._first_estimate(now)
            return
        if sent_at >= self._step_start:
            self._step_throttled += 1
            self._step_refusals.append((sent_at, count))
            self._step_reopens.append(_reopening(now, retry_after))
            self._tokens = min(self._tokens, 0.0)  # the gateway's bucket is empty now
            if self._closes:  # the gateway closed altogether before: it says when it reopens
                reopens = self._hold_until(now, admitted=0)
                if reopens is not None:
                    self._hold(now, reopens)
        elif self._raised_from is not None and sent_at >= self._raised_step:
            self._take_back_raise(self._raised_from)

    def delay(self, now: float) -> float:
        """Seconds until the next send may go (0: now). Claims nothing: `sent` takes the turn."""
        self._advance(now)
        if self.rate is None:
            return 0.0
        self._refill(now)
        if self._tokens >= 1.0 - _EPSILON:
            return 0.0
        wait = (1.0 - self._tokens) / self.rate  # > 0: a token is missing, and rate > 0
        self._waited_until = max(self._waited_until, now + wait)
        return wait

    def stop(self) -> None:
        """Inert at once: the 429s are an in-flight cap's (`in_flight`), not the rate's."""
        if self.rate is not None:
            self._go_inert()

    def throttled_within(self, now: float, seconds: float) -> bool:
        """Whether a 429 that counted (not a lone call's while inert) came in the last
        `seconds`, pacing or healed since."""
        return now - self._last_throttled < seconds

    def current(self, now: float) -> float | None:
        """The rate as of `now` (None: inert), without counting anyone as waiting."""
        self._advance(now)
        return self.rate

    # -- how the rate follows --------------------------------------------------------------------

    def _first_estimate(self, now: float) -> None:
        """The first wave of 429s: the rate is what the last second's sends got through."""
        if self.rate is None:
            self._step_start = now
            self._stamp = now
            self._tokens = 0.0
            self._step_sent = self._step_throttled = self._clean_steps = 0
            self._step_counts, self._step_refusals, self._step_reopens = [], [], []
            self._first_step = True
            self._episode_start = now
        sent, refused = self._counts(now - KNOBS.lookback, now)
        admitted = sent - refused
        # A first wave that got little through says little of the rate: `first_rate` at least.
        self.rate = max(KNOBS.first_rate, admitted / KNOBS.lookback)

    def _advance(self, now: float) -> None:
        """Close the current step once it has measured enough."""
        if self.rate is None:
            return
        if now - self._last_throttled >= KNOBS.heal and now - self._waited_until >= KNOBS.heal:
            self._go_inert()
            return
        span = now - self._step_start
        if span < KNOBS.step:
            return
        step_sent, step_throttled = self._step_sent, self._step_throttled
        if self._lag >= KNOBS.slow_refusal:
            # 429s that take seconds have not all come back when the step ends: count the sends
            # of the step one lag back, and their 429s (those of the last lag are still out).
            step_sent, step_throttled = self._counts(self._step_start - self._lag, now - self._lag)
        measuring = step_throttled or self._first_step  # the first wave's 429s still come
        if measuring and step_sent < KNOBS.step_sends and span < KNOBS.longest_step:
            return  # too few sends to measure what the gateway admits: measure longer
        reopens = self._hold_until(now, admitted=step_sent - step_throttled)
        if step_throttled and self._first_step and self._above_admitted(now):
            pass  # a concurrency limit's 429s: the rate holds (not measured yet)
        elif reopens is not None:
            # The gateway admits nothing until then, and said so: the pace waits, its rate held.
            self._hold(now, reopens)
            self._closes = True
        elif self._held_at_once():
            pass  # held from its first 429 on: what it admitted before was the window's count
        elif step_throttled:
            admitted = step_sent - step_throttled
            if admitted > 0:
                measured = KNOBS.margin * admitted / span
            else:  # a window per second whose count is spent, or a small share: look back
                measured = min(self.rate, KNOBS.margin * self._admitted(now))
            self.rate = max(KNOBS.min_rate, measured, self._least_cut(admitted, step_throttled))
            self._raised_from = None  # measured since: nothing left to take back
            self._measured = True
            self._clean_steps = 0
        elif (
            self._waited_until > self._step_start
            and self._held_until <= self._step_start  # a hold's wait is the gateway's
            and step_sent + 1 >= self._used(span)
        ):
            # The pace held calls back and was used (but for one send: a slow pace may fit
            # none in a step): probe upward. A pace nobody used, e.g. while the calls sleep
            # their own back-off, proves nothing about the gateway.
            self._raised_from, self._raised_step = self.rate, self._step_start
            if self._measured:
                self.rate += min(
                    self.rate * KNOBS.max_probe, KNOBS.probe * KNOBS.probe_growth**self._clean_steps
                )
            else:  # no step has measured the gateway yet: the first estimate may be far below
                self.rate *= KNOBS.unmeasured_growth
            self._clean_steps += 1
        self._end_first_step()
        self._step_start = now
        self._step_sent = self._step_throttled = 0
        self._step_counts, self._step_refusals, self._step_reopens = [], [], []

    def _held_at_once(self) -> bool:
        """Whether the step's 429s held the pace as they came (`throttled`): the episode had a
        held step, and every 429 of this one asked a long wait (its first one held at once)."""
        return self._closes and bool(self._step_reopens) and None not in self._step_reopens

    def _hold(self, now: float, until: float) -> None:
        """No send before `until`; the rate stays."""
        assert self.rate is not None
        self._refill(now)
        self._tokens = min(self._tokens, 1.0 - (until - now) * self.rate)
        self._held_until = max(self._held_until, until)

    def _hold_until(self, now: float, *, admitted: int) -> float | None:
        """When the gateway admits again, if the step admitted nothing and every 429 of it
        asked to wait past `hold_wait` (the module docstring: a window that says when it
        reopens); None otherwise."""
        reopens = self._step_reopens
        if admitted > 0 or not reopens or None in reopens:
            return None
        first = min(at for at in reopens if at is not None)
        return first if first > now else None

    def _above_admitted(self, now: float) -> bool:
        """Whether the step's 429s all came above the in-flight counts it admitted, after a
        fall in the count (the module docstring: a first step whose 429s came only above...)."""
        refused = Counter(self._step_refusals)
        admitted: list[tuple[float, int]] = []
        for send in self._step_counts:
            if refused[send]:
                refused[send] -= 1
            elif send[0] <= now - self._lag:  # its 429 would be back by now
                admitted.append(send)
        if not admitted or not self._step_refusals:
            return False
        lowest = min(count for _, count in self._step_refusals)
        highest = max(count for _, count in admitted)
        first = min(at for at, _ in self._step_refusals)
        return KNOBS.start_window < highest <= lowest and any(
            at > first and count < lowest for at, count in admitted
        )

    def _least_cut(self, admitted: int, refused: int) -> float:
        """The lowest rate a throttled step may set. A pool sharing the key with others measures
        its share, and a small share is a few sends (or none admitted): one step never cuts the
        rate by more than half (`min_cut`). Except the first step, when the gateway refused most
        of its sends and admitted at least `step_sends`: the first rate counted the burst the
        gateway had saved, not its rate (a 4 s burst read as 5x the rate, and halving step by
        step sent 20 more requests into an empty bucket)."""
        assert self.rate is not None
        if self._first_step and refused > admitted >= KNOBS.step_sends:
            return KNOBS.min_rate
        return self.rate * KNOBS.min_cut

    def _admitted(self, now: float) -> float:
        """Requests/s the gateway admitted over the last `lookback` (the step, if longer) of
        this episode: a window per second refuses for the rest of its second once its count is
        spent, so a step alone may have admitted nothing. Sends up to the first 429 spent a
        burst and are not counted; with slow refusals, counted one lag back (as the steps)."""
        start = max(min(self._step_start, now - KNOBS.lookback), self._episode_start)
        lag = self._lag if self._lag >= KNOBS.slow_refusal else 0.0
        clipped = start == self._episode_start
        sent, refused = self._counts(start - lag, now - lag, after=clipped)
        return (sent - refused) / (now - start)

    def _used(self, span: float) -> float:
        """The sends a step of `span` seconds must make for its pace to count as used."""
        assert self.rate is not None
        return KNOBS.used * self.rate * span

    def _take_back_raise(self, raised_from: float) -> None:
        """A 429 to a send of the step that last raised the rate came back after that step had
        closed clean: the raise was judged too early (its last sends' 429s were still out), so
        the rate goes back to what it was, and the next raise starts again at `probe`."""
        assert self.rate is not None
        self.rate = min(self.rate, raised_from)
        self._raised_from = None
        self._clean_steps = 0

    def _end_first_step(self) -> None:
        self._first_step = False

    def _go_inert(self) -> None:
        self._end_first_step()
        self.rate = None
        self._closes = False  # like the rate, learnt anew in the next episode
        self._lag = 0.0  # like the rate, learnt anew in the next episode

    def _refill(self, now: float) -> None:
        assert self.rate is not None
        burst = max(1.0, self.rate * KNOBS.client_burst)  # a small client burst: sends stay spread
        self._tokens = min(burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    def _counts(self, start: float, end: float, *, after: bool = False) -> tuple[int, int]:
        """The sends in [start, end] (`after`: in (start, end]), and how many of them were
        answered 429."""

        def within(at: float) -> bool:
            return (start < at if after else start <= at) and at <= end

        return sum(map(within, self._sends)), sum(map(within, self._refused))

    def _forget(self, now: float) -> None:
        kept = now - self._lag - max(KNOBS.lookback, KNOBS.longest_step)
        while self._sends and self._sends[0] < kept:
            self._sends.popleft()
        while self._refused and self._refused[0] < kept:
            self._refused.popleft()


def _reopening(now: float, retry_after: float | None) -> float | None:
    """When a 429 received at `now` says the gateway admits again: a wait longer than any
    rounding of a short one (`hold_wait`) and no longer than a call waits (`retry_after_cap`);
    None otherwise."""
    if retry_after is None or not KNOBS.hold_wait < retry_after <= KNOBS.retry_after_cap:
        return None
    return now + retry_after
