"""Which scripted step answers which request.

A step is bound (`when=`: the text of the request's last user message, or a predicate on its
JSON body) or unbound (taken in script order). A request takes the first unused bound step it
matches, else the next unbound step, if the gateway's judge lets it: an unbound step is right
only while calls come one at a time (`calls.py` says when they do not).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_kimi.testing.raw_steps import Raw
from langchain_kimi.testing.script import Error, Step, WebSearch

When = Callable[[dict[str, Any]], bool] | str | None


@dataclass
class Scripted:
    """A step with its place in the script (1-based) and what binds it."""

    step: Step | Raw
    number: int
    when: When = None
    repeat: bool = False
    """Answers every request that takes it, never used up."""
    used: bool = False

    def matches(self, body: dict[str, Any]) -> bool:
        """Whether this bound step answers `body` (a request the documents accept: an object);
        an unbound step matches none."""
        if self.when is None:
            return False
        if callable(self.when):
            return bool(self.when(body))
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


Judge = Callable[["Scripted", Any, bool], None]
"""Called before a request takes an unbound step: (the step, the request body, whether every
unbound step of the script, used or not, is the same answer); raises when the step may not be
served."""


class Script:
    """The steps not yet used, in script order. Not thread-safe: the gateway holds its lock."""

    def __init__(self, judge: Judge) -> None:
        self._steps: list[Scripted] = []
        self._count = 0
        self._judge = judge
        self._first_unbound: Step | Raw | None = None
        self._unbound_differ = False
        """Two unbound steps of the script are different answers: their order matters."""

    def add(self, step: Step | Raw, when: When, *, repeat: bool) -> None:
        forever = next((s for s in self._steps if s.repeat and s.when is None), None)
        if forever is not None and when is None:
            raise ValueError(
                f"the unbound {forever.describe()} answers every later request: an unbound step "
                "after it would never be served (script it before, or bind it with when=)"
            )
        self._count += 1
        self._steps.append(Scripted(step, self._count, when, repeat))
        if when is None:
            self._first_unbound = self._first_unbound or step
            self._unbound_differ = self._unbound_differ or step != self._first_unbound

    def __len__(self) -> int:
        """The steps no request has used yet (a repeating step counts until first used)."""
        return sum(not s.used for s in self._steps)

    def peek_unbound(self) -> Scripted | None:
        return next((s for s in self._steps if s.when is None), None)

    def take(self, body: dict[str, Any]) -> Scripted | None:
        """The step that answers `body` (None: no step left for it); an unbound one only if
        the judge lets it."""
        bound = next((s for s in self._steps if s.matches(body)), None)
        if bound is not None:
            self._use(bound)
            return bound
        unbound = [s for s in self._steps if s.when is None]
        if not unbound:
            return None
        chosen = unbound[0]
        self._judge(chosen, body, not self._unbound_differ)
        self._use(chosen)
        return chosen

    def following(self, after: Scripted, body: dict[str, Any]) -> Scripted | None:
        """The step after a Messages web search (the search and its reply answer one request):
        the next bound step `body` matches when the search was bound, else the next unbound."""
        if after.when is None:
            return self.peek_unbound()
        return next((s for s in self._steps if s.matches(body)), None)

    def remove(self, scripted: Scripted) -> None:
        self._use(scripted)

    def _use(self, scripted: Scripted) -> None:
        scripted.used = True
        if not scripted.repeat:
            self._steps.remove(scripted)
