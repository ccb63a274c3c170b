"""Every Python sample in the README and the docs runs, as written, against cassettes.

Each ```python block must be announced by a comment right above it:
`<!-- sample: cassette=<path under cassettes/> -->` (replayed, record mode none, JSON bodies
matched), `<!-- sample: offline -->` (no network at all) or `<!-- sample: pytest-file -->` (a
test file of the user's, run by `tests/unit_tests/testing/test_kimi_cassette.py` in a throwaway
project). A block without one fails, so no sample goes unrun. Right after the block, `<!-- output -->` and a ```text block show what it prints: the
sample's output must equal it, line for line, so the page never shows what the code does not do.
A sample that replays a cassette calls the service when copied out of the page: the paragraph right
above its annotation says in one line that it needs `EVOLINK_API_KEY` and names the page
"Try it without a key" (`without-a-key.md`).
"""

from __future__ import annotations

import contextlib
import io
import sys
import types

import pytest

from tests.support.doc_samples import RUN_HERE, Sample, shown_output
from tools.cassette_format import replay_vcr
from tools.paths import ROOT


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


SAMPLES = RUN_HERE


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
    assert _lines(output.getvalue()) == _lines(sample.shown), (
        f"{sample.id}: not what the page shows"
    )


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
    assert shown_output(page, 2) == "1"
    assert shown_output(["```python", "x", "```", "", "Prose.", "```text", "1", "```"], 2) is None
