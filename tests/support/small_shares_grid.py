"""The grid of gateways where several processes each hold a small share of one key (issue 29): a
batch's last calls go alone into the rate the other processes hold. How many calls the
simulation loses there, and its worst figures.

432 gateways: token buckets of 3, 6, 10 or 30 requests/s shared by 2, 3, 5 or 8 processes,
answers of 20-100 ms or 0.5-1.5 s, bursts of 0.1 s or 1 s, `Retry-After` as an integer, absent
or 0, 429s taking 1-3 ms or 0.1-0.3 s; and concurrency limits of 3, 8 or 20 shared the same
ways (answers and `Retry-After` as above). 120 calls (20 per process at least), 64 at a time
per process. docs/benchmarks.md ("A batch's last call") gives its figures before and after
`Controller.sharing`.

    python -m tests.support.small_shares_grid [--seeds N] [--json PATH]

About 20 CPU-seconds for the default 4 seeds.
"""

from __future__ import annotations

import argparse
import itertools
import json
from typing import Any

from tests.support.pool_simulation import Profile, run

RATES = (3, 6, 10, 30)
LIMITS = (3, 8, 20)
PROCESSES = (2, 3, 5, 8)
ANSWERS = ((0.02, 0.1), (0.5, 1.5))
BURSTS = (0.1, 1.0)
RETRY_AFTER = ("integer", "absent", "zero")
REFUSALS = ((0.001, 0.003), (0.1, 0.3))


def profiles() -> dict[str, Profile]:
    grid = {}
    for rate, processes, answers, burst, retry_after, refusal in itertools.product(
        RATES, PROCESSES, ANSWERS, BURSTS, RETRY_AFTER, REFUSALS
    ):
        grid[f"{rate}/s, {processes} processes, {answers}, {burst}, {retry_after}, {refusal}"] = (
            _shares(rate, processes, answers, retry_after, burst=burst, refusal=refusal)
        )
    for limit, processes, answers, retry_after in itertools.product(
        LIMITS, PROCESSES, ANSWERS, RETRY_AFTER[:2]
    ):
        grid[f"limit {limit}, {processes} processes, {answers}, {retry_after}"] = _shares(
            10_000, processes, answers, retry_after, concurrency_limit=limit
        )
    return grid


def _shares(
    rate: float,
    processes: int,
    answers: tuple[float, float],
    retry_after: str,
    **limit: Any,
) -> Profile:
    """One gateway of the grid: 120 calls (20 per process at least), 64 at a time per process."""
    return Profile(
        rate,
        latency=answers,
        retry_after=retry_after,
        processes=processes,
        calls=max(120, 20 * processes),
        concurrency=64,
        **limit,
    )


def figures(seeds: range) -> dict[str, tuple[int, float, float]]:
    """Per gateway: calls lost over the seeds, worst wall / ideal, worst requests per answer."""
    out = {}
    for name, profile in profiles().items():
        results = [run(profile, seed) for seed in seeds]
        out[name] = (
            sum(len(result.errors) for result in results),
            max(result.wall_over_ideal for result in results),
            max(result.requests_per_answer for result in results),
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=4, help="seeds 0 to N-1 (default 4)")
    parser.add_argument("--json", help="write every gateway's figures here")
    args = parser.parse_args()
    found = figures(range(args.seeds))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(found, out, indent=1)
    lost = sum(failed for failed, _, _ in found.values())
    losing = sum(1 for failed, _, _ in found.values() if failed)
    print(f"{lost:,} calls lost, on {losing} of {len(found)} gateways")
    print(f"worst wall / ideal {max(wall for _, wall, _ in found.values()):.2f}")
    print(f"worst requests per answer {max(req for _, _, req in found.values()):.2f}")


if __name__ == "__main__":
    main()
