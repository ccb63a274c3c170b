"""The live report: suite outcomes, spec findings and open-question answers, as tables or JSON."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langchain_kimi._secrets import Scrubber
from langchain_kimi.doctor import format_table
from tools.live.checks import Finding
from tools.live.questions import Question


@dataclass
class SuiteOutcome:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)

    @classmethod
    def from_junit(cls, path: Path) -> SuiteOutcome:
        outcome = cls()
        if not path.exists():
            return outcome
        for case in ET.parse(path).getroot().iter("testcase"):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            problem = case.find("failure")
            problem = problem if problem is not None else case.find("error")
            if problem is not None:
                outcome.failed += 1
                message = (problem.get("message") or "").splitlines()[:1]
                outcome.failures.append(f"{name}: {''.join(message)[:160]}")
            elif case.find("skipped") is not None:
                outcome.skipped += 1
            else:
                outcome.passed += 1
        return outcome


@dataclass
class Report:
    """What a live run found. Its text and JSON never show `key` (in any encoding, e.g. echoed
    in an error body), nor credentials inside `base_url`."""

    base_url: str
    suites: SuiteOutcome
    findings: list[Finding]
    answers: list[tuple[Question, str]]
    exchanges: int
    key: str = field(default="", repr=False)

    @property
    def ok(self) -> bool:
        return not self.findings and not self.suites.failed

    def grouped_findings(self) -> list[tuple[Finding, int]]:
        """Identical findings (same kind, row and detail) once, with how often they occurred."""
        counts = Counter(Finding(f.kind, f.protocol, f.model, f.detail) for f in self.findings)
        return sorted(
            counts.items(), key=lambda item: (item[0].kind, item[0].protocol, item[0].model)
        )

    def scrubbed(self) -> Report:
        secrets = Scrubber.for_key(self.key, self.base_url)
        return Report(
            secrets.url(self.base_url),
            secrets.value(self.suites),
            secrets.value(self.findings),
            secrets.value(self.answers),
            self.exchanges,
        )

    def as_json(self) -> dict[str, Any]:
        clean = self.scrubbed()
        return {
            "base_url": clean.base_url,
            "ok": clean.ok,
            "exchanges": clean.exchanges,
            "suites": asdict(clean.suites),
            "findings": [{**asdict(f), "count": n} for f, n in clean.grouped_findings()],
            "questions": [{"id": q.id, "question": q.text, "answer": a} for q, a in clean.answers],
        }


def render(report: Report) -> str:
    report = report.scrubbed()
    suites = report.suites
    parts = [
        f"Live run against {report.base_url}: {report.exchanges} exchanges checked against spec/",
        f"Suites: {suites.passed} passed, {suites.failed} failed, {suites.skipped} skipped",
        *(f"  FAILED {line}" for line in suites.failures),
        "",
        "Spec findings (responses that differ from the published documents):",
    ]
    rows = [(f.kind, f.protocol, f.model, n, f.detail) for f, n in report.grouped_findings()]
    parts.append(
        format_table(("kind", "protocol", "model", "count", "detail"), rows) if rows else "  none"
    )
    parts += ["", "Open questions:"]
    parts.append(
        format_table(("id", "question", "answer"), [(q.id, q.text, a) for q, a in report.answers])
    )
    return "\n".join(parts)
