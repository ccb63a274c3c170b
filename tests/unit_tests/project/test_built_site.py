"""The docs site as a reader sees it (issue 30 item 6), checked on the built HTML, no browser.

The site is built once for the module (`mkdocs build --strict` into a temporary folder, a few
seconds) and every page is parsed with the standard library's `html.parser`.

Code blocks must fit at 1280 px. The budget comes from the theme (mkdocs-material) at that width:
the page grid is `61rem` (1,220 px at its `html { font-size: 125% }`, 20 px), less two sidebars of
`12.1rem` (242 px each) and the content's margins of `1.2rem` each side (24 px) leaves 688 px of
content; a code block pads its code by `1.1764705882em` each side (16 px at the code font's
13.6 px: `.md-typeset` is `.8rem`, 16 px, and code `.85em` of it), so 656 px hold the code. The
code font (Roboto Mono, and the monospace fallbacks) advances 0.6 em per character, 8.16 px:
80 characters. Each enclosing list item takes `1.25em` + `.625em` of the 16 px text (30 px).
Blocks of program output (```` ```text ````) wrap instead: the site's stylesheet soft-wraps them, so
their lines may be longer and are never cut off.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tools.paths import ROOT

CONTENT_PX = 1220 - 2 * 242 - 2 * 24
"""The content column at 1280 px (see the module docstring)."""
CODE_PX = CONTENT_PX - 2 * 16
CHAR_PX = 0.6 * 13.6
LIST_INDENT_PX = 30
WRAPPED_LANGUAGES = {"text"}
"""Code-block languages the stylesheet soft-wraps (docs/stylesheets/extra.css)."""


def line_budget(list_depth: int) -> int:
    """How many code characters fit on one line of a block nested `list_depth` lists deep."""
    return int((CODE_PX - LIST_INDENT_PX * list_depth) / CHAR_PX)


@dataclass
class CodeBlock:
    language: str
    text: str
    list_depth: int


@dataclass
class Page(HTMLParser):
    """What the checks read from one page: ids, links, images, code blocks, the page's TOC."""

    ids: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)
    images: list[tuple[str, dict[str, str | None], str | None]] = field(default_factory=list)
    """(src, attributes, href of the enclosing link)."""
    blocks: list[CodeBlock] = field(default_factory=list)
    toc: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()
        self._open: list[tuple[str, dict[str, str | None]]] = []
        self._code: list[str] | None = None
        self._toc_text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag not in ("img", "br", "hr", "input", "meta", "link", "source", "path", "wbr"):
            self._open.append((tag, attributes))
        for key in ("id", "name"):
            if attributes.get(key):
                self.ids.add(str(attributes[key]))
        if tag == "a" and attributes.get("href"):
            self.links.append(str(attributes["href"]))
            if self._in_toc() and "md-nav__link" in (attributes.get("class") or ""):
                self._toc_text = []
        if tag == "img":
            self.images.append((str(attributes.get("src")), attributes, self._enclosing_href()))
        if tag == "code" and self._open[-2:-1] and self._open[-2][0] == "pre":
            self._code = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "code" and self._code is not None:
            highlight = next(
                (a.get("class") or "" for t, a in reversed(self._open) if t == "div"), ""
            )
            languages = [c.removeprefix("language-") for c in highlight.split() if "-" in c]
            depth = sum(t == "li" for t, _ in self._open)
            self.blocks.append(
                CodeBlock(languages[0] if languages else "", "".join(self._code), depth)
            )
            self._code = None
        if tag == "a" and self._toc_text is not None:
            self.toc.append(" ".join("".join(self._toc_text).split()))
            self._toc_text = None
        while self._open:
            if self._open.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._code is not None:
            self._code.append(data)
        if self._toc_text is not None:
            self._toc_text.append(data)

    def _in_toc(self) -> bool:
        # The right-hand sidebar's; the theme repeats the TOC inside the left navigation (shown
        # on narrow screens instead), so a heading appears twice in the HTML by design.
        return any(
            t == "div" and "md-sidebar--secondary" in (a.get("class") or "") for t, a in self._open
        )

    def _enclosing_href(self) -> str | None:
        return next((a.get("href") for t, a in reversed(self._open) if t == "a"), None)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        check=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return out


@pytest.fixture(scope="module")
def pages(site: Path) -> dict[Path, Page]:
    parsed = {}
    for path in sorted(site.rglob("*.html")):
        page = Page()
        page.feed(path.read_text(encoding="utf-8"))
        parsed[path] = page
    assert len(parsed) >= 20
    return parsed


