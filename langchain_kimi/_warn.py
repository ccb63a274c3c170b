"""Warnings attributed to the caller's line, wherever in the call chain they are given.

A fixed `stacklevel` counts frames, and langchain-core's chain differs between a constructor,
`invoke`, `stream`, `ainvoke`, `batch` and `bind_tools`: a fixed count names a langchain-core or
ChatKimi line, so `-W error::UserWarning:mymodule` and `filterwarnings(module=...)` never match.
`warn` walks the stack instead and names the first frame outside the libraries between the
caller and ChatKimi (what Python 3.12's `skip_file_prefixes` does; this package supports 3.11).

langchain-core runs `ainvoke` and `batch` in tasks / threads of their own, whose stacks end at
the event loop or the thread: around those calls `calls_from_caller()` records the caller's
line first (in a context variable, which tasks and langchain-core's threads inherit);
`from_caller` wraps such a method in it.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import FrameType
from typing import Any, ParamSpec, TypeVar, overload

P = ParamSpec("P")
R = TypeVar("R")

_LIBRARIES = ("langchain_kimi", "langchain_core", "langchain", "langgraph", "pydantic")


@functools.cache
def _real_dir(location: str) -> str:
    return os.path.join(os.path.realpath(location), "")


@functools.lru_cache(maxsize=4096)
def _real_file(filename: str) -> str:
    return os.path.realpath(filename)


def _library_dirs() -> tuple[str, ...]:
    """Where the skipped libraries that are imported live (one that is not imported has no
    frame on the stack): read from `sys.modules`, so nothing is looked up or imported here."""
    return tuple(
        _real_dir(location)
        for name in _LIBRARIES
        if (module := sys.modules.get(name)) is not None
        for location in getattr(module, "__path__", None) or ()
    )


_CALLER: ContextVar[tuple[str, int, dict[str, Any]] | None] = ContextVar(
    "langchain_kimi_caller", default=None
)
"""(filename, line, module globals) of the code that made the call in progress, when recorded."""


def _outside_libraries(frame: FrameType) -> tuple[FrameType, int]:
    """The first frame from `frame` outwards outside the skipped libraries (the outermost if
    all are in them), and how many frames out it is (1: `frame` itself)."""
    level = 1
    skipped = _library_dirs()
    while frame.f_back is not None and _real_file(frame.f_code.co_filename).startswith(skipped):
        frame = frame.f_back
        level += 1
    return frame, level


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


@overload
def from_caller(
    method: Callable[P, Coroutine[Any, Any, R]],
) -> Callable[P, Coroutine[Any, Any, R]]: ...
@overload
def from_caller(method: Callable[P, R]) -> Callable[P, R]: ...
def from_caller(method: Callable[P, Any]) -> Callable[P, Any]:
    """`method` (sync or async) run inside `calls_from_caller()`: a warning given while it runs
    names the line that called it, even from the tasks or threads it starts."""
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def awaited(*args: P.args, **kwargs: P.kwargs) -> Any:
            with calls_from_caller():
                return await method(*args, **kwargs)

        return awaited

    @functools.wraps(method)
    def called(*args: P.args, **kwargs: P.kwargs) -> Any:
        with calls_from_caller():
            return method(*args, **kwargs)

    return called


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
