"""The shipped pool with its pacer told the gateway's rate: what a perfect estimate would buy.

A diagnostic of issue 29's misses, not a client. `told_run` runs `pool_simulation` with each
process's pacer replaced by a `ToldPacer`, which starts and heals where the shipped one does
(the first 429 to a request sent with others; `heal` seconds without a 429 or a waiting call)
but paces at the rate it is told instead of the rate it measures. Everything else is the shipped
code: slow start, admission and its capacity, the in-flight cap (unless `cap=False`), retries.
Where a told run misses a target too, the miss is not the pacer's estimate: it is the machinery
around it, or pacing itself (a steady rate where `rate_bounds`' best client sends each window's
count at its start).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from langchain_kimi._http.limits.controller import Paced
from langchain_kimi._http.limits.in_flight import InFlightCap
from langchain_kimi._http.limits.outcome import Request
from langchain_kimi._http.limits.pacer import Pacer
from tests.support.pool_simulation import Profile, Result, _Simulation, run
from tests.support.rate_catalog import ALL, SEEDS


@dataclass
class ToldPacer(Pacer):
    """The shipped pacer, its rate held at `told` (requests/s) whenever it paces."""

    told: float = 1.0

    def _first_estimate(self, now: float) -> None:
        super()._first_estimate(now)
        self.rate = self.told

    def _advance(self, now: float) -> None:
        super()._advance(now)
        if self.rate is not None:
            self.rate = self.told

    def _take_back_raise(self, raised_from: float) -> None:
        super()._take_back_raise(raised_from)
        self.rate = self.told


class NoCap(InFlightCap):
    """An in-flight cap never learnt: every 429 is left to the pacer."""

    def refused(self, request: Request, now: float) -> bool:
        return False

    def limit(self, now: float) -> int | None:
        return None


def told(rate: float, *, cap: bool = True) -> Callable[[_Simulation], None]:
    """A `pool_simulation.run` setup: every process's pacer told `rate` (its own share)."""

    def setup(sim: _Simulation) -> None:
        for process in sim.processes:
            controller = process.admission.controller
            assert isinstance(controller, Paced)
            controller.pacer = ToldPacer(told=rate)
            if not cap:
                controller.in_flight = NoCap()

    return setup


def share(profile: Profile) -> float | None:
    """Each process's share of a steady rate limit (bucket or window), or None: the limit moves,
    or is not a rate (concurrency, tokens per minute), or overloads refuse at random."""
    steady = profile.limit_after is None and profile.overload is None
    if not steady or profile.concurrency_limit is not None or profile.tokens_per_minute:
        return None
    return profile.rate / profile.processes


def told_run(profile: Profile, seed: int, rate: float, *, cap: bool = True) -> Result:
    return run(profile, seed, setup=told(rate, cap=cap))


def _worst(results: list[Result]) -> str:
    wall = max(r.wall_over_ideal for r in results)
    requests = max(r.requests_per_answer for r in results)
    return f"{wall:.2f}, {requests:.2f}"


def table(seeds: range = SEEDS) -> str:
    """Markdown: per steady-rate profile, the shipped pool and the told one (worst of `seeds`:
    wall / ideal, requests per answer; a failed call would show as a lost answer)."""
    lines = [
        "| profile | shipped | told the rate | told 0.9 of it | told the rate, no in-flight cap |",
        "|---|---|---|---|---|",
    ]
    for name, profile in ALL.items():
        rate = share(profile)
        if rate is None:
            continue
        cells = [
            _worst([run(profile, seed) for seed in seeds]),
            _worst([told_run(profile, seed, rate) for seed in seeds]),
            _worst([told_run(profile, seed, 0.9 * rate) for seed in seeds]),
            _worst([told_run(profile, seed, rate, cap=False) for seed in seeds]),
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(table(), end="")
