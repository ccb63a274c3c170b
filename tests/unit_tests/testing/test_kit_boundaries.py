"""Where the testing kit sits: importing nothing from this repository's tests (a user's install
has none), light to load as a pytest plugin, and saying what to install when its extra is
missing. That nothing below imports it is `LAYERS` in tests/unit_tests/project/test_architecture.py
(the kit is the top layer)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tools.paths import PACKAGE

KIT = PACKAGE / "testing"


def _absolute_imports(path: Path) -> set[str]:
    """The modules `path` names in its absolute imports (relative ones stay in the package)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add(node.module or "")
    return found


@pytest.mark.parametrize("path", sorted(KIT.rglob("*.py")), ids=lambda p: p.name)
def test_the_kit_imports_nothing_from_the_tests(path: Path) -> None:
    imports = _absolute_imports(path)
    assert not [m for m in imports if m == "tests" or m.startswith("tests.")]


def test_the_import_reader_sees_the_kits_imports() -> None:
    assert {"httpx", "langchain_kimi.testing"} <= _absolute_imports(KIT / "gateway.py")


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


HEAVY = (
    "vcr",
    "jsonschema",
    "langchain_kimi.testing.gateway",
    "langchain_core",
    "langchain_kimi.chat_models",
    "pydantic",
    "httpx",
)
"""What a pytest run in a project that never asks for `kimi_cassette` must not pay for."""


def test_the_pytest_plugin_loads_nothing_heavy() -> None:
    """Every pytest run loads the plugin once the package is installed: as pytest does, through
    the `pytest11` entry point, which imports the package root `langchain_kimi` first."""
    done = _run(
        "import sys\n"
        "from importlib.metadata import entry_points\n"
        "(plugin,) = entry_points(group='pytest11', name='langchain_kimi')\n"
        "assert plugin.load().kimi_cassette\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
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
