"""Generate the transport's sync I/O from its async source, so the two halves cannot drift apart.

`langchain_kimi/_http/_async/*.py` is the source; `langchain_kimi/_http/_sync/*.py` is written from
it by the `unasync` package (the token rewrite urllib3 and others use: `async`/`await` removed,
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
SOURCE = ROOT / "langchain_kimi" / "_http" / "_async"
TARGET = ROOT / "langchain_kimi" / "_http" / "_sync"

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
    "_async_client": "_sync_client",
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


def generated() -> dict[Path, str]:
    """Every sync file, as it should read."""
    rule = unasync.Rule(fromdir="/_async/", todir="/_sync/", additional_replacements=REPLACEMENTS)
    files: dict[Path, str] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for source in sorted(SOURCE.glob("*.py")):
            copy = Path(scratch) / "_async" / source.name
            copy.parent.mkdir(exist_ok=True)
            copy.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
            unasync.unasync_files([str(copy)], [rule])
            text = (Path(scratch) / "_sync" / source.name).read_text(encoding="utf-8")
            target = TARGET / source.name
            text = _ruff("check", "--fix", "--select", "I", "--quiet", source=text, filename=target)
            text = _ruff("format", "--quiet", source=text, filename=target)
            files[target] = _header(source) + text
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a generated file differs")
    check = parser.parse_args(argv).check
    files = generated()
    stale = sorted(
        path.relative_to(ROOT).as_posix()
        for path, text in files.items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    )
    extra = sorted(p.relative_to(ROOT).as_posix() for p in TARGET.glob("*.py") if p not in files)
    if check:
        for name in stale:
            print(f"{name} is not what tools/unasync.py generates: run `python -m tools.unasync`")
        for name in extra:
            print(f"{name} has no source in _http/_async/")
        return 1 if stale or extra else 0
    TARGET.mkdir(exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    for name in extra:
        (ROOT / name).unlink()
    print(f"generated {len(files)} files in {TARGET.relative_to(ROOT).as_posix()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
