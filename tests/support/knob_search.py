"""A joint search of the rate knobs on the simulated catalogue: does any setting meet more profiles?

    python -m tests.support.knob_search [--seconds N] [--seed N] [--seeds N] [--tolerance T]
                                        [--unconstrained] [--log PATH]

`knob_sweep` moves one knob at a time; this moves several together. A (1+2) evolution strategy,
two candidates a round (one per core): each changes one to five of the searched knobs by a
log-normal factor, within bounds, and is run on every catalogued profile, seeds 0-3 (`SEEDS`:
a quarter of the 16 the targets are judged on, for speed; check a find on the others), or
seeds 0 to `--seeds` - 1, the worst seed counting. A candidate replaces the current setting when
it ranks higher: first no call lost; then, unless `--unconstrained`, no profile that misses a
target worse than on the shipped knobs by more than `--tolerance` on either figure; then more
profiles within both targets; then less excess over them, summed. The step widens 1.5x after a
success and narrows 0.95x otherwise. Each candidate's figures go to `--log` (JSON lines).

Searched: the numbers of the slow start, the pacer, the in-flight cap and the pool's growth. Left
out: what the docs promise a caller (retries, backoff, patience, the spans, idle, the starved
probes, a held window's wait) and the bounds that only keep figures finite (`min_rate`,
`min_horizon`). Simulated time only: CPU-bound, about 3 s a candidate on two cores (4 seeds; 12 s with 16).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from multiprocessing import Pool

from langchain_kimi._http.limits import knobs as knobs_module
from tests.support import knob_sweep
from tests.support.knob_sweep import knobs_set
from tests.support.rate_bounds import TARGET
from tests.support.rate_catalog import ALL, SEEDS

SPACE: dict[str, tuple[float, float]] = {  # name: (lowest, highest) a candidate may take
    "step": (0.1, 1.0),
    "step_sends": (2, 12),
    "longest_step": (0.5, 4.0),
    "margin": (0.6, 1.05),
    "min_cut": (0.2, 0.9),
    "probe": (0.25, 5.0),
    "probe_growth": (1.1, 3.0),
    "unmeasured_growth": (1.2, 4.0),
    "max_probe": (0.1, 3.0),
    "used": (0.3, 1.0),
    "heal": (0.5, 6.0),
    "slow_refusal": (0.1, 2.0),
    "lookback": (0.25, 3.0),
    "first_rate": (0.25, 4.0),
    "client_burst": (0.01, 0.5),
    "start_window": (2, 40),
    "first_horizon": (0.05, 1.0),
    "quick_answers": (1.0, 3.0),
    "horizon_per_refusal": (1.0, 4.0),
    "window_cut": (0.1, 0.9),
    "cap_share": (0.5, 0.95),
    "cap_memory": (0.5, 6.0),
    "cap_step": (0.1, 2.0),
    "cap_backoff": (1.2, 4.0),
    "slow_answer": (0.25, 4.0),
    "hold_weight": (0.02, 0.5),
}

Figures = tuple[float, float, int]  # worst wall / ideal, worst requests per answer, failed calls


@dataclass(frozen=True)
class Candidate:
    """One setting of the searched knobs and its figures per profile."""

    values: dict[str, float]
    figures: dict[str, Figures]

    @property
    def failed(self) -> int:
        return sum(failed for _, _, failed in self.figures.values())

    @property
    def met(self) -> int:
        return sum(_meets(figures) for figures in self.figures.values())

    @property
    def excess(self) -> float:
        return sum(
            max(0.0, wall - TARGET) + max(0.0, requests - TARGET)
            for wall, requests, _ in self.figures.values()
        )


def _meets(figures: Figures) -> bool:
    wall, requests, failed = figures
    return wall <= TARGET and requests <= TARGET and failed == 0


def regression(candidate: Candidate, shipped: Candidate, tolerance: float) -> float:
    """How far the candidate's profiles that miss a target fall behind the shipped knobs, beyond
    `tolerance` on either figure, summed (a profile within both targets counts nothing)."""
    total = 0.0
    for name, figures in candidate.figures.items():
        if _meets(figures):
            continue
        wall, requests, _ = figures
        shipped_wall, shipped_requests, _ = shipped.figures[name]
        total += max(0.0, wall - max(shipped_wall, TARGET) - tolerance)
        total += max(0.0, requests - max(shipped_requests, TARGET) - tolerance)
    return total


def rank(
    candidate: Candidate, shipped: Candidate, tolerance: float | None
) -> tuple[bool, bool, int, float]:
    """Higher is better: no call lost, no regression (always true when `tolerance` is None),
    profiles met, less excess."""
    kept = tolerance is None or regression(candidate, shipped, tolerance) == 0.0
    return (candidate.failed == 0, kept, candidate.met, -candidate.excess)


def mutate(values: Mapping[str, float], step: float, draw: random.Random) -> dict[str, float]:
    """One to five knobs moved by a log-normal factor of width `step`, clamped to `SPACE`."""
    moved = dict(values)
    for name in draw.sample(sorted(SPACE), k=draw.randint(1, 5)):
        low, high = SPACE[name]
        value = min(high, max(low, math.exp(math.log(moved[name]) + draw.gauss(0.0, step))))
        integer = isinstance(getattr(knobs_module.KNOBS, name), int)
        moved[name] = round(value) if integer else round(value, 4)
    return moved


def evaluate(values: dict[str, float], seeds: Sequence[int] = SEEDS) -> Candidate:
    """Every catalogued profile, `seeds` (0-3 unless told), on the knobs `values`."""
    worst: dict[str, Figures] = {}
    with knobs_set(values):
        for name, profile in ALL.items():
            seen = knob_sweep.figures(profile, seeds)
            worst[name] = (seen["wall_max"], seen["requests_max"], int(seen["failed"]))
    return Candidate(values, worst)


def shipped_values() -> dict[str, float]:
    return {name: getattr(knobs_module.KNOBS, name) for name in SPACE}


def search(
    seconds: float,
    seed: int,
    tolerance: float | None,
    log: str | None,
    seeds: Sequence[int] = SEEDS,
) -> tuple[Candidate, Candidate, int]:
    """(shipped, best found, candidates tried) after `seconds` of search, judged on `seeds`."""
    draw = random.Random(seed)
    judge = partial(evaluate, seeds=seeds)
    with Pool(2) as pool, contextlib.ExitStack() as stack:
        out = stack.enter_context(open(log, "a")) if log else None
        shipped = pool.apply(judge, (shipped_values(),))
        current, step, tried, start = shipped, 0.3, 0, time.monotonic()
        while time.monotonic() - start < seconds:
            candidates = [mutate(current.values, step, draw) for _ in range(2)]
            for found in pool.map(judge, candidates):
                tried += 1
                if out is not None:
                    out.write(json.dumps({"values": found.values, "figures": found.figures}))
                    out.write("\n")
                if rank(found, shipped, tolerance) > rank(current, shipped, tolerance):
                    current, step = found, min(1.0, step * 1.5)
                    print(f"{tried}: {current.met} met, excess {current.excess:.3f}", flush=True)
                else:
                    step = max(0.05, step * 0.95)
    return shipped, current, tried


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=1800.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=len(SEEDS), help="judge on seeds 0 to N-1")
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("--unconstrained", action="store_true")
    parser.add_argument("--log")
    args = parser.parse_args(argv)
    tolerance = None if args.unconstrained else args.tolerance
    seeds = range(args.seeds)
    shipped, best, tried = search(args.seconds, args.seed, tolerance, args.log, seeds)
    print(f"{tried} candidates; shipped {shipped.met} met, best {best.met} met")
    changed = {name: value for name, value in best.values.items() if value != shipped.values[name]}
    print(json.dumps(changed))
    for name, figures in best.figures.items():
        before = shipped.figures[name]
        if figures != before:
            print(f"{name}: {before[0]:.2f}, {before[1]:.2f} -> {figures[0]:.2f}, {figures[1]:.2f}")


if __name__ == "__main__":
    main()
