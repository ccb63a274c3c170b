"""The README and the docs speak to users: no issue numbers, branch names or commits.

Users have no issue tracker of this project to read, nor its branches; what a page says holds for
the code it ships with, so it names neither the work that led to it nor a commit it was measured
on. Samples and their output (fenced blocks) are left out: `request #1` there is program output.
"""

from __future__ import annotations

import re

import pytest

from tools.paths import ROOT

PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCED = re.compile(r"^\s*```.*?^\s*```", re.MULTILINE | re.DOTALL)

HISTORY = {
    "an issue number": r"\bissues? #?\d+",
    "an issue reference": r"(?<![\w&/#])#\d+\b",
    "a branch name": r"\bwave\d+-[\w-]+|\bmain@|\bbranch(?:es)? `[^`]+`",
    "a commit": r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b",
}


def _history(text: str) -> list[str]:
    prose = " ".join(_FENCED.sub("", text).split())
    return [
        f"{what}: ...{prose[max(0, m.start() - 30) : m.end() + 10]}..."
        for what, pattern in HISTORY.items()
        for m in re.finditer(pattern, prose, re.IGNORECASE if what != "a commit" else 0)
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_names_no_issue_branch_or_commit(page) -> None:
    assert _history(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "text",
    [
        "What issue 22 of this project measured.",
        "(issues 20 and 29)",
        "fixed in #41.",
        "merged from wave5-docs",
        "as on main@3863ad8",
        "on branch `tune3`",
        "the run recorded here: commit c4c1429",
    ],
)
def test_each_kind_of_history_is_found(text: str) -> None:
    assert _history(text)


def test_samples_and_anchors_are_not_history() -> None:
    text = "See [Reasoning](reasoning.md#across-protocols).\n\n```text\nrequest #1\n```\n"
    assert _history(text + "A 1,048,576-token context; `#` in a URL is refused.") == []
