"""A forked child starts with a fresh registry: its own connections, its own gates, never the
parent's socket. Gunicorn/uWSGI pre-fork, Celery prefork and multiprocessing
all fork a process that may already have called the gateway.

Real `os.fork()` against a loopback echo gateway: every answer says which request it answers, so a
reply read from a socket shared with the other process shows up as a wrong answer.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from langchain_kimi import ChatKimi
from langchain_kimi._http.pool import registry
from tests.support.echo_gateway import EchoServer
from tests.support.loopback import running

pytestmark = [
    pytest.mark.enable_socket,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork() only"),
]

KEY = "sk-fork-test-key-0123456789abcdef"


@pytest.fixture
def gateway() -> Iterator[EchoServer]:
    with running(EchoServer()) as server:
        yield server


def _model(url: str, **fields: object) -> ChatKimi:
    settings: dict[str, object] = {"api_key": KEY, "base_url": url, "timeout": 10, "max_retries": 0}
    return ChatKimi.model_validate({**settings, **fields})


def _answers(model: ChatKimi, who: str, count: int) -> list[str]:
    """`count` calls; each answer, or the error type when a call failed."""
    answers = []
    for i in range(count):
        try:
            answers.append(str(model.invoke(f"{who}-{i}").content))
        except Exception as exc:
            answers.append(type(exc).__name__)
    return answers


def _in_child(work: Callable[[], object]) -> tuple[int, Callable[[], object]]:
    """Fork; the child runs `work` and sends its JSON result back. Returns (pid, receive)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 1
        try:
            os.close(read_end)
            with os.fdopen(write_end, "w") as out:
                out.write(json.dumps(work()))
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)

    def receive() -> object:
        with os.fdopen(read_end) as data:
            text = data.read()
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the child failed"
        return json.loads(text)

    return pid, receive


def test_parent_and_child_each_get_their_own_answers(gateway: EchoServer) -> None:
    model = _model(gateway.url)
    for round_ in range(6):
        assert model.invoke(f"warm-{round_}").content == f"warm-{round_}"  # a kept-alive socket
        _, child_answers = _in_child(lambda: _answers(model, "child", 3))
        parent = _answers(model, "parent", 3)
        assert child_answers() == [f"child-{i}" for i in range(3)]
        assert parent == [f"parent-{i}" for i in range(3)]


def test_the_child_of_a_process_with_calls_in_flight_calls_at_once(gateway: EchoServer) -> None:
    release = threading.Event()
    held = threading.Semaphore(0)

    def hold(body: dict[str, object]) -> None:
        held.release()
        release.wait(20)

    gateway.on_request = hold
    # The parent's held calls are released only after the child has answered.
    model = _model(gateway.url, timeout=httpx.Timeout(10))
    with ThreadPoolExecutor(4) as pool:
        in_flight = [pool.submit(model.invoke, f"held-{i}") for i in range(4)]
        for _ in range(4):
            assert held.acquire(timeout=10)
        gateway.on_request = None
        _, child = _in_child(lambda: _answers(model, "child", 1))
        try:
            assert child() == ["child-0"]
        finally:
            release.set()
        assert [f.result().content for f in in_flight] == [f"held-{i}" for i in range(4)]


_WORKER_URL = ""


def _new_model_answers(i: int) -> str:
    return str(_model(_WORKER_URL).invoke(f"task-{i}").content)


def test_fork_pool_workers_building_new_models_get_right_answers(
    gateway: EchoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(f"{__name__}._WORKER_URL", gateway.url)
    warm = _model(gateway.url)
    with ThreadPoolExecutor(8) as threads:  # eight kept-alive sockets in the parent's pool
        assert list(threads.map(lambda i: warm.invoke(f"w{i}").content, range(8))) == [
            f"w{i}" for i in range(8)
        ]
    with multiprocessing.get_context("fork").Pool(4) as workers:
        answers = workers.map(_new_model_answers, range(32), chunksize=1)
    assert answers == [f"task-{i}" for i in range(32)]
    assert warm.invoke("parent after").content == "parent after"


def test_a_fresh_child_registry_after_fork(gateway: EchoServer) -> None:
    model = _model(gateway.url)
    model.invoke("warm")
    parent = model._transport()._shared()

    def child_state() -> object:
        child = model._transport()._shared()
        return {
            "same clients": child.clients is parent.clients,
            "same gate": child.gate is parent.gate,
            "registered": len(registry._GATEWAYS),
            "answer": model.invoke("child").content,
            "queued after": child.gate.queued,
        }

    _, state = _in_child(child_state)
    assert state() == {
        "same clients": False,
        "same gate": False,
        "registered": 1,
        "answer": "child",
        "queued after": 0,
    }
