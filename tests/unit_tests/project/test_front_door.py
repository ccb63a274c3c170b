"""The front door stays short: a README read in two minutes, a benchmarks page of one screenful
of sections (what a user needs: the figures and how to reproduce them, no history)."""

from __future__ import annotations

from tools.paths import ROOT


def _lines(name: str) -> int:
    return len((ROOT / name).read_text(encoding="utf-8").splitlines())


def test_the_readme_is_at_most_120_lines() -> None:
    assert _lines("README.md") <= 120


def test_the_benchmarks_page_is_at_most_400_lines() -> None:
    assert _lines("docs/benchmarks.md") <= 400
