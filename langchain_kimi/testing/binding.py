"""Which scripted step answers which request, whatever the concurrency.

A step is bound (`when=`: the text of the request's last user message, or a predicate on its
JSON body) or unbound (taken in script order). A request takes the first unused bound step it
matches, else the next unbound step. Order means nothing across calls that overlap in time
(`batch` runs its calls on threads in any order, LangGraph `Send` fans nodes out), so an unbound
step is refused as ambiguous when another call is active, or when another call starts while the
call that took it is still running, unless every step those calls could take is the same
answer. Calls are tracked from the models `FakeKimiGateway.chat_model` makes (a callback on
each model: start, end, error); requests from other clients are served in script order.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler

from langchain_kimi.testing.raw_steps import Raw
from langchain_kimi.testing.script import Error, ScriptError, Step, WebSearch

When = Callable[[dict[str, Any]], bool] | str | None


class AmbiguousStepError(ScriptError):
    """An unbound step that calls in flight together could each take."""


@dataclass
class Scripted:
    """A step with its place in the script (1-based) and what binds it."""

    step: Step | Raw
    number: int
    when: When = None
    repeat: bool = False
    """Answers every request that takes it, never used up."""
    used: bool = False

    def matches(self, body: Any) -> bool:
        if self.when is None:
            return False
        if callable(self.when):
            return bool(self.when(body if isinstance(body, dict) else {}))
        return last_user_text(body) == self.when.strip()

    def describe(self) -> str:
        step = self.step
        if isinstance(step, Raw):
            what = "raw answer"
        elif isinstance(step, Error):
            what = f"error {step.status}"
        elif isinstance(step, WebSearch):
            what = f"web search {step.query!r}"
        elif step.tool_calls:
            what = f"reply calling {[c.name for c in step.tool_calls]}"
        else:
            what = f"reply {step.text[:40]!r}"
        bound = "" if self.when is None else " (bound)"
        repeat = ", repeating" if self.repeat else ""
        return f"step {self.number} ({what}{repeat}){bound}"


def last_user_text(body: Any) -> str:
    """The text of the request's last user message that has text (tool results skipped)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in reversed(messages if isinstance(messages, list) else []):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content.strip()
        parts = content if isinstance(content, list) else []
        texts = [
            str(part.get("text"))
            for part in parts
            if isinstance(part, dict) and part.get("type") == "text"
        ]
        if texts:
            return "\n".join(texts).strip()
    return ""


@dataclass
class Calls:
    """The calls in progress of the models a gateway made, and the unbound step each took."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    active: dict[uuid.UUID, Scripted | None] = field(default_factory=dict)
    threads: dict[uuid.UUID, threading.Thread] = field(default_factory=dict)
    """The thread each call in progress started on."""
    last_unbound: tuple[threading.Thread, Scripted] | None = None
    """The thread of the last call that took an unbound step, and the step."""


class CallTracker(BaseCallbackHandler):
    """Start, end and error of each call of one gateway's models (see the module docstring)."""

    raise_error = True
    run_inline = True

    def __init__(self, calls: Calls, next_unbound: Callable[[], Scripted | None]) -> None:
        self._calls = calls
        self._next_unbound = next_unbound

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: uuid.UUID, **_: Any
    ) -> None:
        here = threading.current_thread()
        with self._calls.lock:
            taken = [s for s in self._calls.active.values() if s is not None]
            self._calls.active[run_id] = None
            self._calls.threads[run_id] = here
            last = self._calls.last_unbound
        upcoming = self._next_unbound()
        if upcoming is None:
            return
        if last is not None and _rival_threads(here, last[0]):
            where = f"ran on thread {last[0].name}, which still runs (a pool of threads may run "
            self._refuse(run_id, upcoming, last[1], where + "its calls in either order)")
        for scripted in taken:
            self._refuse(run_id, upcoming, scripted, "was still running (calls in flight together)")

    def _refuse(self, run_id: uuid.UUID, upcoming: Scripted, taken: Scripted, where: str) -> None:
        if upcoming.step == taken.step:
            return
        self._end(run_id)
        raise AmbiguousStepError(
            f"FakeKimiGateway: a call started while the call that took the unbound "
            f"{taken.describe()} {where}: which call takes {upcoming.describe()} depends on "
            "timing; bind each step to its request with when= (the last user message's text, "
            "or a predicate on the body)"
        )

    def _end(self, run_id: uuid.UUID) -> None:
        with self._calls.lock:
            self._calls.active.pop(run_id, None)
            self._calls.threads.pop(run_id, None)

    def on_llm_end(self, response: Any, *, run_id: uuid.UUID, **_: Any) -> None:
        self._end(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: uuid.UUID, **_: Any) -> None:
        self._end(run_id)


