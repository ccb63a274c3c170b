"""Every authoring group, and the check that regenerating them reproduces the committed files.

`check` writes each group into a temporary directory and compares it byte for byte with
`cassettes/`. A committed file that no longer starts with the authored-from-spec header was
re-recorded against the live service: it is reported, not compared. A committed file that is
still marked authored but that no group writes is a failure (its script is missing).
"""

from __future__ import annotations

import difflib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools import cassette_format
from tools.authoring import (
    agents,
    core,
    examples,
    features,
    structured,
    tools,
    web_search,
    write_runnables,
    write_standard,
)
from tools.authoring._kit import CASSETTE_ROOT, Cassettes, write_files

GROUPS: dict[str, Callable[[], Cassettes]] = {
    "core": core.cassettes,
    "tools": tools.cassettes,
    "agents": agents.cassettes,
    "structured": structured.cassettes,
    "features": features.cassettes,
    "web_search": web_search.cassettes,
    "examples": examples.cassettes,
    "standard": write_standard.cassettes,
    "runnables": write_runnables.cassettes,
}


@dataclass(frozen=True)
class Finding:
    path: str
    """Relative to `cassettes/`."""
    kind: str
    """differs | missing | no-script (failures) or recorded (information only)."""
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.kind != "recorded"


def _authored(path: Path) -> bool:
    return path.read_text(encoding="utf-8").startswith(cassette_format.AUTHORED_COMMENT)


def _diff(committed: str, generated: str, name: str, limit: int = 40) -> str:
    lines = list(
        difflib.unified_diff(
            committed.splitlines(keepends=True),
            generated.splitlines(keepends=True),
            f"committed/{name}",
            f"generated/{name}",
        )
    )
    more = [f"... {len(lines) - limit} more diff lines\n"] if len(lines) > limit else []
    return "".join(lines[:limit] + more)


def check(names: list[str] | None = None, root: Path = CASSETTE_ROOT) -> list[Finding]:
    """Regenerate the named groups (default: all) in a temp dir and compare with `root`."""
    selected = list(GROUPS) if names is None else names
    findings: list[Finding] = []
    produced: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="kimi-authoring-") as tmp:
        for name in selected:
            files = GROUPS[name]()
            write_files(files, Path(tmp))
            for relative in sorted(files):
                produced.add(relative)
                generated = (Path(tmp) / relative).read_text(encoding="utf-8")
                committed_path = root / relative
                if not committed_path.exists():
                    findings.append(Finding(relative, "missing"))
                elif not _authored(committed_path):
                    findings.append(Finding(relative, "recorded"))
                elif committed_path.read_bytes() != (Path(tmp) / relative).read_bytes():
                    committed = committed_path.read_text(encoding="utf-8")
                    findings.append(
                        Finding(relative, "differs", _diff(committed, generated, relative))
                    )
    if names is None:
        for path in sorted(root.rglob("*.yaml")):
            relative = path.relative_to(root).as_posix()
            if relative not in produced and _authored(path):
                findings.append(Finding(relative, "no-script"))
    return findings


def generate(names: list[str] | None = None, root: Path = CASSETTE_ROOT) -> int:
    """Write the named groups (default: all) into `root`; the number of files written."""
    return sum(len(write_files(GROUPS[name](), root)) for name in names or list(GROUPS))
