"""Every default or limit the docs state agrees with the code, and the pages follow the code.

The pages write such numbers as placeholders that `docs/hooks.py` renders from the code
(`{default:FIELD}`, `{limit:NAME}`, `{knob:NAME}`); README.md, CONTRIBUTING.md and ChatKimi's
docstrings are read unrendered and write them out. Each statement of a number is found by how the
docs phrase it (`CLAIMS`), then:

- wherever it is stated (rendered pages, README, CONTRIBUTING, docstrings), it equals the code;
- with the value changed in the code, every page states the changed value: a number a page copied
  by hand (true today, stale tomorrow) fails here even while it still agrees.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from docs import hooks
from langchain_kimi import ChatKimi
from tools.paths import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
UNRENDERED = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]

_FENCED = re.compile(r"^\s*```.*?^\s*```", re.MULTILINE | re.DOTALL)
V = r"(\d+(?:,\d{3})*(?:\.\d+)?|True|False)"
"""Where a pattern finds the stated value: a number as the docs write it (`1,048,576`), or a bool."""


@dataclass(frozen=True)
class Claim:
    name: str
    patterns: tuple[str, ...]
    field: bool
    """A ChatKimi field's default (`{default:...}`), else a `LIMITS` entry (`{limit:...}`)."""

    def value(self) -> object:
        if self.field:
            return ChatKimi.model_fields[self.name].default
        return hooks.LIMITS[self.name][0]()

    def statements(self, text: str) -> Iterator[str]:
        text = _FENCED.sub("", text)  # samples and their output state nothing about ChatKimi
        flat = " ".join(text.split())
        for pattern in self.patterns:
            yield from (m.group(1) for m in re.finditer(pattern, flat, re.IGNORECASE))
        if self.field:
            yield from _default_cells(text, self.name)


def _default_cells(text: str, name: str) -> Iterator[str]:
    """The value in the `default` column of a table row about field `name`."""
    column = None
    for line in text.splitlines():
        if not line.startswith("|"):
            column = None
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        lowered = [c.lower() for c in cells]
        if "default" in lowered:
            column = lowered.index("default")
        elif column is not None and cells and cells[0].startswith(f"`{name}`"):
            found = re.search(V, cells[column])
            if found:
                yield found.group(1)


FIELD_PATTERNS: dict[str, tuple[str, ...]] = {"max_retries": (rf"\b{V} = up to \d+ attempts",)}
"""How a field's docstring states its default in its own words, beyond `default N`."""


def _field_claim(name: str) -> Claim:
    said = (
        rf"`{name}`[^.;|]{{0,60}}?\bdefaults?(?: to| is|:)? `?{V}",
        rf"\bdefault `{name}`:? `?{V}",
        *FIELD_PATTERNS.get(name, ()),
    )
    return Claim(name, said, field=True)


PLAIN_DEFAULTS = [
    name
    for name, info in ChatKimi.model_fields.items()
    if info.default_factory is None and isinstance(info.default, bool | int | float)
]
LIMIT_PATTERNS: dict[str, tuple[str, ...]] = {
    "context_window": (rf"{V}-token (?:context|window)", rf"\b1\.\.{V}", rf"between 1 and {V}"),
    "messages_max_tokens": (
        rf"{V} on `anthropic`",
        rf"\({V} when unset",
        rf"sends {V} when you set nothing",
        rf"`max_tokens` as {V}",
    ),
    "max_tools": (rf"(?:at most|more than|over) {V} tools",),
    "stop_sequences": (rf"at most {V}(?: stop sequences)?, each",),
    "stop_sequence_bytes": (rf"(?:at most|over) {V} bytes",),
    "read_timeout": (rf"{V} s (?:to )?read\b",),
    "connect_timeout": (rf"{V} s (?:to )?connect\b",),
    "drain_time": (rf"at most {V} ms",),
    "drain_events": (rf"{V} stray events",),
    "drains": (rf"at most {V} such threads",),
    "chars_per_token": (rf"about {V} ASCII characters",),
    "tokens_per_message": (rf"plus {V} tokens per message",),
    "read_depth": (rf"stream event nested deeper than {V} levels",),
    "arguments_depth": (rf"tool-call arguments nested deeper than {V} levels",),
    "stream_events": (rf"a stream may send at most {V} events",),
    "tool_calls": (rf"a reply hold at most {V} tool calls",),
}
CLAIMS = [_field_claim(name) for name in PLAIN_DEFAULTS] + [
    Claim(name, patterns, field=False) for name, patterns in LIMIT_PATTERNS.items()
]
MUST_BE_STATED = {"max_retries", "rate_limit_timeout", "max_builtin_rounds", "adaptive_concurrency"}


def test_every_limit_the_pages_render_has_patterns_here() -> None:
    assert set(LIMIT_PATTERNS) == set(hooks.LIMITS)
    assert set(PLAIN_DEFAULTS) >= MUST_BE_STATED


def _agrees(stated: str, value: object) -> bool:
    if isinstance(value, bool):
        return stated == str(value)
    return stated not in ("True", "False") and float(stated.replace(",", "")) == value


def _texts() -> dict[str, str]:
    """Where numbers are stated, as a reader sees them: pages rendered, the rest as written."""
    texts = {p.name: hooks.on_page_markdown(p.read_text(encoding="utf-8")) for p in PAGES}
    texts |= {p.name: p.read_text(encoding="utf-8") for p in UNRENDERED}
    texts["ChatKimi"] = ChatKimi.__doc__ or ""
    for name, (owner, doc) in hooks._attribute_docs(ChatKimi).items():
        if owner is ChatKimi:
            texts[f"ChatKimi.{name}"] = f"`{name}`: {doc}"
    return texts


TEXTS = _texts()


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.name)
def test_every_stated_default_and_limit_is_the_codes(claim: Claim) -> None:
    stated = [(where, s) for where, text in TEXTS.items() for s in claim.statements(text)]
    if claim.name in MUST_BE_STATED or not claim.field:
        assert stated, f"no page states {claim.name} any more: drop its patterns"
    wrong = [f"{where} says {s}" for where, s in stated if not _agrees(s, claim.value())]
    assert wrong == [], f"{claim.name} is {claim.value()!r} in the code"


def _changed(value: object) -> object:
    return (not value) if isinstance(value, bool) else 987_654


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.name)
def test_the_pages_follow_a_changed_value(claim: Claim, monkeypatch: pytest.MonkeyPatch) -> None:
    changed = _changed(claim.value())
    if claim.field:
        monkeypatch.setattr(ChatKimi.model_fields[claim.name], "default", changed)
    else:
        unit = hooks.LIMITS[claim.name][1]
        value: Callable[[], object] = lambda: changed  # noqa: E731
        monkeypatch.setitem(hooks.LIMITS, claim.name, (value, unit))
    stale = []
    for page in PAGES:
        # The placeholders only: the generated tables follow the code by construction, and the
        # docstrings they quote are checked above.
        text = page.read_text(encoding="utf-8")
        text = hooks.render_limits(hooks.render_defaults(hooks.render_knobs(text)))
        stale += [
            f"{page.name} says {s}" for s in claim.statements(text) if not _agrees(s, changed)
        ]
    assert stale == [], f"write {{{'default' if claim.field else 'limit'}:{claim.name}}} there"