def _rival_threads(here: threading.Thread, there: threading.Thread) -> bool:
    """Calls that never overlap can still come in either order: a worker pool (`batch`,
    LangGraph `Send`) may run its second task before its first. Two live threads are rivals;
    the main thread, waiting for its workers, is none, and neither is a thread that has ended."""
    main = threading.main_thread()
    return there is not here and there.is_alive() and main not in (here, there)


class Script:
    """The steps not yet used, in script order. Not thread-safe: the gateway holds its lock."""

    def __init__(self, calls: Calls) -> None:
        self._steps: list[Scripted] = []
        self._count = 0
        self._calls = calls

    def add(self, step: Step | Raw, when: When = None, *, repeat: bool = False) -> None:
        forever = next((s for s in self._steps if s.repeat and s.when is None), None)
        if forever is not None and when is None:
            raise ValueError(
                f"the unbound {forever.describe()} answers every later request: an unbound step "
                "after it would never be served (script it before, or bind it with when=)"
            )
        self._count += 1
        self._steps.append(Scripted(step, self._count, when, repeat))

    def __len__(self) -> int:
        """The steps no request has used yet (a repeating step counts until first used)."""
        return sum(not s.used for s in self._steps)

    def peek_unbound(self) -> Scripted | None:
        return next((s for s in self._steps if s.when is None), None)

    def take(self, body: Any) -> Scripted | None:
        """The step that answers `body` (None: no step left for it); `Ambiguous` when it is an
        unbound step other calls in flight could have taken instead."""
        bound = next((s for s in self._steps if s.when is not None and s.matches(body)), None)
        if bound is not None:
            self._use(bound)
            return bound
        unbound = [s for s in self._steps if s.when is None]
        if not unbound:
            return None
        chosen = unbound[0]
        with self._calls.lock:
            active = list(self._calls.active)
            others = len(active) - 1
        # Rivals of a repeating step take that same step: no ambiguity.
        rivals = [] if chosen.repeat else unbound[1 : 1 + max(0, others)]
        if any(s.step != chosen.step for s in rivals):
            raise AmbiguousStepError(
                f"{chosen.describe()} is unbound and {others} other call(s) are in flight: "
                "which call takes it depends on timing"
            )
        self._use(chosen)
        if len(active) == 1:
            with self._calls.lock:
                if active[0] in self._calls.active:
                    self._calls.active[active[0]] = chosen
                    self._calls.last_unbound = (self._calls.threads[active[0]], chosen)
        return chosen

    def following(self, after: Scripted, body: Any) -> Scripted | None:
        """The step after a Messages web search (the search and its reply answer one request):
        the next bound step `body` matches when the search was bound, else the next unbound."""
        if after.when is None:
            return self.peek_unbound()
        return next((s for s in self._steps if s.when is not None and s.matches(body)), None)

    def remove(self, scripted: Scripted) -> None:
        self._use(scripted)

    def _use(self, scripted: Scripted) -> None:
        scripted.used = True
        if not scripted.repeat:
            self._steps.remove(scripted)
