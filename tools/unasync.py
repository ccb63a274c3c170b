"""Generate the sync I/O from its async source, so the two halves cannot drift apart.

In each folder of `PAIRS` (the transport's I/O loops in `_http/`, the call drivers in `_call/`),
`_async/*.py` is the source; `_sync/*.py` is written from it by the `unasync` package (the token rewrite urllib3 and others use: `async`/`await` removed,
async names mapped to their sync twins), then import-sorted and formatted by ruff, with a header
saying so.

    python -m tools.unasync          # regenerate
    python -m tools.unasync --check  # fail if a generated file is missing or differs (./dev lint)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import unasync  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "langchain_kimi"
PAIRS = [(PACKAGE / layer / "_async", PACKAGE / layer / "_sync") for layer in ("_http", "_call")]
"""Each folder's async source and its generated sync twin."""

# Async names and their sync twins, beyond unasync's own (`__aiter__`, `AsyncIterator`, ...;
# `AsyncX` -> `SyncX` otherwise).
REPLACEMENTS = {
    "_async": "_sync",
    "AsyncClient": "Client",
    "AsyncEventStream": "EventStream",
    "AbstractAsyncContextManager": "AbstractContextManager",
    "_aattempt": "_attempt",
    "_arun": "_run",
    "apost_json": "post_json",
    "astream_events": "stream_events",
    "_astream_events": "_stream_events",
    "aread_body": "read_body",
    "aiter_events": "iter_events",
    "aiter_bytes": "iter_bytes",
    "afirst_wanted": "first_wanted",
    "adrain_then_close": "drain_then_close",
    "afinish": "finish",
    "aclose": "close",
    "aenter": "enter",
    "async_sleep": "sleep",
    "_aclient": "_client",
    "_aturn": "_turn",
    "await_turn": "wait_turn",
    "AsyncCallbackManagerForLLMRun": "CallbackManagerForLLMRun",
    "agenerate": "generate",
    "astream": "stream",
    "aread_round": "read_round",
}


def _header(source: Path) -> str:
    return f"# Generated from _async/{source.name} by tools/unasync.py: do not edit.\n"


def _ruff(*args: str, source: str, filename: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--stdin-filename", str(filename), "-"],
        input=source,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if done.returncode not in (0, 1) or not done.stdout:
        raise SystemExit(f"ruff {' '.join(args)} failed on {filename}: {done.stderr}")
    return done.stdout


def generated(source_dir: Path, target_dir: Path) -> dict[Path, str]:
    """Every sync file of one folder, as it should read."""
    rule = unasync.Rule(fromdir="/_async/", todir="/_sync/", additional_replacements=REPLACEMENTS)
    files: dict[Path, str] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for source in sorted(source_dir.glob("*.py")):
            copy = Path(scratch) / "_async" / source.name
            copy.parent.mkdir(exist_ok=True)
            copy.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
            unasync.unasync_files([str(copy)], [rule])
            text = (Path(scratch) / "_sync" / source.name).read_text(encoding="utf-8")
            target = target_dir / source.name
            # Ruff is told the source's name: it exists with its package (`__init__.py`) even
            # when the sync folder does not yet, and its imports sort the same way.
            text = _ruff("check", "--fix", "--select", "I", "--quiet", source=text, filename=source)
            text = _ruff("format", "--quiet", source=text, filename=source)
            files[target] = _header(source) + text
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a generated file differs")
    check = parser.parse_args(argv).check
    failed = False
    for source_dir, target_dir in PAIRS:
        failed |= _sync_folder(source_dir, target_dir, check=check)
    return 1 if failed else 0


def _sync_folder(source_dir: Path, target_dir: Path, *, check: bool) -> bool:
    """Check or write one folder's generated files; whether a check found one out of date."""
    files = generated(source_dir, target_dir)
    stale = sorted(
        path.relative_to(ROOT).as_posix()
        for path, text in files.items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    )
    extra = sorted(
        p.relative_to(ROOT).as_posix() for p in target_dir.glob("*.py") if p not in files
    )
    if check:
        for name in stale:
            print(f"{name} is not what tools/unasync.py generates: run `python -m tools.unasync`")
        for name in extra:
            print(f"{name} has no source in {source_dir.relative_to(ROOT).as_posix()}/")
        return bool(stale or extra)
    target_dir.mkdir(exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    for name in extra:
        (ROOT / name).unlink()
    print(f"generated {len(files)} files in {target_dir.relative_to(ROOT).as_posix()}")
    return False


if __name__ == "__main__":
    raise SystemExit(main())
