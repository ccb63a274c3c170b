"""A streaming terminal chat that shows Kimi's reasoning live, then the answer and the usage.

Shows `ChatKimi.stream`: reasoning arrives as `additional_kwargs["reasoning_content"]` deltas
(printed dimmed, with a spinner, on a terminal; prefixed with `[thinking]` otherwise), then the
answer text, then the turn's token usage. The history keeps each reply exactly as streamed, so
the reasoning goes back to the model unchanged in the next turn.

Run it live:

    EVOLINK_API_KEY=... python examples/streaming_chat.py
    EVOLINK_API_KEY=... python examples/streaming_chat.py --script "First question" "Follow-up"

Without EVOLINK_API_KEY it replays the scripted demo conversation from cassettes/examples/
(replay can only play that recorded script: other --script questions need the live service).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from typing import TextIO

from _replay import live_or_replay
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    message_chunk_to_message,
)
from langchain_core.messages.ai import UsageMetadata

from langchain_kimi import ChatKimi

DEMO_SCRIPT = [
    "In one sentence: why does a kettle whistle?",
    "And why does the pitch rise as it heats up? Two sentences.",
]
DIM, RESET = "\033[2m", "\033[0m"
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class TurnPrinter:
    """Prints one streamed reply: reasoning (dimmed + spinner on a TTY), answer, usage."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = out.isatty()
        self.phase = "waiting"  # -> "reasoning" -> "answer"
        self.frame = 0
        if self.tty:
            self._write(f"{DIM}{SPINNER[0]} thinking…{RESET}")

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def reasoning(self, delta: str) -> None:
        if self.phase == "waiting":
            # Replace the "thinking…" placeholder line (TTY) or open the labelled block.
            self._write("\r\033[K" if self.tty else "[thinking] ")
            self.phase = "reasoning"
        if self.tty:
            self.frame = (self.frame + 1) % len(SPINNER)
            # The spinner glyph sits after the text; the backspace lets the next delta cover it.
            self._write(f"{DIM}{delta}{SPINNER[self.frame]}{RESET}\b")
        else:
            self._write(delta)

    def answer(self, delta: str) -> None:
        if self.phase != "answer":
            if self.phase == "reasoning":
                self._write(" \n" if self.tty else "\n")
            elif self.tty:
                self._write("\r\033[K")
            self._write("kimi> ")
            self.phase = "answer"
        self._write(delta)

    def done(self, usage: UsageMetadata | None) -> None:
        if self.phase != "answer":
            self.answer("")
        line = usage_line(usage)
        self._write(f"\n{DIM}{line}{RESET}\n\n" if self.tty else f"\n{line}\n\n")


def usage_line(usage: UsageMetadata | None) -> str:
    usage = usage or UsageMetadata(input_tokens=0, output_tokens=0, total_tokens=0)
    cached = usage.get("input_token_details", {}).get("cache_read", 0)
    reasoning = usage.get("output_token_details", {}).get("reasoning", 0)
    return (
        f"usage: input {usage['input_tokens']} (cached {cached}) · "
        f"output {usage['output_tokens']} (reasoning {reasoning})"
    )


def chat_turn(model: ChatKimi, history: list[BaseMessage], out: TextIO) -> AIMessage:
    printer = TurnPrinter(out)
    total: AIMessageChunk | None = None
    for chunk in model.stream(history):
        total = chunk if total is None else total + chunk
        if reasoning := chunk.additional_kwargs.get("reasoning_content"):
            printer.reasoning(reasoning)
        if chunk.text:
            printer.answer(chunk.text)
    assert total is not None, "the stream produced no chunks"
    printer.done(total.usage_metadata)
    # The aggregate as an AIMessage, unchanged: its reasoning is replayed as-is next turn.
    reply = message_chunk_to_message(total)
    assert isinstance(reply, AIMessage)
    return reply


def prompts() -> Iterator[str]:
    while True:
        try:
            question = input("you> ").strip()
        except EOFError:
            return
        if question.lower() in ("", "exit", "quit"):
            return
        yield question


def scripted(questions: Iterable[str]) -> Iterator[str]:
    for question in questions:
        print(f"you> {question}")
        yield question


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--script", nargs="+", metavar="QUESTION", help="non-interactive turns")
    args = parser.parse_args(argv)

    with live_or_replay("streaming_chat") as live:
        if not live and args.script and args.script != DEMO_SCRIPT:
            # The cassette holds answers to the demo questions only: say so, don't fail mid-way.
            parser.exit(
                2,
                "Replay mode plays only the recorded demo script:\n"
                + "".join(f"  {question}\n" for question in DEMO_SCRIPT)
                + "Set EVOLINK_API_KEY to ask your own questions live.\n",
            )
        # Replay can only answer the recorded questions, so it always runs the demo script.
        script = args.script or (None if live else DEMO_SCRIPT)
        model = ChatKimi(model="kimi-k3.1-pro", reasoning_effort="high")
        history: list[BaseMessage] = [SystemMessage("You are a friendly, concise assistant.")]
        for question in scripted(script) if script else prompts():
            history.append(HumanMessage(question))
            history.append(chat_turn(model, history, sys.stdout))


if __name__ == "__main__":
    main()
