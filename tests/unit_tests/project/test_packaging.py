"""The distributions: build the wheel and the sdist, inspect them, install the wheel and import it.

Offline and quick: `python -m build --no-isolation` uses this environment's hatchling, and the
wheel goes into a fresh venv with `--no-index --no-deps`; that venv reaches its dependencies
(langchain-core, httpx, ...) through a path entry to this environment's site-packages, while
`langchain_kimi` itself can only come from the installed wheel.
"""

from __future__ import annotations

import email
import email.message
import re
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from langchain_kimi import __version__
from tools.paths import ROOT

WRONG_PROJECT = "pypi.org/project/langchain-kimi"
"""The public index's `langchain-kimi` is an unrelated project: nothing may link to it."""
GUESSED_REPOSITORY = "github.com/langchain-kimi"
"""A once-guessed repository address: no public URL of this project is known, so none is given."""


def _run(*args: str | Path, cwd: Path) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT, cwd=out)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return wheel, sdist


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name))


def test_wheel_holds_the_package_typed_marker_and_licence(dists: tuple[Path, Path]) -> None:
    wheel, _ = dists
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        licence = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
        assert b"MIT License" in archive.read(licence)
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        plugin = archive.read(entry_points).decode()
        assert "[pytest11]" in plugin
        assert "langchain_kimi.testing.pytest_plugin" in plugin
    assert "langchain_kimi/py.typed" in names
    assert "langchain_kimi/chat_models.py" in names
    # FakeKimiGateway checks requests against the published documents: they ship as package data.
    for document in ("anthropic-messages.kimi-k3.1-pro.yaml", "chat-completions.all-models.yaml"):
        assert f"langchain_kimi/testing/spec/{document}" in names
    outside = [n for n in names if not n.startswith(("langchain_kimi/", "langchain_kimi-"))]
    assert outside == [], "only the package and its metadata"


def test_wheel_metadata(dists: tuple[Path, Path]) -> None:
    meta = _metadata(dists[0])
    assert meta["Version"] == __version__
    assert meta["License-Expression"] == "MIT"
    assert meta["Requires-Python"] == ">=3.11"
    assert meta["Author"]
    classifiers = meta.get_all("Classifier") or []
    for wanted in (
        "Typing :: Typed",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3 :: Only",
    ):
        assert wanted in classifiers
    # No project URL is known to be ours yet, so the metadata names none rather than a guess.
    assert meta.get_all("Project-URL") is None
    assert meta.get_all("Home-page") is None
    assert meta["Description-Content-Type"] == "text/markdown"


def test_readme_renders_on_an_index(dists: tuple[Path, Path]) -> None:
    """The long description is the README: every link and image must work off the repository."""
    description = str(_metadata(dists[0]).get_payload())
    assert "ChatKimi" in description
    assert "docs/reference.md" in description, "the README names its docs (by repository path)"
    targets = re.findall(r"\]\(([^)\s]+)\)", description)
    relative = [t for t in targets if not t.startswith(("https://", "#"))]
    assert relative == [], "relative links are broken on a package index"
    assert WRONG_PROJECT not in description
    assert GUESSED_REPOSITORY not in description
    # The install steps a reader can follow without a repository URL: a clone or a built wheel.
    assert "pip install ." in description
    assert "pip install dist/*.whl" in description
    # The install step is not `pip install langchain-kimi` (that installs somebody else's project).
    assert not re.search(r"^\s*pip install langchain-kimi\s*$", description, re.MULTILINE)


def test_sdist_holds_what_builds_and_tests_the_package(dists: tuple[Path, Path]) -> None:
    _, sdist = dists
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    for wanted in (
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
        "SECURITY.md",
        "langchain_kimi/py.typed",
        "tests/conftest.py",
        "tools/cassette_format.py",
        "tools/authoring/__main__.py",
        "tests/fixtures/corpus/README.md",
        "cassettes/core_cassettes/openai_plain.yaml",
        "spec/chat-completions.all-models.yaml",
    ):
        assert wanted in names, wanted
    unwanted = [
        n
        for n in names
        if n.startswith((".ci/", ".git/", "benchmarks/results/", "docs/img/", "site/", ".venv/"))
        or n in ("dev", "mkdocs.yml", "docs/hooks.py")
        or "__pycache__" in n
    ]
    assert unwanted == []


def test_corpus_readme_records_each_sources_licence() -> None:
    corpus = ROOT / "tests" / "fixtures" / "corpus"
    readme = (corpus / "README.md").read_text(encoding="utf-8")
    sources = {p.name.split(".", 1)[0] for p in corpus.rglob("*.json")}
    assert sources == {"pydantic-ai", "langchain-anthropic"}
    assert "Copyright (c) Pydantic Services Inc." in readme
    assert "Copyright (c) 2023 LangChain, Inc." in readme
    assert readme.count("Permission is hereby granted, free of charge") == 2


def test_nothing_links_to_the_unrelated_index_project_or_a_guessed_repository() -> None:
    files = [ROOT / "README.md", ROOT / "mkdocs.yml", ROOT / "pyproject.toml"]
    files += sorted((ROOT / "docs").glob("*.md"))
    offenders = [
        f.name
        for f in files
        if WRONG_PROJECT in (text := f.read_text(encoding="utf-8")) or GUESSED_REPOSITORY in text
    ]
    assert offenders == []


def test_no_unverified_project_urls() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "urls" not in pyproject["project"], "no project URL is verified yet"
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert not re.search(r"^repo_url:", mkdocs, re.MULTILINE), "no repository URL is verified yet"


def test_wheel_installs_into_a_clean_venv_and_imports(
    dists: tuple[Path, Path], tmp_path: Path
) -> None:
    wheel, _ = dists
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    _run(
        sys.executable, "-m", "pip", "--python", python, "install", "--quiet",
        "--no-index", "--no-deps", wheel, cwd=tmp_path,
    )  # fmt: skip
    clean_site = Path(
        _run(
            python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path
        ).strip()
    )
    # Dependencies from this environment, after the venv's own site-packages. A path line in a
    # .pth file does not process that directory's own .pth files, so this environment's
    # (editable) langchain_kimi stays invisible.
    (clean_site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = (
        "import langchain_kimi, pathlib\n"
        "from langchain_kimi import ChatKimi\n"
        "print(pathlib.Path(langchain_kimi.__file__).resolve())\n"
        "print(langchain_kimi.__version__)\n"
        "print(ChatKimi(api_key='placeholder-not-a-key').model)\n"
    )
    location, version, model = _run(python, "-c", probe, cwd=tmp_path).splitlines()
    assert Path(location).is_relative_to(clean_site.resolve()), location
    assert version == __version__
    assert model == "kimi-k3.1-pro"
