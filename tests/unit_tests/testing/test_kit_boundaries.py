"""Where the testing kit sits: on top of the package (DESIGN.md: "testing/ ... sits on top, like
doctor"), importing nothing from this repository's tests, light to load as a pytest plugin, and
saying what to install when its extra is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.imports import imported_modules
from tests.support.paths import ROOT

PACKAGE = ROOT / "langchain_kimi"
KIT = PACKAGE / "testing"


def _imports(path: Path) -> set[str]:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = ".".join(parts[:-1])  # a module's package; an __init__'s is its own
    return imported_modules(path.read_text(encoding="utf-8"), package)


@pytest.mark.parametrize("path", sorted(KIT.rglob("*.py")), ids=lambda p: p.name)
def test_the_kit_imports_nothing_from_the_tests(path: Path) -> None:
    assert not [m for m in _imports(path) if m == "tests" or m.startswith("tests.")]


def test_the_package_below_never_imports_the_kit() -> None:
    below = [p for p in PACKAGE.rglob("*.py") if KIT not in p.parents]
    leaks = {
        p.name: m for p in below for m in _imports(p) if m.startswith("langchain_kimi.testing")
    }
    assert leaks == {}


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


def test_the_pytest_plugin_loads_neither_vcrpy_nor_jsonschema() -> None:
    """Every pytest run imports the plugin once the package is installed."""
    done = _run(
        "import sys, langchain_kimi.testing.pytest_plugin\n"
        "print(sorted(m for m in ('vcr', 'jsonschema', 'langchain_kimi.testing.gateway') "
        "if m in sys.modules))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_without_the_testing_extra_the_error_says_what_to_install() -> None:
    done = _run(
        "import sys; sys.modules['jsonschema'] = None\n"
        "from langchain_kimi.testing import FakeKimiGateway"
    )
    assert done.returncode == 1
    assert "pip install 'langchain-kimi[testing]'" in done.stderr
