"""The rate simulation's figures for every catalogued profile, and the knob sweep.

`python -m tests.support.knob_sweep figures [--json PATH] [--set NAME=VALUE]` prints, per profile, wall / ideal and
requests per answer (median and worst of the seeds) and failed calls, on the shipped knobs.
`python -m tests.support.knob_sweep sweep [--json PATH] [KNOB ...]` runs every profile with each
knob halved and doubled (an integer knob rounded, at least 1) and prints which profiles change
and how; `... table PATH` renders a sweep's JSON as the table in docs/benchmarks.md. Simulated time only (`tests.support.pool_simulation`): CPU-light, no network.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import statistics
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from langchain_kimi._http.limits import knobs as knobs_module
from langchain_kimi._http.limits import slow_start
from tests.support.pool_simulation import Profile, run
from tests.support.rate_catalog import ALL, SEEDS

Figures = dict[str, float]


def figures(profile: Profile, seeds: Sequence[int] = SEEDS) -> Figures:
    """Median and worst of the seeds: wall / ideal, requests per answer; failed calls summed."""
    results = [run(profile, seed) for seed in seeds]
    walls = [r.wall_over_ideal for r in results]
    requests = [r.requests_per_answer for r in results]
    return {
        "wall": round(statistics.median(walls), 3),
        "wall_min": round(min(walls), 3),
        "wall_max": round(max(walls), 3),
        "requests": round(statistics.median(requests), 3),
        "requests_min": round(min(requests), 3),
        "requests_max": round(max(requests), 3),
        "failed": float(sum(r.failed for r in results)),
    }


def all_figures(profiles: Mapping[str, Profile] = ALL) -> dict[str, Figures]:
    return {name: figures(profile) for name, profile in profiles.items()}


@contextlib.contextmanager
def knob_set(name: str, value: float) -> Iterator[None]:
    """The shipped table with one knob changed, for the duration (the one frozen instance every
    module reads, and the slow start's dataclass default, read when the class was built)."""
    table = knobs_module.KNOBS
    old = getattr(table, name)
    object.__setattr__(table, name, value)
    default = slow_start.SlowStart.__init__.__defaults__
    if name == "start_window":
        assert default is not None
        slow_start.SlowStart.__init__.__defaults__ = (int(value), *default[1:])
    try:
        yield
    finally:
        object.__setattr__(table, name, old)
        slow_start.SlowStart.__init__.__defaults__ = default


@contextlib.contextmanager
def knobs_set(values: Mapping[str, float]) -> Iterator[None]:
    """The shipped table with every knob of `values` changed (to its own type), for the
    duration."""
    with contextlib.ExitStack() as stack:
        for name, value in values.items():
            kind = type(getattr(knobs_module.KNOBS, name))
            stack.enter_context(knob_set(name, kind(value)))
        yield


def varied(value: float, factor: float) -> float:
    if isinstance(value, int):
        return max(1, round(value * factor))
    return value * factor


def changes(base: Mapping[str, Figures], other: Mapping[str, Figures]) -> list[str]:
    """The profiles whose figures differ, each with its median wall and requests before -> after."""
    out = []
    for name, before in base.items():
        after = other[name]
        if after == before:
            continue
        parts = []
        for key, label in (("wall", "wall"), ("requests", "req"), ("failed", "failed")):
            if after[key] != before[key]:
                parts.append(f"{label} {before[key]:g}->{after[key]:g}")
        if not parts:  # only a min or max moved
            parts.append(
                f"worst wall {before['wall_max']:g}->{after['wall_max']:g}, "
                f"worst req {before['requests_max']:g}->{after['requests_max']:g}"
            )
        out.append(f"{name}: {'; '.join(parts)}")
    return out


def sweep(names: list[str]) -> dict[str, Any]:
    base = all_figures()
    report: dict[str, Any] = {"base": base, "knobs": {}}
    for name in names:
        value = getattr(knobs_module.KNOBS, name)
        entry: dict[str, dict[str, Any]] = {}
        for label, factor in (("halved", 0.5), ("doubled", 2.0)):
            new = varied(value, factor)
            with knob_set(name, new):
                result = all_figures()
            entry[label] = {"value": new, "figures": result, "changes": changes(base, result)}
            print(f"{name} {label} ({value:g} -> {new:g}):", flush=True)
            for line in entry[label]["changes"] or ["no profile changes"]:
                print(f"    {line}", flush=True)
        report["knobs"][name] = entry
    return report


def _moves(base: Mapping[str, Figures], other: Mapping[str, Figures]) -> str:
    """One cell of the sweep table: how many profiles moved, and the largest moves."""
    changed = [name for name in base if other[name] != base[name]]
    if not changed:
        return "none"
    failed = sum(other[name]["failed"] > 0 and base[name]["failed"] == 0 for name in base)

    def worse(name: str, key: str) -> float:
        return other[name][f"{key}_max"] - base[name][f"{key}_max"]

    parts = [f"{len(changed)}"]
    for key, label in (("wall", "wall"), ("requests", "req/answer")):
        up = sum(worse(name, key) > 0.01 for name in changed)
        down = sum(worse(name, key) < -0.01 for name in changed)
        if up or down:
            top = max(changed, key=lambda name: abs(worse(name, key)))
            shift = f"{base[top][f'{key}_max']:.2f}->{other[top][f'{key}_max']:.2f}"
            parts.append(f"{label} worse {up} / better {down} (most: {top}, {shift})")
    if failed:
        parts.append(f"**calls lost in {failed}**")
    return "; ".join(parts)


def table(report: Mapping[str, Any]) -> str:
    """The sweep as docs/benchmarks.md shows it: per knob, halved and doubled, the profiles whose
    worst-of-seeds figures moved by more than 0.01 (worse / better) and the largest move."""
    base = report["base"]
    out = [
        "| knob | halved | doubled |",
        "|---|---|---|",
    ]
    for name, entry in report["knobs"].items():
        cells = []
        for label in ("halved", "doubled"):
            value = entry[label]["value"]
            cells.append(f"({value:g}) {_moves(base, entry[label]['figures'])}")
        out.append(f"| `{name}` | {cells[0]} | {cells[1]} |")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["figures", "sweep", "table"])
    parser.add_argument("knobs", nargs="*")
    parser.add_argument("--json")
    parser.add_argument("--set", action="append", default=[], help="NAME=VALUE (figures)")
    args = parser.parse_args(argv)
    if args.mode == "table":  # from a sweep's --json
        with open(args.knobs[0]) as saved:
            print(table(json.load(saved)), end="")
        return
    if args.mode == "figures":
        assignments = dict(assignment.split("=") for assignment in args.set)
        with knobs_set({name: float(value) for name, value in assignments.items()}):
            report: Any = all_figures()
        for name, row in report.items():
            print(
                f"{name:62s} wall {row['wall']:.2f} ({row['wall_min']:.2f}-{row['wall_max']:.2f})"
                f"  req {row['requests']:.2f} ({row['requests_min']:.2f}-"
                f"{row['requests_max']:.2f})  failed {row['failed']:g}",
                flush=True,
            )
    else:
        names = args.knobs or [knob.name for knob in dataclasses.fields(knobs_module.Knobs)]
        report = sweep(names)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
