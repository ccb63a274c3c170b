"""The grid of gateways where several processes share one small concurrency limit (issue 29):
how many calls the simulation loses there, by limit.

240 gateways: a limit of 3, 5, 10 or 20 requests in flight, shared by 1, 2, 4, 8, 16 or 32
processes of one key, answers of 1-5 s or 5-15 s, `Retry-After` as an integer, absent, 0, a
fraction or an HTTP date; 400 calls (120 with 5-15 s answers, at least 4 per process), 256 /
processes at a time per process, 4 seeds each. docs/benchmarks.md ("Calls lost behind a shared
concurrency limit") gives its figures before and after the starved pool (`starved.py`).

    python -m tests.support.shared_limit_grid [--json PATH]

About 3 CPU-minutes.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import defaultdict

from tests.support.pool_simulation import Profile, run

LIMITS = (3, 5, 10, 20)
PROCESSES = (1, 2, 4, 8, 16, 32)
ANSWERS = ((1.0, 5.0), (5.0, 15.0))
RETRY_AFTER = ("integer", "absent", "zero", "fraction", "date")
SEEDS = range(4)


def profiles() -> dict[str, Profile]:
    grid = {}
    for limit, processes, answers, retry_after in itertools.product(
        LIMITS, PROCESSES, ANSWERS, RETRY_AFTER
    ):
        calls = max(400 if answers[0] < 5 else 120, 4 * processes)
        grid[f"limit {limit}, {processes} processes, {answers}, {retry_after}"] = Profile(
            10_000,
            latency=answers,
            concurrency_limit=limit,
            processes=processes,
            concurrency=max(4, 256 // processes),
            calls=calls,
            retry_after=retry_after,
        )
    return grid


def lost() -> dict[str, tuple[int, int]]:
    """Per gateway: (calls lost, calls made) over the seeds."""
    figures = {}
    for name, profile in profiles().items():
        made = len(SEEDS) * (profile.calls // profile.processes) * profile.processes
        figures[name] = (sum(run(profile, seed).failed for seed in SEEDS), made)
    return figures


def by_limit(figures: dict[str, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    totals: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for name, (failed, made) in figures.items():
        limit = int(name.split(",")[0].split()[1])
        totals[limit][0] += failed
        totals[limit][1] += made
    return {limit: (failed, made) for limit, (failed, made) in sorted(totals.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write every gateway's figures here")
    args = parser.parse_args()
    figures = lost()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=1)
    print("| limit | calls lost | of |\n|---|---|---|")
    for limit, (failed, made) in by_limit(figures).items():
        print(f"| {limit} | {failed:,} | {made:,} |")
    failed = sum(f for f, _ in figures.values())
    made = sum(m for _, m in figures.values())
    losing = sum(1 for f, _ in figures.values() if f)
    print(f"\n{failed:,} of {made:,} calls lost, on {losing} of {len(figures)} gateways")


if __name__ == "__main__":
    main()