def _target(site: Path, page: Path, href: str) -> tuple[Path, str] | None:
    """The file and fragment an internal link points at; None for an external link."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or href.startswith("mailto:"):
        return None
    if not parts.path:
        return page, unquote(parts.fragment)
    # An absolute path (the 404 page has them: it is served at any URL) starts at the site root.
    base = site if parts.path.startswith("/") else page.parent
    target = (base / unquote(parts.path).lstrip("/")).resolve()
    if target.is_dir() or parts.path.endswith("/"):
        target = target / "index.html"
    return target, unquote(parts.fragment)


def test_every_internal_link_and_anchor_resolves(site: Path, pages: dict[Path, Page]) -> None:
    broken = []
    checked = 0
    for path, page in pages.items():
        for href in page.links:
            found = _target(site, path, href)
            if found is None:
                continue
            target, fragment = found
            checked += 1
            if not target.is_file():
                broken.append(f"{path.relative_to(site)}: {href} (no such file)")
            elif fragment and target.suffix == ".html" and fragment not in pages[target].ids:
                broken.append(f"{path.relative_to(site)}: {href} (no such anchor)")
    assert checked > 500
    assert broken == []


def _png_width(path: Path) -> int:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    return int(struct.unpack(">I", header[16:20])[0])


def test_every_image_can_be_seen_at_full_size(site: Path, pages: dict[Path, Page]) -> None:
    # An image wider than the content column is shrunk to fit it (the theme's `max-width: 100%`):
    # it must link to its own file, where the reader sees it at its full size.
    images = [(path, image) for path, page in pages.items() for image in page.images]
    assert images
    for path, (src, _attributes, href) in images:
        file = (path.parent / src).resolve()
        assert file.is_file(), src
        if _png_width(file) > CONTENT_PX:
            assert href is not None, f"{src} is shown shrunk to {CONTENT_PX} px and links nowhere"
            assert (path.parent / href).resolve() == file, f"{src} links to {href}, not itself"


def test_code_blocks_fit_the_page_at_1280_px(site: Path, pages: dict[Path, Page]) -> None:
    assert line_budget(0) == 80
    too_wide = []
    blocks = 0
    for path, page in pages.items():
        for block in page.blocks:
            blocks += 1
            if block.language in WRAPPED_LANGUAGES:
                continue
            budget = line_budget(block.list_depth)
            too_wide += [
                f"{path.relative_to(site)}: {len(line)} > {budget}: {line.strip()[:60]}"
                for line in block.text.splitlines()
                if len(line) > budget
            ]
    assert blocks > 50
    assert too_wide == []


def test_output_blocks_are_soft_wrapped_by_the_stylesheet(
    site: Path, pages: dict[Path, Page]
) -> None:
    languages = Counter(b.language for page in pages.values() for b in page.blocks)
    # The blocks name their language (`pygments_lang_class`), which the stylesheet selects.
    assert languages["text"] > 10
    assert languages["python"] > 30
    css = (site / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    assert re.search(r"\.language-text[^{]*\{[^}]*white-space:\s*pre-wrap", css)


def test_no_page_lists_a_heading_twice_in_its_table_of_contents(
    pages: dict[Path, Page],
) -> None:
    assert sum(len(p.toc) for p in pages.values()) > 100
    for path, page in pages.items():
        repeated = [name for name, n in Counter(page.toc).items() if n > 1]
        assert repeated == [], f"{path.parent.name}: {repeated}"


def test_the_search_index_covers_every_page(site: Path, pages: dict[Path, Page]) -> None:
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    located = {doc["location"].split("#")[0] for doc in index["docs"]}
    for path in pages:
        if path.name == "index.html" and path.parent != site / "404":
            location = path.parent.relative_to(site).as_posix()
            assert ("" if location == "." else f"{location}/") in located, location


# --- `./dev docs` installs the docs extra only ------------------------------------------------

# Distributions of the other extras the docs build must not need (import names; PyYAML is
# not among them: mkdocs itself needs it).
NOT_FOR_DOCS = [
    "jsonschema", "vcr", "langchain", "langgraph", "langchain_anthropic",
    "langchain_openai", "langchain_deepseek", "langchain_tests", "matplotlib", "hypothesis",
    "pytest", "trustme", "httpx_sse", "mypy", "ruff", "dask", "pandas",
]  # fmt: skip


def test_dev_docs_installs_the_package_with_the_docs_extra_only() -> None:
    script = (ROOT / "dev").read_text(encoding="utf-8")
    (case,) = re.findall(r"^  docs\)\n(.*?)\n    ;;", script, re.MULTILINE | re.DOTALL)
    assert re.search(r'ensure_env docs "\$DOCS_STAMP"', case), case
    assert re.search(r'^DOCS_STAMP="\$VENV/\.installed-\$HASH-docs"$', script, re.MULTILINE)
    # `./dev test` and `.ci/run` keep the whole environment, the docs extra included.
    (test_case,) = re.findall(r"^  test\)\n(.*?)\n    ;;", script, re.MULTILINE | re.DOTALL)
    assert "ensure_env examples,test,lint,docs" in test_case


def test_the_docs_hooks_import_nothing_of_the_other_extras() -> None:
    # What `mkdocs build` imports of ours (the hooks, and through them the package), in a fresh
    # interpreter where importing any distribution of the other extras fails.
    program = (
        "import importlib.abc, sys\n"
        f"blocked = {NOT_FOR_DOCS!r}\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in blocked:\n"
        "            raise ImportError(f'{name} is not in the docs extra')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import docs.hooks\n"
        "assert docs.hooks.capability_table() and docs.hooks.fields_table()\n"
        "import mkdocs, material, mkdocstrings\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
