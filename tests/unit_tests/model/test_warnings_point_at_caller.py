"""Every warning ChatKimi gives names the line of the caller's code (issue 21 item 12).

Python attributes a warning to the frame `stacklevel` names: `-W error::UserWarning:mymodule`,
`filterwarnings(..., module=...)` and the printed `file:line` all read that frame. A fixed
`stacklevel` counted through langchain-core's call chain (which differs between invoke, stream,
ainvoke, bind_tools and the constructor) named `langchain_core/load/serializable.py` or
`chat_models.py` instead; each case below checks the warning's `filename` is this file.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import sys
import uuid
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from langchain_kimi import ChatKimi, KimiInvalidRequestError, _warn
from langchain_kimi._request import resolve as _resolve
from langchain_kimi.protocols.openai_chat import content as _chat_content
from tests.support.gateways import PLACEHOLDER_KEY, answering

URL_IMAGE = [
    {
        "role": "user",
        "content": [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}],
    }
]


def _model(**fields: Any) -> ChatKimi:
    return answering().chat_model(**fields)


def _tool_a(x: int) -> int:
    """First tool."""
    return x


def _tool_b(y: str) -> str:
    """Second tool, same name below."""
    return y


_tool_b.__name__ = "_tool_a"


# A coroutine awaited in this file's own coroutines, as users write it: a coroutine handed to
# `asyncio.run` directly has no caller frame at all.
async def _ainvoke(model: Any, **kwargs: Any) -> Any:
    return await model.ainvoke("hi", **kwargs)


async def _abatch(model: ChatKimi, **kwargs: Any) -> Any:
    return await model.abatch(["hi", "ho"], **kwargs)


async def _astream(model: ChatKimi, **kwargs: Any) -> list[Any]:
    return [chunk async for chunk in model.astream("hi", **kwargs)]


def _refused_by_the_service(call: Callable[[], Any]) -> None:
    """The warning comes first; then the gateway answers 400 (the documents' model enum)."""
    with pytest.raises(KimiInvalidRequestError, match="is not one of"):
        call()


CASES: dict[str, Callable[[], Any]] = {
    "constructor, ignored temperature": lambda: ChatKimi(api_key=PLACEHOLDER_KEY, temperature=0.2),
    "constructor, unknown model": lambda: ChatKimi(
        model=f"kimi-unknown-{uuid.uuid4().hex[:8]}", api_key=PLACEHOLDER_KEY
    ),
    "invoke, ignored temperature": lambda: _model().invoke("hi", temperature=0.2),
    "stream, ignored top_p": lambda: list(_model().stream("hi", top_p=0.5)),
    "ainvoke, ignored temperature": lambda: asyncio.run(_ainvoke(_model(), temperature=0.2)),
    "astream, ignored top_p": lambda: asyncio.run(_astream(_model(), top_p=0.5)),
    "batch, ignored temperature": lambda: _model().batch(["hi", "ho"], temperature=0.2),
    "abatch, ignored temperature": lambda: asyncio.run(_abatch(_model(), temperature=0.2)),
    "bound ainvoke, ignored temperature": lambda: asyncio.run(
        _ainvoke(_model().bind_tools([_tool_a]), temperature=0.2)
    ),
    "bind_tools, parallel_tool_calls=False": lambda: _model().bind_tools(
        [_tool_a], parallel_tool_calls=False
    ),
    "bind_tools, two tools of one name": lambda: _model().bind_tools([_tool_a, _tool_b]),
    "invoke, image URL on Chat Completions": lambda: _model().invoke(URL_IMAGE),
    "invoke, unknown model per call": lambda: _refused_by_the_service(
        lambda: _model().invoke("hi", model=f"kimi-unknown-{uuid.uuid4().hex[:8]}")
    ),
}


@pytest.fixture(autouse=True)
def _fresh_one_time_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_resolve, "_parallel_warned", False)
    monkeypatch.setattr(_chat_content, "_warned_media_urls", set())


@pytest.mark.parametrize("case", list(CASES))
def test_the_warning_names_the_callers_line(case: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CASES[case]()
    ours = [w for w in caught if w.category is UserWarning]
    assert ours, "no warning was given"
    assert [w.filename for w in ours] == [__file__] * len(ours), [
        f"{w.filename}:{w.lineno}: {w.message}" for w in ours
    ]


@pytest.mark.parametrize("case", list(CASES))
def test_a_filter_by_the_callers_module_turns_it_into_an_error(case: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", category=UserWarning, module=re.escape(__name__))
        with pytest.raises(UserWarning):
            CASES[case]()


# -- the recording itself (`_warn`) -----------------------------------------------------------


def test_the_warning_names_the_exact_line_of_the_call() -> None:
    model = _model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _line() + 1
        model.invoke("hi", temperature=0.2)
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def _line() -> int:
    """The line of the code that called this function."""
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    assert caller is not None
    return caller.f_lineno


def test_calls_from_caller_records_the_line_of_its_with_statement() -> None:
    with _warn.calls_from_caller():
        line = _line() - 1
        recorded = _warn._CALLER.get()
    assert recorded is not None
    assert recorded[:2] == (__file__, line)
    assert _warn._CALLER.get() is None, "the record ends with the block"


def test_from_caller_wraps_a_sync_method_returning_its_result() -> None:
    seen: list[Any] = []

    def method(x: int, *, y: int) -> int:
        seen.append(_warn._CALLER.get())
        return x + y

    wrapped = _warn.from_caller(method)
    line = _line() + 1
    assert wrapped(1, y=2) == 3
    assert not inspect.iscoroutinefunction(wrapped)
    assert wrapped.__name__ == "method"
    assert seen[0][:2] == (__file__, line), "the caller's line is recorded during the call"
    assert _warn._CALLER.get() is None, "and forgotten after it"


async def test_from_caller_wraps_an_async_method_awaiting_it() -> None:
    seen: list[Any] = []

    async def amethod(x: int) -> int:
        await asyncio.sleep(0)
        seen.append(_warn._CALLER.get())
        return x * 2

    wrapped = _warn.from_caller(amethod)
    assert inspect.iscoroutinefunction(wrapped)
    line = _line() + 1
    assert await wrapped(21) == 42
    assert seen[0][:2] == (__file__, line), "recorded while the coroutine runs"
    assert _warn._CALLER.get() is None


def test_a_stack_made_only_of_libraries_names_its_outermost_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_warn, "_library_dirs", lambda: ("/", *sys.path))
    frame, level = _warn._outside_libraries(sys._getframe(0))
    depth = 1
    outer = sys._getframe(0)
    while outer.f_back is not None:
        outer = outer.f_back
        depth += 1
    assert (frame, level) == (outer, depth)
