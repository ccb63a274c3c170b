"""The Python samples of the README and the docs pages, as `tests/integration_tests/
test_doc_samples.py` runs them (see its docstring for the annotations), and the output each page
shows under its sample.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT

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
            previous = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
            match = _ANNOTATION.search(previous)
            yield Sample(
                source=source,
                line=index + 1,
                code="\n".join(lines[index + 1 : end]),
                cassette=match.group(2) if match else None,
                annotated=match is not None,
                pytest_file=match is not None and match.group(1) == "pytest-file",
                shown=shown_output(lines, end),
            )


def shown_output(lines: list[str], end: int) -> str | None:
    """The ```text block announced by `<!-- output -->` right after the sample ending at `end`."""
    after = [i for i in range(end + 1, len(lines)) if lines[i].strip()]
    if len(after) < 2 or not _OUTPUT.match(lines[after[0]]) or lines[after[1]] != "```text":
        return None
    start = after[1] + 1
    close = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    return "\n".join(lines[start:close])


ALL_SAMPLES = list(samples())
RUN_HERE = [s for s in ALL_SAMPLES if not s.pytest_file]
"""Run by `test_doc_samples` (replayed or offline)."""
PYTEST_FILES = [s for s in ALL_SAMPLES if s.pytest_file]
"""Users' test files: run by `tests/unit_tests/testing/test_kimi_cassette.py` in a project."""
