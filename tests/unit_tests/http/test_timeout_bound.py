"""A gateway that sends no byte: how long a call takes before `KimiTimeoutError` (issue 28, item 6).

A timeout before the first byte is retried like a connection error (as ChatOpenAI and
ChatAnthropic do), so a call makes `max_retries + 1` attempts of `timeout` each, plus the backoff
waits between them: that bound is what the `timeout` field and docs/errors.md say. Real sockets on
127.0.0.1, a short timeout.
"""

from __future__ import annotations

import ast
import asyncio
import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from langchain_kimi import ChatKimi
from langchain_kimi._errors import KimiTimeoutError
from tests.support.loopback import LoopbackServer, QuietHandler, running

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

ROOT = Path(__file__).resolve().parents[3]
TIMEOUT = 0.3
BACKOFF_AT_MOST = 0.5 + 1.0  # the first two backoff waits, before jitter (retry.backoff_delay)


class Silent(QuietHandler):
    """Reads the request, then sends nothing until the test ends."""

    server: SilentServer

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.server.count()
        self.server.release.wait(30)


class SilentServer(LoopbackServer):
    def __init__(self) -> None:
        super().__init__(Silent)
        self.requests = 0
        self._lock = threading.Lock()

    def count(self) -> None:
        with self._lock:
            self.requests += 1


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    with running(SilentServer()) as server:
        yield server


def _model(url: str, max_retries: int) -> ChatKimi:
    return ChatKimi(
        api_key="sk-silent-0123456789abcdef", base_url=url, timeout=TIMEOUT, max_retries=max_retries
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("max_retries", [0, 2])
def test_no_byte_raises_after_max_retries_plus_one_timeouts(
    silent: SilentServer, mode: str, max_retries: int
) -> None:
    model = _model(silent.url, max_retries)
    started = time.monotonic()
    call = (
        (lambda: model.invoke("hello"))
        if mode == "sync"
        else lambda: asyncio.run(model.ainvoke("hello"))
    )
    with pytest.raises(KimiTimeoutError):
        call()
    took = time.monotonic() - started
    assert silent.requests == max_retries + 1
    attempts = max_retries + 1
    assert took >= attempts * TIMEOUT
    assert took < attempts * TIMEOUT + (BACKOFF_AT_MOST if max_retries else 0) + 2.0  # slack
    model.close()


def _field_docstring(name: str) -> str:
    tree = ast.parse((ROOT / "langchain_kimi" / "chat_models.py").read_text())
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ChatKimi").body
    for field, doc in itertools.pairwise(body):
        if isinstance(field, ast.AnnAssign) and ast.unparse(field.target) == name:
            assert isinstance(doc, ast.Expr)
            assert isinstance(doc.value, ast.Constant)
            return str(doc.value.value)
    raise AssertionError(f"no field {name}")


def test_the_bound_is_said_where_timeout_is_documented() -> None:
    assert "(max_retries + 1)" in _field_docstring("timeout")
    errors = (ROOT / "docs" / "errors.md").read_text()
    timeouts = errors[errors.index("## Timeouts") :]
    assert "(max_retries + 1) × timeout" in timeouts[: timeouts.index("\n## ")]
