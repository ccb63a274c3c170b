"""Building one request from a long history: ChatKimi's builders beside the peers', 10k vs 20k.

`python -m benchmarks.request_building [--runs N]` prints, per client and history shape, the
mean CPU time of building the body (no I/O: ChatKimi's `build_request`, the peers'
`_get_request_payload`) at 10,000 and 20,000 messages, the 20k/10k ratio, and how much of each
figure was CPython's cyclic garbage collector (timed by `gc.callbacks`): a linear builder reads
about 2.0; what the collector adds on top grows with the heap it walks and with the containers
the body holds.

Two shapes: a chat (a question, an answer with reasoning) and a tool loop (a question, a tool
call with reasoning, its result, an answer). The peers drop the reasoning they cannot send
(ChatAnthropic sends no thinking it did not sign); ChatKimi sends it back, so its Messages turns
hold a list of blocks where ChatAnthropic's hold a string.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from benchmarks.clients import API_KEY, MODEL

SIZES = (10_000, 20_000)
Builder = Callable[[list[BaseMessage]], Any]

warnings.filterwarnings("ignore", message="Unrecognized keys in model profile")


def chat(size: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for n in range(size // 2):
        messages.append(HumanMessage(f"question {n}"))
        messages.append(AIMessage(f"answer {n}", additional_kwargs={"reasoning_content": "r"}))
    return messages


def tool_loop(size: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for n in range(size // 4):
        call = {"name": "lookup", "args": {"n": n}, "id": f"call_{n}", "type": "tool_call"}
        messages += [
            HumanMessage(f"question {n}"),
            AIMessage("", tool_calls=[call], additional_kwargs={"reasoning_content": "r"}),
            ToolMessage(f"result {n}", tool_call_id=f"call_{n}"),
            AIMessage(f"answer {n}", additional_kwargs={"reasoning_content": "r"}),
        ]
    return messages


def builders() -> dict[str, Builder]:
    from langchain_anthropic import ChatAnthropic
    from langchain_openai import ChatOpenAI

    from langchain_kimi._request.options import RequestOptions
    from langchain_kimi._request.profiles import capabilities
    from langchain_kimi.protocols import adapter

    def kimi(protocol: str) -> Builder:
        options = RequestOptions(caps=capabilities(MODEL, protocol))  # type: ignore[arg-type]
        build = adapter(protocol).build_request  # type: ignore[arg-type]
        return lambda messages: build(messages, options)

    anthropic_peer = ChatAnthropic.model_validate({"model": MODEL, "api_key": API_KEY})
    openai_peer = ChatOpenAI.model_validate({"model": MODEL, "api_key": API_KEY})
    return {
        "kimi-openai": kimi("openai"),
        "ChatOpenAI": openai_peer._get_request_payload,
        "kimi-anthropic": kimi("anthropic"),
        "ChatAnthropic": anthropic_peer._get_request_payload,
    }


class _CollectorClock:
    """CPU seconds spent in the cyclic garbage collector while installed (the same clock as the
    builds', so that the two subtract)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds += time.process_time() - self._started


def measure(build: Builder, messages: list[BaseMessage], runs: int) -> tuple[float, float]:
    """(mean CPU ms of one build, mean collector ms per build): a mean, not a median, so
    that the collections a build triggers every few runs count."""
    build(messages)  # warm-up
    clock = _CollectorClock()
    gc.collect()
    gc.callbacks.append(clock)
    samples = []
    try:
        for _ in range(runs):
            start = time.process_time()
            build(messages)
            samples.append((time.process_time() - start) * 1000.0)
    finally:
        gc.callbacks.remove(clock)
    return statistics.mean(samples), clock.seconds * 1000.0 / runs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    header = "| history | client | 10k ms (gc) | 20k ms (gc) | 20k/10k | without gc |"
    print(header)
    print("|---|---|---|---|---|---|")
    for shape in (chat, tool_loop):
        for name, build in builders().items():
            figures = {size: measure(build, shape(size), args.runs) for size in SIZES}
            (small, small_gc), (large, large_gc) = figures[SIZES[0]], figures[SIZES[1]]
            print(
                f"| {shape.__name__} | {name} | {small:.1f} ({small_gc:.1f}) | "
                f"{large:.1f} ({large_gc:.1f}) | {large / small:.2f} | "
                f"{(large - large_gc) / (small - small_gc):.2f} |"
            )


if __name__ == "__main__":
    main()
