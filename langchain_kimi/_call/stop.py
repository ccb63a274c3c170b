"""Client-side `stop` emulation (protocol-neutral).

The Chat Completions reference lists no `stop` field and anthropic `kimi-k3` has no
`stop_sequences`, so ChatKimi truncates the answer text at the earliest occurrence of any stop
string, the match excluded (as native stop sequences behave). Only answer text is filtered,
never reasoning.
"""

from __future__ import annotations

from collections.abc import Iterable


def _clean(stops: Iterable[str]) -> tuple[str, ...]:
    return tuple(s for s in stops if s)


def _earliest(text: str, stops: tuple[str, ...]) -> tuple[int, str] | None:
    """(index, stop) of the earliest match; at equal index the longest stop wins."""
    best: tuple[int, str] | None = None
    for stop in stops:
        index = text.find(stop)
        if index < 0:
            continue
        if best is None or index < best[0] or (index == best[0] and len(stop) > len(best[1])):
            best = (index, stop)
    return best


def truncate_at_stop(text: str, stops: Iterable[str]) -> tuple[str, str | None]:
    """`text` cut before the earliest stop string, and the stop that matched (or None)."""
    found = _earliest(text, _clean(stops))
    if found is None:
        return text, None
    return text[: found[0]], found[1]


class StopStreamFilter:
    """Streaming form of `truncate_at_stop`: feed answer-text deltas, emit what is safe.

    A tail that could still begin a stop string (at most `max(len(stop)) - 1` characters) is
    held back until later deltas decide it. A complete match is acted on only when no earlier
    (or same-position, longer) candidate is still open, so the cut is exactly where
    `truncate_at_stop` would cut the whole text. After a match everything else is dropped.
    """

    def __init__(self, stops: Iterable[str]) -> None:
        self._stops = _clean(stops)
        self._held = ""
        self.stopped = False
        self.matched: str | None = None

    def push(self, delta: str) -> str:
        """The text that can be emitted now."""
        if self.stopped:
            return ""
        if not self._stops:
            return delta
        buffer = self._held + delta
        found = _earliest(buffer, self._stops)
        open_start = len(buffer) - self._open_prefix_length(buffer)
        if found is not None and found[0] < open_start:
            self.stopped, self.matched, self._held = True, found[1], ""
            return buffer[: found[0]]
        self._held = buffer[open_start:]
        return buffer[:open_start]

    def flush(self) -> str:
        """End of the answer: decide the held-back tail."""
        held, self._held = self._held, ""
        if self.stopped:
            return ""
        text, matched = truncate_at_stop(held, self._stops)
        if matched is not None:
            self.stopped, self.matched = True, matched
        return text

    def _open_prefix_length(self, buffer: str) -> int:
        """Length of the longest suffix of `buffer` that is a proper prefix of a stop string."""
        longest = 0
        for stop in self._stops:
            for size in range(min(len(stop) - 1, len(buffer)), longest, -1):
                if buffer.endswith(stop[:size]):
                    longest = size
                    break
        return longest
