"""The tests mirror the package's layers, and no test module leans on another.

- A unit test module sits in the folder of the layer it pins (`tests/unit_tests/<layer>/`),
  never loose in `tests/unit_tests/`; every folder of tests is a package, so two layers may
  hold modules of the same name.
- A test module imports no other test module and no `conftest.py`: fixtures come from the
  `conftest.py` of an enclosing folder, shared helpers from `tests/support/`.
- The tools (`tools/authoring`, `tools/live`) live outside `tests/`, and nothing outside `tests/`
  (tools, benchmarks, examples) imports from it: the tests import what they test, not back.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.paths import ROOT

TESTS = ROOT / "tests"
TEST_MODULES = sorted(
    [*TESTS.rglob("test_*.py"), *(ROOT / "tools").rglob("test_*.py")],
    key=lambda p: p.as_posix(),
)


def _imported_modules(path: Path) -> Iterator[str]:
    """Every module `path` imports, `from a.b import c` giving both `a.b` and `a.b.c`."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            yield base
            yield from (f"{base}.{alias.name}".lstrip(".") for alias in node.names)


def _is_test_module(dotted: str) -> bool:
    last = dotted.rsplit(".", 1)[-1]
    return last.startswith("test_") or last == "conftest"


def test_the_collection_finds_test_modules() -> None:
    # Guards the checks below against a glob that matches nothing.
    assert len(TEST_MODULES) > 40


@pytest.mark.parametrize("path", TEST_MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_test_module_imports_another_test_module(path: Path) -> None:
    offending = sorted({m for m in _imported_modules(path) if _is_test_module(m)})
    assert not offending, f"{path.name} imports {offending}: move shared code to tests/support/"


def test_the_import_check_sees_every_import_form(tmp_path: Path) -> None:
    module = tmp_path / "test_sample.py"
    module.write_text(
        "import tests.unit_tests.http.test_a\n"
        "from tests.unit_tests.http.test_b import helper\n"
        "from tests.unit_tests.http import test_c\n"
        "from . import conftest\n"
        "from tests.support.gateways import answering\n"
    )
    flagged = {m for m in _imported_modules(module) if _is_test_module(m)}
    assert flagged == {
        "tests.unit_tests.http.test_a",
        "tests.unit_tests.http.test_b",
        "tests.unit_tests.http.test_c",
        "conftest",
    }


def test_unit_test_modules_sit_in_a_layer_folder() -> None:
    loose = sorted(p.name for p in (TESTS / "unit_tests").glob("test_*.py"))
    assert not loose, f"place these in the folder of the layer they test: {loose}"


def test_every_folder_of_tests_is_a_package() -> None:
    folders = {p.parent for p in TEST_MODULES} | {p.parent for p in TESTS.rglob("conftest.py")}
    for folder in folders:
        while folder != ROOT:
            assert (folder / "__init__.py").is_file(), (
                f"{folder.relative_to(ROOT)} has no __init__.py"
            )
            folder = folder.parent


def test_the_tools_live_outside_tests() -> None:
    assert not (TESTS / "authoring").exists()
    assert not (TESTS / "live").exists()
    assert (ROOT / "tools" / "authoring" / "__main__.py").is_file()
    assert (ROOT / "tools" / "live" / "__main__.py").is_file()


# The tests import the tools they test (and the package's `langchain_kimi.testing`, the base
# both share); the tools, the benchmarks and the examples never import the tests.
OUTSIDE_TESTS = sorted(
    path for folder in ("tools", "benchmarks", "examples") for path in (ROOT / folder).rglob("*.py")
)


def test_the_collection_finds_modules_outside_tests() -> None:
    assert len(OUTSIDE_TESTS) > 40


@pytest.mark.parametrize("path", OUTSIDE_TESTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_tools_benchmarks_and_examples_import_nothing_from_tests(path: Path) -> None:
    found = sorted({m for m in _imported_modules(path) if m.split(".")[0] == "tests"})
    assert not found, f"{path.relative_to(ROOT)} imports {found}: the tests may import it, not back"
