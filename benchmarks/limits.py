"""The kinds of limit the loopback gateway (`benchmarks.gateway`) enforces, as pure arithmetic on
the times it is given (issue 29: the gateways the world runs, not only token buckets).

Each limit answers `take(now, tokens)`: 0 when the request arriving at `now` is admitted, else
the seconds until it would be (what the 429's `Retry-After` says). A concurrency limit is also
told when an admitted request's answer is due (`admitted`), since it counts what is in flight.
The simulation (`tests/support/pool_simulation.py`) runs the same classes on simulated time,
and both take their ideal time from `ideal_seconds`; the client is never told which limit it
faces.
"""

from __future__ import annotations

import collections
import heapq
import math
import random
from dataclasses import dataclass
from typing import Protocol


class Limit(Protocol):
    def take(self, now: float, tokens: float = 0.0) -> float:
        """0: admitted; else the seconds until the request would be."""
        ...

    def admitted(self, now: float, answered_at: float) -> None:
        """The request admitted at `now` is answered at `answered_at`."""
        ...


class TokenBucket:
    """`rate` requests/s with a bucket of `burst` seconds' worth; the rate may move at
    `moves_at` to `moved_rate` (a limit that falls or rises)."""

    def __init__(
        self,
        rate: float,
        burst: float = 1.0,
        *,
        moves_at: float | None = None,
        moved_rate: float | None = None,
        start: float = 0.0,
    ) -> None:
        self.rate = rate
        self.capacity = max(1.0, rate * burst)
        self.tokens = self.capacity
        self.stamp = start
        self.start = start
        self.moves_at = moves_at
        self.moved_rate = moved_rate

    def take(self, now: float, tokens: float = 0.0) -> float:
        self._move(now)
        # Refilled lazily at the rate in force now: a pause across a move refills at the new rate.
        self.tokens = min(self.capacity, self.tokens + max(0.0, now - self.stamp) * self.rate)
        self.stamp = max(self.stamp, now)
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate

    def admitted(self, now: float, answered_at: float) -> None:
        return None

    def _move(self, now: float) -> None:
        if self.moves_at is None or self.moved_rate is None or now < self.start + self.moves_at:
            return
        # The bucket keeps its depth in seconds: a fallen limit does not refill at once.
        self.capacity = max(1.0, self.capacity * self.moved_rate / self.rate)
        self.tokens = min(self.tokens, self.capacity)
        self.rate, self.moves_at = self.moved_rate, None


class ConcurrencyLimit:
    """At most `limit` requests in flight; beyond it, a 429 until the earliest is answered."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.answers: list[float] = []  # when each admitted request in flight is answered

    def take(self, now: float, tokens: float = 0.0) -> float:
        while self.answers and self.answers[0] <= now:
            heapq.heappop(self.answers)
        if len(self.answers) < self.limit:
            return 0.0
        return self.answers[0] - now

    def admitted(self, now: float, answered_at: float) -> None:
        heapq.heappush(self.answers, answered_at)


class TokensPerMinute:
    """A bucket of one minute's `per_minute` tokens, refilled steadily; each request spends its
    prompt's tokens (a request larger than what is left is refused until enough refilled)."""

    def __init__(self, per_minute: float, start: float = 0.0) -> None:
        self.per_minute = per_minute
        self.tokens = per_minute
        self.stamp = start

    def take(self, now: float, tokens: float = 0.0) -> float:
        per_second = self.per_minute / 60.0
        self.tokens = min(self.per_minute, self.tokens + max(0.0, now - self.stamp) * per_second)
        self.stamp = max(self.stamp, now)
        if self.tokens >= tokens:
            self.tokens -= tokens
            return 0.0
        return (tokens - self.tokens) / per_second

    def admitted(self, now: float, answered_at: float) -> None:
        return None


