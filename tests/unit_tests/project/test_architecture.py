"""The layering rule of docs/internals.md: a protocol change touches `protocols/<protocol>/` and
`_profiles.py`, nothing else.

Enforced on the imports: outside `langchain_kimi/protocols/`, code reaches a protocol only through
`langchain_kimi.protocols` (its `__init__`), never a subpackage; and one protocol's subpackage
never imports another's.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import PACKAGE

PROTOCOLS = PACKAGE / "protocols"
SUBPACKAGES = sorted(p.name for p in PROTOCOLS.iterdir() if (p / "__init__.py").is_file())


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path: Path) -> str:
    """The package relative imports in `path` are resolved against."""
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imported_modules(source: str, package: str) -> set[str]:
    """Every module `source` imports, absolute (`from x import y` counts `x` and `x.y`), lazy
    imports inside functions included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _imports_of(path: Path) -> set[str]:
    return imported_modules(path.read_text(encoding="utf-8"), _package_of(path))


def _owner(module: str) -> str | None:
    """The protocol subpackage a module belongs to, or None."""
    parts = module.split(".")
    if parts[:2] == ["langchain_kimi", "protocols"] and len(parts) > 2 and parts[2] in SUBPACKAGES:
        return parts[2]
    return None


def test_the_subpackages_are_found() -> None:
    assert SUBPACKAGES == ["anthropic_messages", "openai_chat"]


def test_imported_modules_sees_every_form() -> None:
    source = (
        "import langchain_kimi.protocols.openai_chat.stream\n"
        "from langchain_kimi.protocols import anthropic_messages\n"
        "from .protocols.openai_chat import web_search\n"
        "def lazy():\n"
        "    from langchain_kimi.protocols.anthropic_messages.request import build_request\n"
    )
    found = imported_modules(source, "langchain_kimi")
    assert "langchain_kimi.protocols.openai_chat.web_search" in found
    assert "langchain_kimi.protocols.anthropic_messages.request.build_request" in found
    assert {_owner(m) for m in found} - {None} == {"anthropic_messages", "openai_chat"}
    assert imported_modules("from .. import _contract", "langchain_kimi.protocols") == {
        "langchain_kimi",
        "langchain_kimi._contract",
    }


OUTSIDE = sorted(p for p in PACKAGE.rglob("*.py") if PROTOCOLS not in p.parents)


@pytest.mark.parametrize("path", OUTSIDE, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_outside_code_reaches_protocols_only_through_their_init(path: Path) -> None:
    leaks = sorted(m for m in _imports_of(path) if _owner(m) is not None)
    assert leaks == [], f"{path.name} imports a protocol subpackage directly: {leaks}"


INSIDE = sorted(p for p in PROTOCOLS.rglob("*.py") if _owner(_module_name(p)) is not None)


@pytest.mark.parametrize("path", INSIDE, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_protocol_never_imports_another(path: Path) -> None:
    own = _owner(_module_name(path))
    foreign = sorted(m for m in _imports_of(path) if _owner(m) not in (None, own))
    assert foreign == [], f"{path.name} ({own}) imports another protocol: {foreign}"
