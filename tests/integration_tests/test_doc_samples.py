"""Every Python sample in the README and the docs runs, as written, against cassettes.

Each ```python block must be announced by a comment right above it:
`<!-- sample: cassette=<path under cassettes/> -->` (replayed, record mode none, JSON bodies
matched) or `<!-- sample: offline -->` (no network at all). A block without one fails, so no sample
goes unrun. Right after the block, `<!-- output -->` and a ```text block show what it prints: the
sample's output must equal it, line for line, so the page never shows what the code does not do.
A sample that replays a cassette calls the service when copied out of the page: the paragraph right
above its annotation says in one line that it needs `EVOLINK_API_KEY` and names the page
"Try it without a key" (`without-a-key.md`).
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cassette_format import replay_vcr
from tests.support.paths import ROOT

SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```python\s*$")
_ANNOTATION = re.compile(r"<!--\s*sample:\s*(offline|cassette=(\S+))\s*-->")
_OUTPUT = re.compile(r"^<!--\s*output\s*-->\s*$")


@dataclass(frozen=True)
class Sample:
    source: Path
    line: int
    code: str
    cassette: str | None
    annotated: bool
    shown: str | None
    """The output the page shows under the sample, or None when it shows none."""
    preamble: str
    """The paragraph right above the sample's annotation (where the page says what it needs)."""

    @property
    def id(self) -> str:
        return f"{self.source.relative_to(ROOT)}:{self.line}"


def _samples() -> Iterator[Sample]:
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
                shown=_shown_output(lines, end),
                preamble=_paragraph_above(lines, above),
            )


def _shown_output(lines: list[str], end: int) -> str | None:
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


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


SAMPLES = list(_samples())


def test_samples_were_found() -> None:
    assert len(SAMPLES) >= 10


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id for s in SAMPLES])
def test_sample_runs(sample: Sample, monkeypatch: pytest.MonkeyPatch) -> None:
    assert sample.annotated, (
        f"{sample.id}: announce the sample with <!-- sample: offline --> or "
        "<!-- sample: cassette=... --> so that it runs in CI"
    )
    output = io.StringIO()
    # A real module, so that pydantic can resolve the sample's annotations.
    module = types.ModuleType("doc_sample")
    monkeypatch.setitem(sys.modules, "doc_sample", module)
    replay = contextlib.nullcontext()
    if sample.cassette is not None:
        path = ROOT / "cassettes" / sample.cassette
        assert path.is_file(), f"{sample.id}: no cassette {path}"
        replay = replay_vcr().use_cassette(str(path), allow_playback_repeats=True)
    assert sample.shown is not None, (
        f"{sample.id}: show what the sample prints in an <!-- output --> ```text block after it"
    )
    with replay, contextlib.redirect_stdout(output):
        exec(compile(sample.code, sample.id, "exec"), module.__dict__)
    assert output.getvalue().strip(), f"{sample.id} printed nothing"
    assert _lines(output.getvalue()) == _lines(sample.shown), f"{sample.id}: not what the page shows"


@pytest.mark.parametrize(
    "sample", [s for s in SAMPLES if s.cassette], ids=[s.id for s in SAMPLES if s.cassette]
)
def test_a_sample_that_calls_the_service_says_it_needs_a_key(sample: Sample) -> None:
    """Copied out of the page, a cassette sample calls the service: the page says so above it."""
    advice = (
        f"{sample.id}: say in one line above the sample that it needs EVOLINK_API_KEY and point "
        "at the page 'Try it without a key' (without-a-key.md)"
    )
    assert "EVOLINK_API_KEY" in sample.preamble, advice
    assert "without-a-key" in sample.preamble, advice


def test_shown_output_is_read_from_the_page() -> None:
    page = ["```python", "print(1)", "```", "", "<!-- output -->", "```text", "1", "```"]
    assert _shown_output(page, 2) == "1"
    assert _shown_output(["```python", "x", "```", "", "Prose.", "```text", "1", "```"], 2) is None
