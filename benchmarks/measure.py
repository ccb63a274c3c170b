"""In-process measurements: client CPU per `invoke` / `stream`, and 100 concurrent `ainvoke`s.

CPU is `time.process_time()` of this process only: the server runs in another process, so its
work is not counted. Clients are interleaved within each repetition so that drift (thermal,
noisy neighbours) spreads over all of them alike.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage

PROMPT: list[BaseMessage] = [HumanMessage("Reply with a short answer about streams.")]


@dataclass
class Series:
    """Per-repetition samples (ms per call, or calls/s) plus error accounting."""

    samples: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str | None = None
    calls: int = 0
    info: dict[str, Any] = field(default_factory=dict)

    def fail(self, exc: BaseException) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = f"{type(exc).__name__}: {exc}"[:300]

    def as_dict(self) -> dict[str, Any]:
        return {
            "median": statistics.median(self.samples) if self.samples else None,
            "samples": [round(s, 4) for s in self.samples],
            "errors": self.errors,
            "first_error": self.first_error,
            "calls": self.calls,
            **self.info,
        }


def _timed_cpu(call: Callable[[], None], iterations: int, series: Series) -> None:
    start = time.process_time()
    for _ in range(iterations):
        try:
            call()
        except Exception as exc:
            series.fail(exc)
        series.calls += 1
    series.samples.append((time.process_time() - start) * 1000.0 / iterations)


def _invoke(model: BaseChatModel) -> Callable[[], None]:
    def call() -> None:
        model.invoke(PROMPT)

    return call


def _stream(model: BaseChatModel) -> Callable[[], None]:
    def call() -> None:
        for _ in model.stream(PROMPT):
            pass

    return call


def check_reply(model: BaseChatModel, series: Series) -> None:
    """One untimed call that records what the client made of the reply (and warms it up)."""
    try:
        reply = model.invoke(PROMPT)
    except Exception as exc:
        series.fail(exc)
        return
    reasoning = reply.additional_kwargs.get("reasoning_content") or any(
        isinstance(b, dict) and b.get("type") == "thinking" for b in reply.content
    )
    series.info["text_chars"] = len(reply.text)
    series.info["reasoning_kept"] = bool(reasoning)


def check_stream(model: BaseChatModel, series: Series) -> None:
    try:
        chunks = list(model.stream(PROMPT))
    except Exception as exc:
        series.fail(exc)
        return
    series.info["chunks"] = len(chunks)


def cpu_per_call(
    targets: dict[str, BaseChatModel | Callable[[], None]],
    *,
    mode: str,
    iterations: int,
    runs: int,
) -> dict[str, Series]:
    """Client CPU (ms) per `invoke` or per full `stream` for each model; plain callables (the
    raw-transport floors) are timed as they are."""
    make = _invoke if mode == "invoke" else _stream
    check = check_reply if mode == "invoke" else check_stream
    out = {name: Series() for name in targets}
    calls: dict[str, Callable[[], None]] = {}
    for name, target in targets.items():
        if isinstance(target, BaseChatModel):
            check(target, out[name])
            calls[name] = make(target)
        else:
            target()
            calls[name] = target
    for _ in range(runs):
        for name, call in calls.items():
            _timed_cpu(call, iterations, out[name])
    return out


async def _burst(model: BaseChatModel, concurrency: int, series: Series) -> None:
    start = time.perf_counter()
    results = await asyncio.gather(
        *(model.ainvoke(PROMPT) for _ in range(concurrency)), return_exceptions=True
    )
    elapsed = time.perf_counter() - start
    for result in results:
        series.calls += 1
        if isinstance(result, BaseException):
            series.fail(result)
    series.samples.append(concurrency / elapsed)


async def _concurrent(
    models: dict[str, BaseChatModel], concurrency: int, runs: int
) -> dict[str, Series]:
    out = {name: Series() for name in models}
    warm = {name: Series() for name in models}
    for name, model in models.items():
        await _burst(model, concurrency, warm[name])
        out[name].errors += warm[name].errors
        out[name].first_error = warm[name].first_error
    for _ in range(runs):
        for name, model in models.items():
            await _burst(model, concurrency, out[name])
    return out


def concurrent_throughput(
    models: dict[str, BaseChatModel], *, concurrency: int, runs: int
) -> dict[str, Series]:
    """Calls/s for bursts of `concurrency` simultaneous `ainvoke`s on one instance per client.

    One event loop for the whole section: async HTTP clients are bound to the loop that made them.
    """
    return asyncio.run(_concurrent(models, concurrency, runs))
