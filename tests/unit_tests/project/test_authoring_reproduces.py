"""The authoring scripts in tools/authoring reproduce every committed authored cassette.

Runs the `python -m tools.authoring --check` logic in-process: each group is written into a
temporary directory and compared byte for byte with cassettes/ (no network; dicts and YAML only).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tools import cassette_format
from tools.authoring import __main__ as cli
from tools.authoring._check import GROUPS, check
from tools.authoring._kit import CASSETTE_ROOT


@pytest.mark.parametrize("group", list(GROUPS))
def test_group_reproduces_its_committed_cassettes(group: str) -> None:
    findings = [f for f in check([group]) if f.failed]
    assert findings == [], "\n".join(f"{f.kind}: {f.path}\n{f.detail}" for f in findings)


def test_every_authored_cassette_has_a_script() -> None:
    findings = check()
    assert [f for f in findings if f.failed] == []
    authored = [
        p
        for p in CASSETTE_ROOT.rglob("*.yaml")
        if p.read_text(encoding="utf-8").startswith(cassette_format.AUTHORED_COMMENT)
    ]
    assert len(authored) > 100  # the check really walked the committed cassettes


@pytest.fixture
def core_copy(tmp_path: Path) -> Path:
    shutil.copytree(CASSETTE_ROOT / "core_cassettes", tmp_path / "core_cassettes")
    return tmp_path


def test_check_reports_an_edited_cassette(core_copy: Path) -> None:
    path = core_copy / "core_cassettes" / "openai_plain.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("Reply with OK.", "Reply: OK."))
    findings = check(["core"], root=core_copy)
    assert [(f.path, f.kind) for f in findings] == [("core_cassettes/openai_plain.yaml", "differs")]
    assert "-          content: Reply: OK." in findings[0].detail


def test_check_reports_a_missing_cassette(core_copy: Path) -> None:
    (core_copy / "core_cassettes" / "anthropic_system.yaml").unlink()
    findings = check(["core"], root=core_copy)
    assert [(f.path, f.kind, f.failed) for f in findings] == [
        ("core_cassettes/anthropic_system.yaml", "missing", True)
    ]


def test_a_rerecorded_cassette_is_reported_not_failed(core_copy: Path) -> None:
    path = core_copy / "core_cassettes" / "openai_system.yaml"
    path.write_text("interactions: []\nversion: 1\n", encoding="utf-8")  # no authored header
    findings = check(["core"], root=core_copy)
    assert [(f.path, f.kind, f.failed) for f in findings] == [
        ("core_cassettes/openai_system.yaml", "recorded", False)
    ]


def test_an_authored_cassette_without_a_script_fails(core_copy: Path) -> None:
    stray = core_copy / "core_cassettes" / "orphan.yaml"
    stray.write_text(cassette_format.AUTHORED_COMMENT + "interactions: []\nversion: 1\n")
    findings = [f for f in check(root=core_copy) if f.kind == "no-script"]
    assert [f.path for f in findings] == ["core_cassettes/orphan.yaml"]


def test_cli_check_exits_zero_on_the_committed_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--check", "core", "runnables"]) == 0
    assert "OK: the scripts reproduce" in capsys.readouterr().out


def test_cli_rejects_an_unknown_group() -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["--check", "no_such_group"])
    assert exc.value.code == 2
