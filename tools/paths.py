"""The repository's folders, for tests and tools wherever they sit in the tree."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "langchain_kimi"
CASSETTE_ROOT = ROOT / "cassettes"
SPEC_DIR = ROOT / "spec"
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
