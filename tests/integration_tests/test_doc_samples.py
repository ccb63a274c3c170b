"""Every Python sample in the README and the docs runs, as written, against cassettes.

Each ```python block must be announced by a comment right above it:
`<!-- sample: cassette=<path under cassettes/> -->` (replayed, record mode none, JSON bodies
matched) or `<!-- sample: offline -->` (no network at all). A block without one fails, so no sample
goes unrun.
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

from tests.cassette_format import replay_vcr

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```python\s*$")
_ANNOTATION = re.compile(r"<!--\s*sample:\s*(offline|cassette=(\S+))\s*-->")


@dataclass(frozen=True)
class Sample:
    source: Path
    line: int
    code: str
    cassette: str | None
    annotated: bool

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
            previous = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
            match = _ANNOTATION.search(previous)
            yield Sample(
                source=source,
                line=index + 1,
                code="\n".join(lines[index + 1 : end]),
                cassette=match.group(2) if match else None,
                annotated=match is not None,
            )


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
    with replay, contextlib.redirect_stdout(output):
        exec(compile(sample.code, sample.id, "exec"), module.__dict__)
    assert output.getvalue().strip(), f"{sample.id} printed nothing"
