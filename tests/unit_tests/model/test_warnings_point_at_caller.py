"""Every warning ChatKimi gives names the line of the caller's code (issue 21 item 12).

Python attributes a warning to the frame `stacklevel` names: `-W error::UserWarning:mymodule`,
`filterwarnings(..., module=...)` and the printed `file:line` all read that frame. A fixed
`stacklevel` counted through langchain-core's call chain (which differs between invoke, stream,
ainvoke, bind_tools and the constructor) named `langchain_core/load/serializable.py` or
`chat_models.py` instead; each case below checks the warning's `filename` is this file.
"""

from __future__ import annotations

import asyncio
import re
import uuid
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from langchain_kimi import ChatKimi
from langchain_kimi._request import resolve as _resolve
from langchain_kimi.protocols.openai_chat import content as _chat_content
from tests.support.fake_gateway import PLACEHOLDER_KEY, FakeGateway, minimal_reply

URL_IMAGE = [
    {
        "role": "user",
        "content": [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}],
    }
]


STREAM_OK = (
    'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"kimi-k3.1-pro",'
    '"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
    "data: [DONE]\n\n"
)


def _reply(body: dict[str, Any], path: str) -> Any:
    return STREAM_OK if body.get("stream") else minimal_reply(body, path)


def _model(**fields: Any) -> ChatKimi:
    return FakeGateway(_reply).model(**fields)


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
    "invoke, unknown model per call": lambda: _model().invoke(
        "hi", model=f"kimi-unknown-{uuid.uuid4().hex[:8]}"
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
