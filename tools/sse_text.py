"""A tiny text/event-stream parser for tests: feeds bytes in pieces, like network reads.

The real parsing is `langchain_kimi._http.sse`'s (in the transport); decoders receive (event, data)
pairs. Tests use this to replay recorded or authored SSE bodies split at arbitrary byte
boundaries. Lines are decoded only when complete, so a cut inside a multi-byte character is
harmless.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence


def split_at(raw: bytes, cuts: Sequence[int]) -> list[bytes]:
    """`raw` cut at the given byte offsets (out-of-range offsets ignored)."""
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(raw)), len(raw)]
    return [raw[start:end] for start, end in itertools.pairwise(bounds)]


def parse_sse(pieces: Iterable[bytes], *, default_event: str = "") -> list[tuple[str, str]]:
    """(event name, data) pairs; an event without an `event:` line gets `default_event`."""
    events: list[tuple[str, str]] = []
    buffer = b""
    event, data = "", list[str]()
    for piece in pieces:
        buffer += piece
        while b"\n" in buffer:
            raw_line, buffer = buffer.split(b"\n", 1)
            line = raw_line.rstrip(b"\r").decode("utf-8")
            if not line:
                if data:
                    events.append((event or default_event, "\n".join(data)))
                event, data = "", []
            elif line.startswith(":"):
                continue
            else:
                field, _, value = line.partition(":")
                value = value.removeprefix(" ")
                if field == "event":
                    event = value
                elif field == "data":
                    data.append(value)
    if data:
        events.append((event or default_event, "\n".join(data)))
    return events
