"""Warnings attributed to the caller's line, wherever in the call chain they are given.

A fixed `stacklevel` counts frames, and langchain-core's chain differs between a constructor,
`invoke`, `stream`, `ainvoke`, `batch` and `bind_tools`: a fixed count names a langchain-core or
ChatKimi line, so `-W error::UserWarning:mymodule` and `filterwarnings(module=...)` never match.
`warn` walks the stack instead and names the first frame outside the libraries between the
caller and ChatKimi (what Python 3.12's `skip_file_prefixes` does; this package supports 3.11).

langchain-core runs `ainvoke` and `batch` in tasks / threads of their own, whose stacks end at
the event loop or the thread: around those calls `calls_from_caller()` records the caller's
line first (in a context variable, which tasks and langchain-core's threads inherit).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import FrameType
from typing import Any

_LIBRARIES = ("langchain_kimi", "langchain_core", "langchain", "langgraph", "pydantic")


def _library_dirs() -> tuple[str, ...]:
    dirs: list[str] = []
    for name in _LIBRARIES:
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            dirs.append(os.path.join(os.path.realpath(location), ""))
    return tuple(dirs)


_SKIPPED = _library_dirs()
_CALLER: ContextVar[tuple[str, int, dict[str, Any]] | None] = ContextVar(
    "langchain_kimi_caller", default=None
)
"""(filename, line, module globals) of the code that made the call in progress, when recorded."""


def _outside_libraries(frame: FrameType) -> tuple[FrameType, int]:
    """The first frame from `frame` outwards outside the skipped libraries (the outermost if
    all are in them), and how many frames out it is (1: `frame` itself)."""
    level = 1
    while frame.f_back is not None and _skipped(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return frame, level


def _skipped(filename: str) -> bool:
    return os.path.realpath(filename).startswith(_SKIPPED)


@contextmanager
def calls_from_caller() -> Iterator[None]:
    """Records the caller's line for warnings given inside the call (the outermost call wins)."""
    if _CALLER.get() is not None:
        yield
        return
    frame, _ = _outside_libraries(sys._getframe(2))  # past contextlib's __enter__
    token = _CALLER.set((frame.f_code.co_filename, frame.f_lineno, frame.f_globals))
    try:
        yield
    finally:
        _CALLER.reset(token)


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """`warnings.warn(message, category)` attributed to the caller's line."""
    recorded = _CALLER.get()
    if recorded is None:
        _, level = _outside_libraries(sys._getframe(0))
        warnings.warn(message, category, stacklevel=level)
        return
    filename, line, module_globals = recorded
    warnings.warn_explicit(
        message,
        category,
        filename,
        line,
        module=module_globals.get("__name__"),
        registry=module_globals.setdefault("__warningregistry__", {}),
        module_globals=module_globals,
    )
