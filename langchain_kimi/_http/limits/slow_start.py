"""How many requests of one pool may be out before the gateway has had a chance to refuse them.

A part of the controller (`controller.py`): sans-I/O, like `pacer` (admission holds the lock and
the clock). A gateway refuses
a request over its limit at once (a 429 takes one round trip) but answers an admitted one only
when the model is done (seconds). So a request is *unproven* from its send until it is answered,
refused, or has been out for `horizon` seconds without a 429 (then it was admitted). Before this
window the pacer learnt the limit only from the first 429 it read, and an event loop writes every
granted request before it reads one: 200 calls started together were 200 requests in the
gateway's bucket before the first 429 was seen, 150 of them refused.

- At most `window` requests go out per `horizon`, spread evenly (a burst of `start_window`
  allowed; one call after another, each answered before the next, never waits). The window
  starts at `start_window` and grows by one for every request proven admitted, so it doubles
  every `horizon` while the gateway admits everything (TCP's slow start, with "admitted" as the
  acknowledgement): 2,000 calls started together on a gateway without a limit are all out within
  about `log2(2000 / start_window)` horizons, and a limited gateway has refused about what one
  spacing sends in a refusal's round trip when the first 429 arrives and the pacer takes over.
- A 429 cuts the window to `window_cut` of it (never below `start_window`). From then on the
  pacer paces (the controller asks the slow start only while the pacer is inert); the window is
  what a pool that healed starts from.
- `horizon` is how long a refusal can take: `first_horizon` until a 429 has been seen, then
  `horizon_per_refusal` times the slowest refusal seen (at least `min_horizon`): a loopback
  gateway refuses in a millisecond, one across an ocean in a few hundred.
- **Quick answers.** Proof by age assumes that a refusal takes no longer than the horizon. Once
  every one of the pool's first `start_window` requests was answered (a whole sample: the first
  answers alone are the quick part of it) and the answers come back within `quick_answers`
  horizons (of the latest `answer_sample`, at most `late_answers` later), age proves nothing:
  the answers prove the window's growth as soon, and a request out longer than nearly every
  answer is as likely a refusal that takes long. The
  unproven requests in flight are then bounded by the window (`limit`; TCP's congestion window:
  a send for each answer, one more while the window grows). 429s taking 2 s behind a 50/s
  bucket whose answers take 50-250 ms (issue 29): each request out 0.25 s counted as admitted,
  the window grew to 338 before the first 429 came back, and 239 requests were refused by then;
  1.52x ideal and 1.77 requests per answer, 1.14x and 1.50 with the bound (worst of 16 seeds;
  no other profile moved). A pool whose answers take longer than the horizon (an LLM answer of
  more than a few tokens: 0.5 s to minutes) never meets the condition. A late answer now and
  then does not end it: on the loopback gateway a busy event loop pushed one answer in 400 to
  0.321 s, 9 ms past the bound, and with "every answer" the window grew by age again: 1.16-1.53x
  ideal and 1.60-1.64 requests per answer in 4 of 6 runs, 1.08-1.12x and 1.46-1.48 in all 6
  since (docs/benchmarks.md, "A late answer").

`admitted_recently` says whether the gateway admitted a request of this pool within
`serving_span` (answered it, or held it past the horizon), `starting` whether a request left
within `starting_span` of the pool's start: in either case a 429 only cost the call its turn
(`lost_turn`; `admission.AdmittedCall.requeues` asks it for a call that went with others).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.limits.outcome import Outcome, Request

_EPSILON = 1e-9  # a send due but for rounding is due


@dataclass
class SlowStart:
    """The unproven requests of one pool, and the window that spaces its sends."""

    max_window: int
    window: int = KNOBS.start_window
    _unproven: dict[object, float] = field(default_factory=dict, repr=False)  # key -> sent at
    _slowest_refusal: float | None = field(default=None, repr=False)
    _admitted_at: float = field(default=float("-inf"), repr=False)
    _due: float = field(default=float("-inf"), repr=False)  # when the next send is due
    _last_sent: float = field(default=float("-inf"), repr=False)
    _started_at: float = field(default=float("-inf"), repr=False)  # its first send after idle
    # The latest answers' times from their sends, and how many of them were late for the
    # quick-answers bound they were last counted against.
    _answer_times: deque[float] = field(
        default_factory=lambda: deque(maxlen=KNOBS.answer_sample), repr=False
    )
    _late: int = field(default=0, repr=False)
    _late_bound: float = field(default=0.0, repr=False)
    # The first window's requests not answered: not yet, or never (refused, failed: they stay,
    # and the first window is then no whole sample of the answers).
    _first_unanswered: set[object] = field(default_factory=set, repr=False)
    _first_sent: int = field(default=0, repr=False)

    @property
    def horizon(self) -> float:
        if self._slowest_refusal is None:
            return KNOBS.first_horizon
        return max(KNOBS.min_horizon, KNOBS.horizon_per_refusal * self._slowest_refusal)

    @property
    def unproven(self) -> int:
        return len(self._unproven)

    @property
    def quick(self) -> bool:
        """Whether the answers are quick: the first window all answered, and of the latest
        answers at most `late_answers` later than `quick_answers` horizons (then age proves
        nothing, and `limit` bounds the unproven)."""
        if self._first_sent < KNOBS.start_window or self._first_unanswered:
            return False
        return self._late_answers() <= KNOBS.late_answers * len(self._answer_times)

    def _late_answers(self) -> int:
        """How many of the latest answers came back `quick_answers` horizons or more after
        their sends (counted again when the horizon has changed)."""
        bound = KNOBS.quick_answers * self.horizon
        if bound != self._late_bound:
            self._late_bound = bound
            self._late = sum(took >= bound for took in self._answer_times)
        return self._late

    def limit(self, in_flight: int) -> int | None:
        """The most requests allowed in flight, `in_flight` of them out now, while the answers
        are quick: the window's worth unproven, besides those answered whose slots are still
        held (streams); None otherwise."""
        if not self.quick:
            return None
        return in_flight - len(self._unproven) + self.window

    def delay(self, now: float) -> float:
        """0 when another request may go now; else the seconds until it may."""
        self._age(now)
        wait = self._due - KNOBS.start_window * self._spacing - now
        return wait if wait > _EPSILON else 0.0

    def sent(self, key: object, now: float, *, spaced: bool = True) -> None:
        """A request went; `spaced`: its turn was the slow start's (not the pacer's), so the
        next send is due one spacing later. Sends the pacer paced owe the slow start nothing:
        behind 429s taking 0.2-0.4 s (a 0.8 s horizon) a pool paced at 150/s had the slow start's
        next turn 20 s ahead when the pacer healed, and its last calls waited that long."""
        if now - self._last_sent > KNOBS.idle:
            self._started_at = now  # a pool starting from idle: a new start
        self._last_sent = now
        self._unproven[key] = now
        if self._first_sent < KNOBS.start_window:
            self._first_sent += 1
            self._first_unanswered.add(key)
        if spaced:
            self._due = max(self._due, now) + self._spacing

    @property
    def _spacing(self) -> float:
        # `window` sends per horizon, spread out (a burst of `start_window` at most)
        return self.horizon / self.window

    def answered(self, key: object, sent_at: float, now: float) -> None:
        """The gateway answered the request sent at `sent_at`: admitted (it may have been proven
        by age already; its answer time counts all the same, or the slow ones go unseen)."""
        self._admitted_at = now
        self._first_unanswered.discard(key)
        self._count_answer(now - sent_at)
        if self._unproven.pop(key, None) is not None:
            self._grow()
        if not self._unproven:  # all answered: one call after another never waits
            self._due = min(self._due, now)

    def _count_answer(self, took: float) -> None:
        late = self._late_answers()  # against the current bound
        times = self._answer_times
        if len(times) == times.maxlen:
            late -= times[0] >= self._late_bound  # the oldest leaves the sample
        times.append(took)
        self._late = late + (took >= self._late_bound)

    def refused(self, key: object, sent_at: float, now: float) -> None:
        """The request came back 429."""
        self._unproven.pop(key, None)
        took = now - sent_at
        if self._slowest_refusal is None or took > self._slowest_refusal:
            self._slowest_refusal = took
        self.window = max(KNOBS.start_window, int(self.window * KNOBS.window_cut))

    def ended(self, key: object) -> None:
        """The request ended otherwise (another error, or it was never sent): proves nothing."""
        self._unproven.pop(key, None)

    def record(self, request: Request, outcome: Outcome | None, now: float) -> None:
        """How `request` ended (None: given up without a verdict)."""
        kind = None if outcome is None else outcome.kind
        if kind == "answered":
            self.answered(request, request.sent_at, now)
        elif kind == "throttled":
            self.refused(request, request.sent_at, now)
        else:
            self.ended(request)

    def lost_turn(self, request: Request, now: float) -> bool:
        """Whether a 429 for `request` only cost it its turn: the gateway serves the pool, or the
        request went while the pool was starting (other processes sharing the key may hold the
        gateway's whole rate until the pool has its share). Whether the call went with others
        at all is its own (`admission.AdmittedCall.requeues`)."""
        if self.admitted_recently(now):
            return True
        return self.starting(request.sent_at)

    def admitted_recently(self, now: float) -> bool:
        self._age(now)
        return now - self._admitted_at < KNOBS.serving_span

    def starting(self, sent_at: float) -> bool:
        """Whether a request sent at `sent_at` left within `starting_span` of the pool's start
        (its first send after idle): refused before the pool had its share, e.g. because other
        processes sharing the key took the gateway's burst and its rate."""
        return sent_at - self._started_at < KNOBS.starting_span

    def _age(self, now: float) -> None:
        """Requests out for a whole horizon without a 429 were admitted (unless the answers are
        quick)."""
        if self.quick:
            return
        horizon = self.horizon
        while self._unproven:
            key, sent_at = next(iter(self._unproven.items()))
            if now - sent_at < horizon:
                return
            del self._unproven[key]
            self._admitted_at = max(self._admitted_at, sent_at + horizon)
            self._grow()

    def _grow(self) -> None:
        self.window = min(self.max_window, self.window + 1)
