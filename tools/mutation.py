"""A small mutation tester: does the module's own test file notice when its code changes?

    python -m tools.mutation MODULE.py TEST_PATH [TEST_PATH ...] [--limit N] [--seed S]

Each mutant flips one operator or constant on one code line (comparison, arithmetic, boolean,
min/max, a number), is written over the module, and the tests are run (`-x`, no randomness,
sockets as configured); the module is restored after each run, whatever happens. A mutant the
tests pass on survived. Prints every survivor (line and change) and the kill rate.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
from pathlib import Path

SWAPS = (
    (r"<=", "<"),
    (r">=", ">"),
    (r"(?<![<>=!])<(?![<=])", "<="),
    (r"(?<![<>=!-])>(?![>=])", ">="),
    (r"==", "!="),
    (r"!=", "=="),
    (r"(?<=\s)\+(?=\s)", "-"),
    (r"(?<=\s)-(?=\s)", "+"),
    (r"(?<=\s)\*(?=\s)", "/"),
    (r"(?<=\s)/(?=\s)", "*"),
    (r"\band\b", "or"),
    (r"\bor\b", "and"),
    (r"\bmax\(", "min("),
    (r"\bmin\(", "max("),
    (r"\bTrue\b", "False"),
    (r"\bFalse\b", "True"),
    (r"\bnot ", ""),
    (r"(?<![\w.])(\d+\.\d+|\d+)(?![\w.])", None),  # a number: +1 (or x2 for a float)
)


def _code_lines(source: list[str]) -> list[int]:
    """Indexes of lines that are code (not docstrings, comments, imports or blank)."""
    code, in_doc = [], False
    for index, line in enumerate(source):
        stripped = line.strip()
        quotes = stripped.count('"""')
        if in_doc:
            in_doc = quotes % 2 == 0
            continue
        if stripped.startswith('"""'):
            in_doc = quotes == 1
            continue
        if not stripped or stripped.startswith(("#", "import ", "from ", "@")):
            continue
        code.append(index)
    return code


def _bump(match: re.Match[str]) -> str:
    text = match.group(1)
    return str(float(text) * 2 + 0.5) if "." in text else str(int(text) + 1)


def mutants(source: list[str]) -> list[tuple[int, str, str]]:
    found = []
    for index in _code_lines(source):
        line = source[index].split("  #")[0]
        if line.strip().startswith(("def ", "class ", "return f", 'f"', '"')):
            continue
        for pattern, repl in SWAPS:
            for match in re.finditer(pattern, line):
                new = _bump(match) if repl is None else repl
                mutated = line[: match.start()] + new + line[match.end() :]
                found.append(
                    (index, mutated + source[index][len(line) :], f"{match.group(0)} -> {new}")
                )
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("module", type=Path)
    parser.add_argument("tests", nargs="+")
    parser.add_argument("--limit", type=int, default=0, help="a random sample of this many")
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    original = args.module.read_text()
    source = original.splitlines(keepends=True)
    todo = mutants(source)
    if args.limit and len(todo) > args.limit:
        todo = random.Random(args.seed).sample(todo, args.limit)
    survivors = []
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", *args.tests]
    try:
        for number, (index, line, change) in enumerate(todo, 1):
            mutated = source.copy()
            mutated[index] = line
            args.module.write_text("".join(mutated))
            try:
                done = subprocess.run(command, capture_output=True, timeout=120, check=False)
                survived = done.returncode == 0
            except subprocess.TimeoutExpired:
                survived = False  # a hang is noticed
            where = f"{args.module}:{index + 1}: {change}: {line.strip()}"
            if survived:
                survivors.append(where)
            print(
                f"[{number}/{len(todo)}] {'SURVIVED' if survived else 'killed'} {where}", flush=True
            )
    finally:
        args.module.write_text(original)
    killed = len(todo) - len(survivors)
    print(f"{args.module}: {killed}/{len(todo)} killed ({100 * killed / max(1, len(todo)):.0f} %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
