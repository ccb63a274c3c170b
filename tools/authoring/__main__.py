"""`python -m tools.authoring [--check] [GROUP ...]`: regenerate (or check) the authored cassettes.

Without `--check` every named group (default: all) is written into `cassettes/`. With `--check`
they are written into a temporary directory and compared byte for byte with the committed
files; any difference, missing file or authored file without a script exits 1.
`--diff DIR` compares cassettes recorded by `./dev live --record DIR` with the authored ones by
structure (fields, event types and order, usage keys); exit 1 when any differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.authoring._check import GROUPS, check, generate
from tools.authoring._kit import CASSETTE_ROOT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.authoring", description=__doc__)
    parser.add_argument("groups", nargs="*", metavar="GROUP", help=", ".join(GROUPS))
    parser.add_argument(
        "--check", action="store_true", help="compare with cassettes/ instead of writing"
    )
    parser.add_argument("--diff", type=Path, metavar="DIR", help="compare recorded cassettes")
    args = parser.parse_args(argv)
    if args.diff is not None:
        from tools.authoring._diff import diff

        lines, total, differing = diff(args.diff)
        print("\n".join(lines))
        print(f"{differing} of {total} recorded interaction(s) differ in structure")
        return 1 if differing else 0
    unknown = sorted(set(args.groups) - set(GROUPS))
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; choose from {', '.join(GROUPS)}")
    names: list[str] | None = args.groups or None
    if not args.check:
        print(f"wrote {generate(names)} cassettes under {CASSETTE_ROOT}")
        return 0
    findings = check(names)
    for finding in findings:
        print(f"{finding.kind}: {finding.path}")
        if finding.detail:
            print(finding.detail, end="")
    failures = [f for f in findings if f.failed]
    groups = ", ".join(names or GROUPS)
    if failures:
        print(f"FAILED: {len(failures)} cassette(s) differ from what the scripts write ({groups})")
        return 1
    print(f"OK: the scripts reproduce every committed cassette ({groups})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
