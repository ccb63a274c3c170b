"""What a Python source imports, read from its syntax tree (for the layering tests)."""

from __future__ import annotations

import ast


def imported_modules(source: str, package: str) -> set[str]:
    """Every module `source` imports, absolute (`from x import y` counts `x` and `x.y`), lazy
    imports inside functions included."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found
