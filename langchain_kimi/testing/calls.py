"""When an unbound step may be served: the calls of a gateway's models, and their order.

An unbound step answers whichever request reaches it first, so it is right only while the calls
come one at a time, in an order the test decides. A call lasts from its start to its end (a
stream until it is read to its end or closed); its retries and `$web_search` rounds are requests
of the same call. A request that would take an unbound step is refused (`AmbiguousStepError`)
when

- another call is in progress, or its own call overlapped another at any moment;
- it runs on a worker of a thread pool with other workers (`batch`, LangGraph): a pool may run
  a later task before an earlier one, and their calls need not overlap for that;
- another live thread took an unbound step (threads started together may call in either
  order; the main thread, waiting for its workers, is no rival, nor is a thread that ended);
- an earlier refusal showed the calls out of order: from then on, for the gateway's life.

A call that took an unbound step fails at its end if another call started before it ended (the
other may be the one the step was scripted for). None of this applies when every unbound step
of the script is the same answer. Calls are seen through a callback on each model
`FakeKimiGateway.chat_model` makes; a request from a client built on `gw.transport` belongs to
the one call in progress, if any, and with none is refused only after an earlier refusal.
"""

from __future__ import annotations

import sys
import threading
import types
import uuid
import weakref
from collections.abc import Mapping
from concurrent.futures import thread as thread_pools
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from langchain_kimi.testing.binding import Scripted, last_user_text
from langchain_kimi.testing.script import ScriptError


class AmbiguousStepError(ScriptError):
    """An unbound step that another call of the gateway could have taken instead: which call
    gets which answer depends on timing. Bind each step to its request with `when=`."""


@dataclass
class _Call:
    overlapped: bool = False
    """Another call of the gateway was in progress at some moment of this one."""
    took: tuple[Scripted, str] | None = None
    """The first unbound step it took that another call could have taken, and the text of the
    last user message of the request that took it."""


def how_to_bind(prompt: str) -> str:
    """The fix, with the request's own text where there is one."""
    example = repr(prompt) if prompt else "'<its last user message>'"
    return (
        f"bind each step to the request it answers with when=, e.g. gw.add_reply(..., "
        f"when={example}) (the text of the request's last user message) or "
        "when=lambda body: ... (a predicate on its JSON body)"
    )


class Calls:
    """The calls in progress of one gateway's models (see the module docstring); not
    thread-safe: the gateway calls it under its lock."""

    def __init__(self) -> None:
        self._active: dict[uuid.UUID, _Call] = {}
        self._order_lost = False
        self._takers: weakref.WeakKeyDictionary[threading.Thread, Scripted] = (
            weakref.WeakKeyDictionary()
        )
        """The threads that took an unbound step, and the step."""

    def start(self, run_id: uuid.UUID) -> None:
        for call in self._active.values():
            call.overlapped = True
        self._active[run_id] = _Call(overlapped=bool(self._active))

    def end(self, run_id: uuid.UUID, error: BaseException | None) -> AmbiguousStepError | None:
        """The failure the call ends with: when it took an unbound step and overlapped another
        call. None for a call that failed on its own (its error stands; a stream closed early
        or a cancelled task is nobody's failure)."""
        call = self._active.pop(run_id, None)
        if call is None or call.took is None or not call.overlapped:
            return None
        self._order_lost = True
        if error is not None and (
            isinstance(error, ScriptError) or not isinstance(error, Exception)
        ):
            return None
        step, prompt = call.took
        return AmbiguousStepError(
            f"FakeKimiGateway: this call took the unbound {step.describe()}, and another call of "
            "this gateway's models was in progress during it (a stream runs until it is read to "
            "its end or closed): which call it answers depends on timing; " + how_to_bind(prompt)
        )

    def judge(self, chosen: Scripted, body: Any, interchangeable: bool) -> None:
        """Before a request takes the unbound step `chosen`: raise `AmbiguousStepError` when
        another call could take it instead (`interchangeable`: every unbound step of the script
        is the same answer, so which call takes which cannot matter)."""
        if interchangeable:
            return
        doubt = self._doubt()
        if doubt is not None:
            self._order_lost = True
            raise AmbiguousStepError(
                f"the unbound {chosen.describe()} answers whichever call asks first, and {doubt}: "
                f"which call takes it depends on timing; {how_to_bind(last_user_text(body))}"
            )
        if len(self._active) == 1:
            (call,) = self._active.values()
            call.took = call.took or (chosen, last_user_text(body))
            self._takers[threading.current_thread()] = chosen

    def _doubt(self) -> str | None:
        if len(self._active) > 1:
            return f"{len(self._active)} calls of this gateway's models are in progress"
        if any(call.overlapped for call in self._active.values()):
            return (
                "another call of this gateway's models was in progress during this one (a "
                "stream runs until it is read to its end or closed)"
            )
        if self._order_lost:
            return (
                "an earlier AmbiguousStepError of this gateway (the first says why) showed its "
                "calls out of order: the script's order no longer says which call comes next"
            )
        if not self._active:  # a request of a client built on gw.transport: no call to judge
            return None
        here = threading.current_thread()
        if _pool_siblings(here):
            return (
                f"it runs on {here.name}, a worker of a thread pool with other workers (batch, "
                "LangGraph running nodes on threads, an executor): a pool may run its tasks in "
                "any order"
            )
        return _rival(here, self._takers)


def _pool_siblings(here: threading.Thread) -> bool:
    """Whether `here` is a worker of a `ThreadPoolExecutor` with other live workers: the pool
    may run a later task of its queue before an earlier one, on another worker, even when their
    calls never overlap (`batch` and LangGraph run their tasks on such pools)."""
    queue = _work_queue()
    return queue is not None and any(
        thread is not here and thread_pools._threads_queues.get(thread) is queue
        for thread in threading.enumerate()
    )


def _work_queue() -> object | None:
    """The work queue of the thread pool the current thread works for (None: none), read from
    the worker's own frame: a pool registers a worker only after starting it, and the worker
    may run a task before that."""
    frame: types.FrameType | None = sys._getframe()
    while frame is not None:
        if frame.f_code is thread_pools._worker.__code__:
            return frame.f_locals.get("work_queue")
        frame = frame.f_back
    return None


def _rival(here: threading.Thread, takers: Mapping[threading.Thread, Scripted]) -> str | None:
    """Threads you start yourself, running at the same time, may call in either order: another
    live thread that took an unbound step is a rival. The main thread, waiting for its workers,
    is none, and neither is a thread that has ended."""
    main = threading.main_thread()
    if here is main:
        return None
    for thread, step in list(takers.items()):
        if thread is not here and thread is not main and thread.is_alive():
            return (
                f"{thread.name}, which took the unbound {step.describe()}, still runs: threads "
                "running at the same time may call in either order"
            )
    return None


class CallTracker(BaseCallbackHandler):
    """The start and end of each call of one gateway's models, a callback on each of them."""

    raise_error = True
    run_inline = True

    def __init__(self, calls: Calls, lock: threading.Lock) -> None:
        self._calls = calls
        self._lock = lock

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: uuid.UUID, **_: Any
    ) -> None:
        with self._lock:
            self._calls.start(run_id)

    def on_llm_end(self, response: Any, *, run_id: uuid.UUID, **_: Any) -> None:
        self._end(run_id, None)

    def on_llm_error(self, error: BaseException, *, run_id: uuid.UUID, **_: Any) -> None:
        self._end(run_id, error)

    def _end(self, run_id: uuid.UUID, error: BaseException | None) -> None:
        with self._lock:
            failure = self._calls.end(run_id, error)
        if failure is not None:
            raise failure
