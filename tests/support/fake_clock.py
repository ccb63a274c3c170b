"""Fake time for the pool tests: a clock whose `sleep` advances it, and a pacer mid-episode."""

from __future__ import annotations

from langchain_kimi._http.limits.pacer import Pacer


class Clock:
    """Fake time: `sleep` / `async_sleep` advance it and record the waits."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds

    async def async_sleep(self, seconds: float) -> None:
        self.sleep(seconds)


def paced_pacer(rate: float, at: float = 2.0) -> Pacer:
    """A pacer at `rate` whose step starts at `at`, just after a 429, with an empty bucket."""
    pacer = Pacer()
    pacer.sent(at)
    pacer.throttled(sent_at=at, now=at)
    pacer.rate = rate
    pacer._first_step = False
    pacer._measured = True
    pacer._sends.clear()
    pacer._refused.clear()
    return pacer
