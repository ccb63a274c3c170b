"""`tools/unasync.py`: every sync half is what its async source generates, and `--check` (run by
`./dev lint`) says which file is not (issue 19 item 2: sync halves that cannot drift).

The failure cases run on a copy of one folder pair (with the project's ruff settings), never on
the package itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tools import unasync

SOURCE_NAME = "drivers.py"


def test_every_generated_file_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    assert unasync.main(["--check"]) == 0
    assert capsys.readouterr().out == ""


def test_the_transport_and_the_call_drivers_are_generated() -> None:
    pairs = {
        (
            source.relative_to(unasync.PACKAGE).as_posix(),
            target.relative_to(unasync.PACKAGE).as_posix(),
        )
        for source, target in unasync.PAIRS
    }
    assert pairs == {("_http/_async", "_http/_sync"), ("_call/_async", "_call/_sync")}


@pytest.fixture
def copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The `_call` folder pair copied under `tmp_path`, which the tool now takes for the root."""
    shutil.copy(unasync.ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    pairs = []
    for folder in ("_async", "_sync"):
        shutil.copytree(
            unasync.PACKAGE / "_call" / folder, tmp_path / "langchain_kimi" / "_call" / folder
        )
        pairs.append(tmp_path / "langchain_kimi" / "_call" / folder)
    for package in ("langchain_kimi", "langchain_kimi/_call"):  # first-party to ruff's isort
        (tmp_path / package / "__init__.py").touch()
    monkeypatch.setattr(unasync, "ROOT", tmp_path)
    monkeypatch.setattr(unasync, "PAIRS", [(pairs[0], pairs[1])])
    return pairs[0], pairs[1]


def test_the_copy_is_current(copy: tuple[Path, Path]) -> None:
    assert unasync.main(["--check"]) == 0


def test_check_names_a_generated_file_edited_by_hand(
    copy: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    generated = copy[1] / SOURCE_NAME
    generated.write_text(generated.read_text() + "\nDRIFT = 1\n")
    assert unasync.main(["--check"]) == 1
    assert capsys.readouterr().out == (
        "langchain_kimi/_call/_sync/drivers.py is not what tools/unasync.py generates: "
        "run `python -m tools.unasync`\n"
    )


def test_check_names_a_source_changed_without_regenerating(
    copy: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = copy[0] / SOURCE_NAME
    source.write_text(source.read_text().replace("keep_usage", "keep_the_usage"))
    assert unasync.main(["--check"]) == 1
    assert "langchain_kimi/_call/_sync/drivers.py is not what" in capsys.readouterr().out


def test_check_names_a_generated_file_without_source(
    copy: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    (copy[1] / "orphan.py").write_text("X = 1\n")
    assert unasync.main(["--check"]) == 1
    assert (
        capsys.readouterr().out
        == "langchain_kimi/_call/_sync/orphan.py has no source in langchain_kimi/_call/_async/\n"
    )


def test_generating_writes_what_check_expects_and_drops_orphans(
    copy: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    expected = (copy[1] / SOURCE_NAME).read_text()
    (copy[1] / SOURCE_NAME).unlink()
    (copy[1] / "orphan.py").write_text("X = 1\n")
    assert unasync.main([]) == 0
    assert capsys.readouterr().out == "generated 2 files in langchain_kimi/_call/_sync\n"
    assert (copy[1] / SOURCE_NAME).read_text() == expected
    assert not (copy[1] / "orphan.py").exists()
    assert unasync.main(["--check"]) == 0


def test_generating_creates_a_missing_sync_folder(copy: tuple[Path, Path]) -> None:
    expected = (copy[1] / SOURCE_NAME).read_text()
    shutil.rmtree(copy[1])
    assert unasync.main([]) == 0
    assert (copy[1] / SOURCE_NAME).read_text() == expected


def test_a_source_ruff_cannot_format_stops_generation_naming_it(copy: tuple[Path, Path]) -> None:
    (copy[0] / "broken.py").write_text("x = = 1\n")  # tokenizes, does not parse
    with pytest.raises(SystemExit, match=r"ruff format --quiet failed on .*_async/broken\.py"):
        unasync.main(["--check"])