class SlidingWindow:
    """At most `rate` requests admitted in any trailing second (a log of admitted sends)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.log: collections.deque[float] = collections.deque()

    def take(self, now: float, tokens: float = 0.0) -> float:
        while self.log and self.log[0] <= now - 1.0:
            self.log.popleft()
        if len(self.log) < self.rate:
            self.log.append(now)
            return 0.0
        return self.log[0] + 1.0 - now

    def admitted(self, now: float, answered_at: float) -> None:
        return None


class FixedWindow:
    """At most `rate` requests a second, counted per whole window of `seconds` since `start` (a
    counter reset each window: `rate` x `seconds` requests in each; a per-minute limit such as
    Kong's rate-limiting plugin's is `seconds=60`)."""

    def __init__(self, rate: float, start: float = 0.0, seconds: float = 1.0) -> None:
        self.rate = rate
        self.start = start
        self.seconds = seconds
        self.window = -1
        self.count = 0

    def take(self, now: float, tokens: float = 0.0) -> float:
        window = math.floor((now - self.start) / self.seconds)
        if window != self.window:
            self.window, self.count = window, 0
        if self.count < self.rate * self.seconds:
            self.count += 1
            return 0.0
        return self.start + (window + 1) * self.seconds - now

    def admitted(self, now: float, answered_at: float) -> None:
        return None


@dataclass(frozen=True)
class Overload:
    """`share` of the requests arriving within `seconds` of the start are refused with `status`
    (503, or 529 `overloaded_error`), saying `Retry-After: 1` when `retry_after`."""

    share: float
    seconds: float
    status: int = 503
    retry_after: bool = True

    def refuses(self, elapsed: float, draw: random.Random) -> bool:
        return elapsed < self.seconds and draw.random() < self.share


KINDS = ("bucket", "concurrency", "tokens", "sliding", "fixed")


def ideal_seconds(
    kind: str,
    *,
    calls: int,
    answer: float,
    rate: float,
    burst: float,
    in_flight: int = 1,
    prompt_tokens: float = 0.0,
    tokens_per_minute: float = 0.0,
    moves: tuple[float, float] | None = None,
    window: float = 1.0,
) -> float:
    """A lower bound on the mean wall of any client, even one told the limit: the last call's
    earliest admission (the calls beyond the burst at the rate; on a window, the start of the
    second its count reaches) plus one mean `answer` (issue 20's measure); for a concurrency limit
    (`in_flight` at most) or a tokens-per-minute limit (`prompt_tokens` a call on average), the
    throughput bound. It leaves out the spread of the answers, so the best client is above it:
    by 17.5 % with 30-90 s answers at 20/s (`tests/support/rate_bounds.py`). One exception: a
    bucket refilled lazily (as these are) refills a pause across a rise at the new rate, so a
    client that pauses just before the rise can beat it."""
    if kind == "concurrency":
        return calls * answer / in_flight
    if kind == "tokens":
        beyond_minute = max(0.0, calls * prompt_tokens - tokens_per_minute)
        return beyond_minute / (tokens_per_minute / 60) + answer
    if kind in ("sliding", "fixed"):
        # `rate` at once in each second from the start (no bucket to spend first): the last call
        # is admitted at the start of the second that its count reaches, a whole second; on a
        # fixed `window` of several seconds, the start of the window its count reaches.
        per_window = math.ceil(rate * window)
        return (math.ceil(calls / per_window) - 1) * window + answer
    beyond_burst = max(0.0, calls - rate * burst)
    if moves is not None:
        moved_at, new_rate = moves
        before = rate * moved_at  # what the first rate admits before the limit moves
        if beyond_burst > before:
            return moved_at + (beyond_burst - before) / new_rate + answer
    return beyond_burst / rate + answer


def limit_for(
    kind: str,
    *,
    rate: float,
    burst: float = 1.0,
    concurrency: int = 20,
    tokens_per_minute: float = 1_200_000,
    moves_at: float | None = None,
    moved_rate: float | None = None,
    start: float = 0.0,
    window: float = 1.0,
) -> Limit:
    """The limit of one kind (`KINDS`); `rate` is requests/s where the kind counts requests."""
    if kind == "bucket":
        return TokenBucket(rate, burst, moves_at=moves_at, moved_rate=moved_rate, start=start)
    if kind == "concurrency":
        return ConcurrencyLimit(concurrency)
    if kind == "tokens":
        return TokensPerMinute(tokens_per_minute, start)
    if kind == "sliding":
        return SlidingWindow(rate)
    if kind == "fixed":
        return FixedWindow(rate, start, window)
    raise ValueError(f"unknown limit kind {kind!r}; one of {', '.join(KINDS)}")
