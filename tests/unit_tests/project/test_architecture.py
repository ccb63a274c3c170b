"""The layer order of docs/internals.md, enforced on the imports.

- The package is a stack of layers (`LAYERS`, bottom first): a module imports only modules of its
  own layer or of a layer below it. Every import counts: module-level, function-local and
  type-only (`if TYPE_CHECKING:`) alike.
- No import circle anywhere in the package, and no `importlib` (every arrow is visible).
- The HTTP layer does not import `langchain_core` (it moves bytes, not messages).
- Outside `langchain_kimi/protocols/`, code reaches a protocol only through `langchain_kimi.protocols`
  and its shared modules, never a protocol's subpackage; one protocol's subpackage never imports
  another's. So a protocol change touches `protocols/<protocol>/` and `_request/profiles.py`.
- docs/internals.md mirrors `LAYERS` (its layer diagram) and lists every module (its map).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tools.paths import PACKAGE, ROOT

PROTOCOLS = PACKAGE / "protocols"
SUBPACKAGES = sorted(p.name for p in PROTOCOLS.iterdir() if (p / "__init__.py").is_file())
INTERNALS = ROOT / "docs" / "internals.md"

LAYERS: list[tuple[str, ...]] = [
    ("_version", "_json", "_errors", "_secrets", "_warn", "_settings"),
    ("_http",),
    ("_contract", "_request"),
    ("protocols",),
    ("_call",),
    ("_langchain",),
    ("chat_models", "doctor", "__main__", "__init__"),
    ("testing",),
]
"""Bottom first. A name is a module or a folder of the package (a folder holds its whole tree);
`__init__` is the package's own `__init__.py`."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path: Path) -> str:
    """The package relative imports in `path` are resolved against."""
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


FILES = sorted(PACKAGE.rglob("*.py"))
MODULES = {_module_name(p): p for p in FILES}


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a `from ... import` names, relative imports resolved against `package`."""
    base = node.module or ""
    if not node.level:
        return base
    parts = package.split(".")
    anchor = parts[: len(parts) - node.level + 1]
    return ".".join([*anchor, base] if base else anchor)


def imported_modules(source: str, package: str) -> set[str]:
    """Every module `source` imports, absolute (`from x import y` counts `x` and `x.y`), lazy
    and type-only imports included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def package_imports(source: str, package: str) -> set[str]:
    """The package's modules `source` imports (lazy and type-only imports included):
    `from x import y` is an arrow to `x.y` when that is a module, else to `x`. The packages a
    module lives in are not counted (Python runs their `__init__` first, but they import
    downwards from there)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else base)
    return {m for m in found if m in MODULES}


def _arrows(name: str) -> set[str]:
    path = MODULES[name]
    return package_imports(path.read_text(encoding="utf-8"), _package_of(path)) - {name}


ARROWS = {name: _arrows(name) for name in MODULES}


def layer_of(module: str) -> int:
    """The index in `LAYERS` of a package module (the longest matching name wins)."""
    relative = module.removeprefix("langchain_kimi").removeprefix(".") or "__init__"
    best: tuple[int, int] | None = None
    for index, names in enumerate(LAYERS):
        for name in names:
            inside = relative == name or relative.startswith(f"{name}.")
            if inside and (best is None or len(name) > best[1]):
                best = (index, len(name))
    if best is None:
        msg = f"{module} is in no layer: add it to LAYERS (and to docs/internals.md)"
        raise AssertionError(msg)
    return best[0]


def _layer_names(index: int) -> str:
    return ", ".join(LAYERS[index])


# --- the layer order ---------------------------------------------------------------------------


def test_every_module_has_a_layer() -> None:
    assert {name: layer_of(name) for name in MODULES}  # raises naming a module with no layer


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_module_imports_only_its_own_layer_and_below(name: str) -> None:
    own = layer_of(name)
    upward = sorted(
        f"{target} (layer {_layer_names(layer_of(target))})"
        for target in ARROWS[name]
        if layer_of(target) > own
    )
    assert upward == [], f"{name} (layer {_layer_names(own)}) imports upwards: {upward}"


def _circle() -> list[str] | None:
    """An import circle among the package's modules, or None (depth-first search)."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(name: str) -> list[str] | None:
        path.append(name)
        on_path.add(name)
        for target in sorted(ARROWS[name]):
            if target in on_path:
                return [*path[path.index(target) :], target]
            if target not in done and (found := visit(target)) is not None:
                return found
        path.pop()
        on_path.discard(name)
        done.add(name)
        return None

    for start in sorted(MODULES):
        if start not in done and (found := visit(start)) is not None:
            return found
    return None


