"""Fake time for the pool tests: a clock whose `sleep` advances it, a pacer mid-episode, and
`ChatKimi`s whose waits are on that clock."""

from __future__ import annotations

import functools

import pytest

from langchain_kimi import chat_models
from langchain_kimi._http.limits.pacer import Pacer
from langchain_kimi._http.transport import TransportConfig


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


def fake_waits(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Every `ChatKimi` built from now on in the test waits on a fake clock: its retries' and
    paced turns' sleeps advance the clock instead of passing real time. For a lone call's
    retries (the order of attempts and the error reached are what its tests check), not for
    calls that overlap: one fake clock serves them all."""
    clock = Clock()
    faked = functools.partial(
        TransportConfig, clock=clock, sleep=clock.sleep, async_sleep=clock.async_sleep
    )
    monkeypatch.setattr(chat_models, "TransportConfig", faked)
    return clock
