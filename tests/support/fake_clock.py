"""Fake time for the transport tests: a clock whose `sleep` advances it, and `ChatKimi`s whose
waits are on that clock."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_kimi import chat_models
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


def fake_waits(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Every `ChatKimi` built from now on in the test waits on a fake clock: its retries' and
    paced turns' sleeps advance the clock instead of passing real time. For a lone call's
    retries (the order of attempts and the error reached are what its tests check), not for
    calls that overlap: one fake clock serves them all."""
    clock = Clock()

    def faked(**settings: Any) -> TransportConfig:
        # The recorded waits are the retries' alone: the key's pacing has tests of its own.
        settings["adaptive_concurrency"] = False
        return TransportConfig(
            clock=clock, sleep=clock.sleep, async_sleep=clock.async_sleep, **settings
        )

    monkeypatch.setattr(chat_models, "TransportConfig", faked)
    return clock
