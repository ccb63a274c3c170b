"""One table of knobs (`_http/limits/knobs.py`), read by the code and rendered by the docs: at
most eight, and no other number of its own in `limits/` or `pool/`.

A page refers to a knob as `{knob:NAME}` (the docs hook writes its value); a rate-limit passage
that states a number the table does not hold (a value retyped by hand, or one left stale after a
change), or names a knob the table lacks, fails here.
"""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from pathlib import Path

import pytest

from docs import hooks
from langchain_kimi._http.limits import knobs
from tools.paths import PACKAGE, ROOT

DOCS = ROOT / "docs"
HTTP = PACKAGE / "_http"
POLICY_MODULES = sorted([*(HTTP / "limits").glob("*.py"), *(HTTP / "pool").glob("*.py")])

NUMBER = re.compile(r"(?<![\w.])\d(?:[\d,]*\d)?(?:\.\d+)?")

# The numbers a rate-limit passage may state besides the knobs: HTTP statuses and `0`.
STATUSES = {"429", "503", "529", "0", "1"}


def section(page: str, heading: str, until: str = "\n## ") -> str:
    """From `heading` to the next `until` (the next section, or the paragraph's end)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find(until, start + len(heading))
    return text[start : end if end != -1 else len(text)]


def stray_numbers(passage: str, allowed: set[str]) -> list[str]:
    """The numbers of `passage` that are neither a `{knob:NAME}` nor allowed."""
    bare = hooks.KNOB_REFERENCE.sub("", passage)
    bare = re.sub(r"`[^`]*`", "", bare)  # code: names, `max_retries + 1`, headers
    bare = bare.replace("<!-- table:rate-knobs -->", "")
    return [number for number in NUMBER.findall(bare) if number not in allowed]


PASSAGES = [("errors.md", "## Rate limits", "\n## ", STATUSES)]


@pytest.mark.parametrize(("page", "heading", "until", "allowed"), PASSAGES)
def test_a_rate_limit_passage_states_no_number_of_its_own(
    page: str, heading: str, until: str, allowed: set[str]
) -> None:
    assert stray_numbers(section(page, heading, until), allowed) == []


def test_a_retyped_knob_value_is_caught() -> None:
    passage = "After {knob:span} without a 429 (2.5 s), the rate doubles again."
    assert stray_numbers(passage, STATUSES) == ["2.5"]


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_every_knob_a_page_names_is_in_the_table(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    names = {f.name for f in fields(knobs.Knobs)}
    assert sorted(set(hooks.KNOB_REFERENCE.findall(text)) - names) == []
    hooks.render_knobs(text)  # and the hook renders it


def test_an_unknown_knob_fails_the_docs_build() -> None:
    with pytest.raises(ValueError, match="no such knob"):
        hooks.render_knobs("{knob:spam}")


def test_a_reference_renders_the_value_and_its_unit() -> None:
    assert (
        hooks.render_knobs("{knob:span}, {knob:cut}, {knob:idle_connections}") == "2.5 s, 0.7, 100"
    )


def test_the_rendered_table_has_every_knob_with_its_meaning() -> None:
    table = hooks.rate_knobs_table()
    for knob in fields(knobs.Knobs):
        value = knobs.format_value(getattr(knobs.KNOBS, knob.name))
        assert f"| `{knob.name}` | {value} | {knob.metadata['unit']} |" in table
        assert knob.metadata["meaning"]
    assert "<!-- table:rate-knobs -->" in (DOCS / "errors.md").read_text(encoding="utf-8")


def test_the_knobs_are_frozen() -> None:
    with pytest.raises(AttributeError):
        knobs.KNOBS.span = 3.0  # type: ignore[misc]


def test_there_are_at_most_eight_knobs() -> None:
    assert len(fields(knobs.Knobs)) <= 8


@pytest.mark.parametrize("path", POLICY_MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_module_of_the_policy_keeps_a_number_of_its_own(path: Path) -> None:
    """Module-level numbers live in `knobs.py` (the ceiling of an unpaced rate and the fork counter aside)."""
    if path.name == "knobs.py":
        return
    own = [
        target.id
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, int | float)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    ]
    assert [name for name in own if name not in ("MAX_RATE", "_generation")] == []