def test_no_import_circle_anywhere() -> None:
    circle = _circle()
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_the_circle_search_finds_a_circle() -> None:
    saved = dict(ARROWS)
    try:
        ARROWS["langchain_kimi._json"] = {"langchain_kimi._errors"}
        ARROWS["langchain_kimi._errors"] = {"langchain_kimi._json"}
        assert _circle() in (
            ["langchain_kimi._errors", "langchain_kimi._json", "langchain_kimi._errors"],
            ["langchain_kimi._json", "langchain_kimi._errors", "langchain_kimi._json"],
        )
    finally:
        ARROWS.clear()
        ARROWS.update(saved)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_importlib(path: Path) -> None:
    """Imports are statements a reader and a tool can see, never computed."""
    source = path.read_text(encoding="utf-8")
    found = imported_modules(source, _package_of(path))
    assert not {m for m in found if m == "importlib" or m.startswith("importlib.")}
    assert "__import__(" not in source


HTTP = sorted(p for p in FILES if _module_name(p).startswith("langchain_kimi._http"))


@pytest.mark.parametrize("path", HTTP, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_http_layer_knows_no_langchain(path: Path) -> None:
    found = imported_modules(path.read_text(encoding="utf-8"), _package_of(path))
    assert sorted(m for m in found if m.split(".")[0] == "langchain_core") == []


def test_package_imports_resolves_every_form() -> None:
    source = (
        "from langchain_kimi import _json\n"
        "from . import _errors\n"
        "import langchain_kimi._http.sse\n"
        "from langchain_kimi.protocols import adapter\n"
        "if TYPE_CHECKING:\n"
        "    from langchain_kimi.chat_models import ChatKimi\n"
        "def lazy():\n"
        "    from langchain_kimi._langchain import structured\n"
    )
    assert package_imports(source, "langchain_kimi") == {
        "langchain_kimi._json",
        "langchain_kimi._errors",
        "langchain_kimi._http.sse",
        "langchain_kimi.protocols",
        "langchain_kimi.chat_models",
        "langchain_kimi._langchain.structured",
    }


def test_layer_of_places_modules() -> None:
    assert layer_of("langchain_kimi") == len(LAYERS) - 2  # the package's own __init__
    assert layer_of("langchain_kimi.testing.gateway") == len(LAYERS) - 1
    assert layer_of("langchain_kimi._http.limits.gate") == 1
    assert layer_of("langchain_kimi.protocols.openai_chat.web_search") == 3
    assert layer_of("langchain_kimi._errors") == 0


# --- protocols: one subpackage per protocol -----------------------------------------------------


def _owner(module: str) -> str | None:
    """The protocol subpackage a module belongs to, or None."""
    parts = module.split(".")
    if parts[:2] == ["langchain_kimi", "protocols"] and len(parts) > 2 and parts[2] in SUBPACKAGES:
        return parts[2]
    return None


def _imports_of(path: Path) -> set[str]:
    return imported_modules(path.read_text(encoding="utf-8"), _package_of(path))


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


OUTSIDE = sorted(p for p in FILES if PROTOCOLS not in p.parents)


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


# --- docs/internals.md mirrors the tree ----------------------------------------------------------


def layer_diagram() -> str:
    """The layer order as docs/internals.md shows it (top first)."""
    return "\n".join(" | ".join(names) for names in reversed(LAYERS))


def test_internals_shows_the_layer_order() -> None:
    text = INTERNALS.read_text(encoding="utf-8")
    assert f"```text\n{layer_diagram()}\n```" in text, (
        "docs/internals.md must show the layer order of LAYERS, top first:\n" + layer_diagram()
    )


def _doc_path(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).as_posix()
    return relative.removesuffix("__init__.py")


def test_the_module_map_lists_exactly_the_modules() -> None:
    text = INTERNALS.read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `(langchain_kimi/[^`]*)` \|", text, flags=re.MULTILINE))
    assert rows == {_doc_path(p) for p in FILES}


# --- _http: connections above, rate policy below -------------------------------------------------

LIMITS = sorted(name for name in MODULES if name.startswith("langchain_kimi._http.limits"))


def test_the_rate_policy_is_found() -> None:
    assert "langchain_kimi._http.limits.rate" in LIMITS


@pytest.mark.parametrize("name", LIMITS)
def test_the_rate_policy_knows_no_connection(name: str) -> None:
    """`_http/limits/` (rate, gate, retry) imports nothing of `_http/pool/` (the connections):
    the registry builds a key's gate, never the reverse, so a policy change stays in `limits/`."""
    assert sorted(t for t in ARROWS[name] if t.startswith("langchain_kimi._http.pool")) == []


def test_the_connections_hold_no_rate_policy() -> None:
    """`_http/pool/` keeps its connection modules only (clients, registry)."""
    pool = sorted(p.stem for p in (PACKAGE / "_http" / "pool").glob("*.py"))
    assert pool == ["__init__", "clients", "registry"]


def _lines(folder: Path) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in folder.rglob("*.py"))


def test_the_http_layer_stays_small() -> None:
    """The rate policy and the connections in at most 900 lines, the whole HTTP layer in 2,400."""
    http = PACKAGE / "_http"
    assert _lines(http / "limits") + _lines(http / "pool") <= 900
    assert _lines(http) <= 2400
