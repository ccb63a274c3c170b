"""Gateways drawn at random, off the catalogue: where does the shipped pool lose a call?

Each draw `n` is one `Profile` made from `random.Random(n)`: a token bucket (4 draws in 10), a
fixed or sliding window, a concurrency limit, tokens per minute, an overload (10-70 % of the
requests refused with 503 or 529, with or without `Retry-After: 1`, for 2-30 s) or a limit that
moves; 1-300 requests/s, answers of 10 ms to 15 s, bursts of 0.05-4 s, every `Retry-After`
form, 429s taking 1 ms to 2 s, 1-16 processes, 4-256 calls at a time each. Two seeds each.
docs/benchmarks.md ("Overloads met by a few calls at a time") gives its figures.

    python -m tests.support.random_gateways [--first N] [--count N] [--json PATH]

About 45 CPU-seconds per 1,000 draws. A call lost where the workload cannot end within the
pool timeout (a concurrency limit of 1 with answers of seconds, 20 calls a minute for 400 calls)
is the timeout doing its job; the summary counts losses by kind and by error.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
from typing import Any

from tests.support.pool_simulation import Overload, Profile, run

KINDS = ("bucket",) * 4 + ("fixed", "sliding", "concurrency", "tokens", "overload", "moving")


def draw(number: int) -> tuple[str, Profile]:
    """The kind of limit and the profile of draw `number`."""
    pick = random.Random(number)
    kind = pick.choice(KINDS)
    rate: float = pick.choice([1, 2, 3, 5, 8, 10, 20, 50, 100, 300])
    fastest = pick.choice([0.01, 0.05, 0.2, 0.8, 3.0])
    processes = pick.choice([1, 1, 2, 3, 4, 8, 16])
    shape: dict[str, Any] = {
        "burst": pick.choice([0.05, 0.1, 0.5, 1, 2, 4]),
        "latency": (fastest, fastest * pick.choice([1.5, 3, 5])),
        "retry_after": pick.choice(["integer", "fraction", "absent", "zero", "negative", "date"]),
        "calls": max(processes * 8, pick.choice([40, 100, 200, 400])),
        "concurrency": pick.choice([4, 16, 64, 256]),
        "processes": processes,
        "refusal": pick.choice([(0.001, 0.003), (0.03, 0.08), (0.05, 0.2), (0.2, 0.6), (1.0, 2.0)]),
    }
    if kind == "fixed":
        shape["fixed_window"] = True
    elif kind == "sliding":
        shape["sliding_window"] = True
    elif kind == "concurrency":
        shape["concurrency_limit"] = pick.choice([1, 2, 3, 5, 10, 20, 50])
        rate = 10_000
    elif kind == "tokens":
        shape["tokens_per_minute"] = pick.choice([200_000, 600_000, 1_200_000])
        rate = 10_000
    elif kind == "overload":
        shape["overload"] = Overload(
            share=pick.choice([0.1, 0.3, 0.5, 0.7]),
            until=pick.choice([2.0, 10.0, 30.0]),
            status=pick.choice([503, 529]),
            retry_after=pick.choice([True, False]),
        )
    elif kind == "moving":
        shape["limit_after"] = (pick.choice([1.0, 3.0, 6.0]), pick.choice([1, 3, 10, 50, 500]))
    return kind, Profile(rate, **shape)


def lost(first: int, count: int, seeds: range = range(2)) -> dict[int, tuple[str, list[str]]]:
    """Per draw that lost a call: its kind, and each lost call's error (its first words)."""
    found = {}
    for number in range(first, first + count):
        kind, profile = draw(number)
        errors = [error for seed in seeds for error in run(profile, seed).errors]
        if errors:
            found[number] = (kind, [" ".join(error.split()[:6]) for error in errors])
    return found


def summary(found: dict[int, tuple[str, list[str]]]) -> dict[str, Any]:
    by_kind = collections.Counter(kind for kind, _ in found.values())
    by_error = collections.Counter(error for _, errors in found.values() for error in errors)
    return {
        "draws that lost a call": len(found),
        "calls lost": sum(len(errors) for _, errors in found.values()),
        "by kind (draws)": dict(by_kind),
        "by error (calls)": dict(by_error),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--json", help="write every draw that lost a call here")
    args = parser.parse_args()
    found = lost(args.first, args.count)
    print(json.dumps(summary(found), indent=1))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(found, out, indent=1)


if __name__ == "__main__":
    main()
