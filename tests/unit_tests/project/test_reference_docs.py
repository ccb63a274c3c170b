"""The API reference stays complete and public: rendered from the code, checked here."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

import langchain_kimi
from docs import hooks
from langchain_kimi import ChatKimi
from tools.paths import ROOT

DOCS = ROOT / "docs"
PRIVATE_MODULES = sorted(
    p.stem for p in (ROOT / "langchain_kimi").rglob("_*.py") if p.stem != "__init__"
)
# A private module named in prose or code: `_errors`, _errors.py, langchain_kimi._errors.
_PRIVATE = re.compile(r"(?<![\w.])(?:langchain_kimi\.)?(" + "|".join(PRIVATE_MODULES) + r")\b")


def test_every_constructor_field_has_a_row_with_type_default_and_meaning() -> None:
    own = hooks.fields_table()
    inherited = hooks.base_fields_table()
    for name in ChatKimi.model_fields:
        rows = [r for r in (own + "\n" + inherited).splitlines() if r.startswith(f"| `{name}`")]
        assert len(rows) == 1, name
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", rows[0])[1:-1]]
        assert len(cells) == 4, rows[0]
        assert all(cells), f"empty cell for {name}: {rows[0]}"


def test_a_field_without_a_docstring_fails_the_docs_build(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = hooks._attribute_docs(ChatKimi)
    docs.pop("stream_usage")
    monkeypatch.setattr(hooks, "_attribute_docs", lambda cls: docs)
    with pytest.raises(ValueError, match="stream_usage"):
        hooks.fields_table()


def test_every_exported_error_is_listed_with_its_core_class() -> None:
    table = hooks.errors_table()
    exported = [
        n
        for n in langchain_kimi.__all__
        if isinstance(getattr(langchain_kimi, n), type)
        and issubclass(getattr(langchain_kimi, n), Exception)
    ]
    assert len(exported) >= 11
    for name in exported:
        (row,) = [r for r in table.splitlines() if r.startswith(f"| `{name}` |")]
        assert "`Model" in row, row  # the langchain-core class it also is


@pytest.mark.parametrize(
    "page", sorted(p.name for p in DOCS.glob("*.md") if p.name != "internals.md")
)
def test_user_pages_name_no_private_module(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    found = sorted({m.group(0) for m in _PRIVATE.finditer(text)})
    assert found == [], f"{page} names internal modules {found} (only internals.md may)"


def _rendered_members() -> dict[str, list[str]]:
    """`::: target` -> the member names listed under it in reference.md."""
    rendered: dict[str, list[str]] = {}
    target = ""
    for line in (DOCS / "reference.md").read_text().splitlines():
        if line.startswith("::: "):
            target = line.removeprefix("::: ").strip()
            rendered[target] = []
        elif target and re.fullmatch(r"\s+- (\w+)", line):
            rendered[target].append(line.strip().removeprefix("- "))
        elif not line.startswith(" "):
            target = ""
    return rendered


def _attribute_doc(owner: type, name: str) -> str:
    """A method's or property's docstring, or an instance attribute's (the string after it)."""
    member = getattr(owner, name, None)
    if member is not None and not isinstance(member, str | list | dict):
        return inspect.getdoc(member) or ""
    source = inspect.getsource(owner)
    match = re.search(rf"self\.{name}\b[^\n]*\n\s+\"\"\"(.+?)\"\"\"", source, re.DOTALL)
    return match.group(1) if match else ""


def test_rendered_docstrings_name_no_private_module() -> None:
    rendered = _rendered_members()
    assert "aclose" in rendered["langchain_kimi.ChatKimi"]
    assert "add_reply" in rendered["langchain_kimi.testing.FakeKimiGateway"]
    texts = []
    for target, members in rendered.items():
        module, _, name = target.rpartition(".")
        owner = getattr(importlib.import_module(module), name)
        texts.append(inspect.getdoc(owner) or "")
        for member in members:
            doc = _attribute_doc(owner, member)
            assert doc, f"{target}.{member} is listed in the reference but has no docstring"
            texts.append(doc)
    texts += [inspect.getdoc(getattr(langchain_kimi, n)) or "" for n in langchain_kimi.__all__]
    found = sorted({m.group(0) for t in texts for m in _PRIVATE.finditer(t)})
    assert found == []


def test_reference_renders_only_public_paths() -> None:
    targets = re.findall(r"^::: (\S+)$", (DOCS / "reference.md").read_text(), re.MULTILINE)
    assert targets
    for target in targets:
        module, _, name = target.rpartition(".")
        assert not any(part.startswith("_") for part in target.split("."))
        assert hasattr(importlib.import_module(module), name)


def test_hooks_file_is_not_published() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"exclude_docs:\s*\|\s*\n\s+hooks\.py", config)


def test_init_chat_model_does_not_know_kimi_as_the_docs_say() -> None:
    """docs/migrating.md says init_chat_model refuses `kimi`; if LangChain adds it, revise it."""
    init_chat_model = pytest.importorskip("langchain.chat_models").init_chat_model
    assert "Unsupported provider='kimi'" in (DOCS / "migrating.md").read_text()
    with pytest.raises(ValueError, match="Unsupported provider='kimi'"):
        init_chat_model("kimi-k3.1-pro", model_provider="kimi")
