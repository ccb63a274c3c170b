"""The Python samples of the README and the docs pages, as `tests/integration_tests/
test_doc_samples.py` runs them (see its docstring for the annotations), the output each page
shows under its sample and the paragraph above it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tools.paths import ROOT

SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```python\s*$")
_ANNOTATION = re.compile(r"<!--\s*sample:\s*(offline|pytest-file|cassette=(\S+))\s*-->")
_OUTPUT = re.compile(r"^<!--\s*output\s*-->\s*$")


@dataclass(frozen=True)
class Sample:
    source: Path
    line: int
    code: str
    cassette: str | None
    annotated: bool
    pytest_file: bool
    """A user's test file: run by pytest in a project of its own, not here."""
    shown: str | None
    """The output the page shows under the sample, or None when it shows none."""
    preamble: str
    """The paragraph right above the sample's annotation (where the page says what it needs)."""

    @property
    def id(self) -> str:
        return f"{self.source.relative_to(ROOT)}:{self.line}"


def samples() -> Iterator[Sample]:
    for source in SOURCES:
        lines = source.read_text(encoding="utf-8").splitlines()
        for index, line in enumerate(lines):
            if not _FENCE.match(line):
                continue
            end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            above = next((i for i in range(index - 1, -1, -1) if lines[i].strip()), -1)
            match = _ANNOTATION.search(lines[above]) if above >= 0 else None
            yield Sample(
                source=source,
                line=index + 1,
                code="\n".join(lines[index + 1 : end]),
                cassette=match.group(2) if match else None,
                annotated=match is not None,
                pytest_file=match is not None and match.group(1) == "pytest-file",
                shown=shown_output(lines, end),
                preamble=_paragraph_above(lines, above),
            )


def shown_output(lines: list[str], end: int) -> str | None:
    """The ```text block announced by `<!-- output -->` right after the sample ending at `end`."""
    after = [i for i in range(end + 1, len(lines)) if lines[i].strip()]
    if len(after) < 2 or not _OUTPUT.match(lines[after[0]]) or lines[after[1]] != "```text":
        return None
    start = after[1] + 1
    close = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    return "\n".join(lines[start:close])


def _paragraph_above(lines: list[str], annotation: int) -> str:
    """The paragraph (non-blank lines) closest above line `annotation`."""
    end = annotation - 1
    while end >= 0 and not lines[end].strip():
        end -= 1
    start = end
    while start > 0 and lines[start - 1].strip():
        start -= 1
    return "\n".join(lines[start : end + 1]) if end >= 0 else ""


ALL_SAMPLES = list(samples())
RUN_HERE = [s for s in ALL_SAMPLES if not s.pytest_file]
"""Run by `test_doc_samples` (replayed or offline)."""
PYTEST_FILES = [s for s in ALL_SAMPLES if s.pytest_file]
"""Users' test files: run by `tests/unit_tests/testing/test_kimi_cassette.py` in a project."""
