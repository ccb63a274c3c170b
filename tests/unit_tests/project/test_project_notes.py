"""The project notes a user reads (SECURITY.md, CONTRIBUTING.md, CHANGELOG.md) stay true to the tree.

SECURITY.md pins each promise about the key to a test; when tests move or are renamed, a stale
reference fails here instead of pointing readers at nothing.
"""

from __future__ import annotations

import re

import pytest

from tools.paths import ROOT

NOTES = ["SECURITY.md", "CONTRIBUTING.md", "CHANGELOG.md"]
_REFERENCE = re.compile(
    r"`?((?:tests|langchain_kimi|docs|examples)/[\w/.-]+\.(?:py|md))(?:::(\w+))?"
)


def _references(name: str) -> list[tuple[str, str | None]]:
    text = (ROOT / name).read_text(encoding="utf-8")
    return [(path, test or None) for path, test in _REFERENCE.findall(text)]


@pytest.mark.parametrize("name", NOTES)
def test_every_file_and_test_a_note_names_exists(name: str) -> None:
    references = _references(name)
    missing = [path for path, _ in references if not (ROOT / path).is_file()]
    assert missing == [], f"{name} names files that do not exist"
    absent = [
        f"{path}::{test}"
        for path, test in references
        if test and not re.search(rf"^\s*(async )?def {test}\b", (ROOT / path).read_text(), re.M)
    ]
    assert absent == [], f"{name} names tests that do not exist"


def test_security_pins_its_promises_to_tests() -> None:
    pinned = [ref for ref in _references("SECURITY.md") if ref[1]]
    assert len(pinned) >= 10


def test_changelog_keeps_an_unreleased_section_first() -> None:
    headings = re.findall(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert headings[0] == "Unreleased"
