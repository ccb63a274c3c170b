"""Documentation statements checked against the code (issue 21 item 7)."""

from __future__ import annotations

import re
import warnings

from pydantic import BaseModel

import langchain_kimi
from docs import hooks
from langchain_kimi.testing import FakeKimiGateway
from tests.support.gateways import answering, only_request
from tools.paths import ROOT

DOCS = ROOT / "docs"
USER_PAGES = sorted(p for p in DOCS.glob("*.md") if p.name != "internals.md")


class Invoice(BaseModel):
    number: str


def _table_row(page: str, first_cell: str) -> list[str]:
    rendered = hooks.on_page_markdown((DOCS / page).read_text(encoding="utf-8"))
    for line in rendered.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_cell:
            return cells
    raise AssertionError(f"{page} has no table row {first_cell!r}")


def test_the_reference_lists_every_export() -> None:
    # As mkdocs renders it (the hooks fill in the generated tables).
    reference = hooks.on_page_markdown((DOCS / "reference.md").read_text(encoding="utf-8"))
    missing = [name for name in langchain_kimi.__all__ if f"`{name}`" not in reference]
    assert missing == []


# The package's modules; the reference calls all of them internal but `testing` (public: what
# users' own tests use).
INTERNAL_MODULES = {
    p.stem for p in (ROOT / "langchain_kimi").iterdir() if p.suffix == ".py" or p.is_dir()
} - {"testing", "__init__", "__pycache__"}


def test_user_pages_point_at_no_internal_module() -> None:
    for page in [*USER_PAGES, ROOT / "README.md"]:
        for path in re.findall(r"langchain_kimi(?:\.\w+)+", page.read_text(encoding="utf-8")):
            assert path.split(".")[1] not in INTERNAL_MODULES, f"{page.name} points at {path}"


def test_json_mode_with_a_schema_on_kimi_k3_messages_works_as_the_table_says() -> None:
    gateway = FakeKimiGateway()
    gateway.add_reply(tool_calls=[{"name": "Invoice", "args": {"number": "A-1"}}])
    model = gateway.chat_model(protocol="anthropic", model="kimi-k3").with_structured_output(
        Invoice, method="json_mode"
    )
    assert model.invoke("Invoice A-1") == Invoice(number="A-1")
    assert only_request(gateway)["tool_choice"] == {"type": "tool", "name": "Invoice"}
    cell = _table_row("structured-output.md", "`kimi-k3`, `anthropic`")[-1]
    assert "forced tool" in cell
    assert "without a schema" in cell  # what is refused


def test_the_max_tokens_default_is_the_one_sent_on_messages() -> None:
    gateway = answering()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gateway.chat_model(protocol="anthropic").invoke("hi")
        gateway.chat_model(protocol="openai").invoke("hi")
    messages, chat = gateway.requests
    assert messages["max_tokens"] == 131_072
    assert "max_completion_tokens" not in chat
    default = _table_row("index.md", "`max_tokens`")[1]
    assert "131,072" in default
    assert "anthropic" in default
