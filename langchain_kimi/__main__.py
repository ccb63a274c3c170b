"""`python -m langchain_kimi doctor [--model M] [--protocol P] [--json]`."""

from __future__ import annotations

import sys

from langchain_kimi import doctor

_COMMANDS = {"doctor": doctor.main}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in _COMMANDS:
        print("usage: python -m langchain_kimi doctor [--help]", file=sys.stderr)
        return 2
    return _COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
