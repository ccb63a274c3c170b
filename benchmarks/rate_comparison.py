"""The rate simulation, this checkout's policy beside an earlier commit's, in one run.

Every profile of `benchmarks.rate_catalog` on the same seeds, worst seed per profile: wall time
over the ideal, requests per answer, calls lost. The earlier commit (by default the last one with
the previous controller) is exported from git into a temporary folder and simulated there, with
its own simulation of its own code, in a child process; nothing of it is kept.

    python -m benchmarks.rate_comparison [--seeds 16] [--before COMMIT] [--json PATH]

Prints the table docs/benchmarks.md shows, and writes the figures as JSON (`--json`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from benchmarks.rate_catalog import ALL
from benchmarks.rate_simulation import run

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "39e4a39"
"""The last commit with the previous rate controller (3,054 lines in `limits/` and `pool/`)."""

Figures = dict[str, dict[str, float]]

_OLD_FIGURES = textwrap.dedent(
    """
    import json, sys
    from tests.support.pool_simulation import run
    from tests.support.rate_catalog import ALL
    seeds = range(int(sys.argv[1]))
    figures = {}
    for name, profile in ALL.items():
        results = [run(profile, seed) for seed in seeds]
        figures[name] = {
            "wall": max(r.wall_over_ideal for r in results),
            "requests": max(r.requests_per_answer for r in results),
            "lost": sum(r.failed for r in results),
        }
    print(json.dumps(figures))
    """
)


def new_figures(seeds: int) -> Figures:
    figures: Figures = {}
    for name, profile in ALL.items():
        results = [run(profile, seed) for seed in range(seeds)]
        figures[name] = {
            "wall": max(r.wall_over_ideal for r in results),
            "requests": max(r.requests_per_answer for r in results),
            "lost": sum(r.failed for r in results),
        }
    return figures


def old_figures(commit: str, seeds: int) -> Figures:
    """The same profiles and seeds through the controller of `commit`, checked out for the run."""
    with tempfile.TemporaryDirectory() as folder:
        archive = Path(folder) / "tree.tar"
        subprocess.run(
            ["git", "archive", "--format=tar", "-o", str(archive), commit],
            cwd=ROOT,
            check=True,
            timeout=120,
        )
        with tarfile.open(archive) as tree:
            tree.extractall(folder, filter="data")
        child = subprocess.run(
            [sys.executable, "-c", _OLD_FIGURES, str(seeds)],
            cwd=folder,
            capture_output=True,
            text=True,
            check=True,
            timeout=3600,
        )
    figures: Figures = json.loads(child.stdout)
    return figures


def summary(figures: Figures) -> dict[str, float]:
    walls = [f["wall"] for f in figures.values()]
    requests = [f["requests"] for f in figures.values()]
    return {
        "lost": sum(f["lost"] for f in figures.values()),
        "median_wall": statistics.median(walls),
        "worst_wall": max(walls),
        "median_requests": statistics.median(requests),
        "worst_requests": max(requests),
    }


def table(new: Figures, old: Figures) -> str:
    rows = [
        "| gateway | wall ÷ ideal, before | now | requests / answer, before | now "
        "| lost, before | now |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in new:
        n, o = new[name], old[name]
        rows.append(
            f"| {name} | {o['wall']:.2f} | {n['wall']:.2f} | {o['requests']:.2f} | "
            f"{n['requests']:.2f} | {o['lost']:.0f} | {n['lost']:.0f} |"
        )
    s_new, s_old = summary(new), summary(old)
    rows.append(
        f"| **median (worst)** | {s_old['median_wall']:.2f} ({s_old['worst_wall']:.2f}) | "
        f"{s_new['median_wall']:.2f} ({s_new['worst_wall']:.2f}) | "
        f"{s_old['median_requests']:.2f} ({s_old['worst_requests']:.2f}) | "
        f"{s_new['median_requests']:.2f} ({s_new['worst_requests']:.2f}) | "
        f"{s_old['lost']:.0f} | {s_new['lost']:.0f} |"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=16)
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    new = new_figures(args.seeds)
    old = old_figures(args.before, args.seeds)
    print(table(new, old))
    if args.json is not None:
        payload: dict[str, Any] = {
            "seeds": args.seeds,
            "before": args.before,
            "now": new,
            "previous": old,
            "summary": {"now": summary(new), "previous": summary(old)},
        }
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
