"""Live or replay, shared by the examples.

With `EVOLINK_API_KEY` set, an example talks to the live Kimi service. Without it, it replays the
responses stored in `cassettes/examples/<name>.yaml` (authored from the published spec) through
vcrpy in record mode "none": nothing reaches the network, and a request that differs from the
stored one (method, host, path or JSON body) fails loudly instead of going out.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASSETTE_DIR = ROOT / "cassettes" / "examples"
PLACEHOLDER_KEY = "replay-placeholder-not-a-key"

if str(ROOT) not in sys.path:  # `tests.cassette_format` lives at the repo root
    sys.path.insert(0, str(ROOT))


def _json_body(r1: Any, r2: Any) -> None:
    """vcr matcher: request bodies equal as parsed JSON (key order and spacing ignored)."""

    def parse(body: Any) -> Any:
        if isinstance(body, bytes):
            body = body.decode("utf-8")
        return json.loads(body) if body else None

    left, right = parse(r1.body), parse(r2.body)
    assert left == right, f"request body differs from the cassette:\n{left!r}\n!=\n{right!r}"


@contextlib.contextmanager
def live_or_replay(name: str) -> Iterator[bool]:
    """Run the block live (yields True) or against `cassettes/examples/<name>.yaml` (False)."""
    if os.environ.get("EVOLINK_API_KEY"):
        print("EVOLINK_API_KEY is set: talking to the live Kimi service.\n")
        yield True
        return

    try:
        import vcr  # type: ignore[import-untyped]
    except ImportError:
        sys.exit("Set EVOLINK_API_KEY, or `pip install vcrpy pyyaml` to replay the cassettes.")
    from tests import cassette_format

    path = CASSETTE_DIR / f"{name}.yaml"
    print(
        f"No EVOLINK_API_KEY set: replaying authored responses from "
        f"{path.relative_to(ROOT)} (no network).\n"
    )
    recorder = vcr.VCR(
        record_mode="none",
        serializer="kimiyaml",
        match_on=["method", "scheme", "host", "port", "path", "json_body"],
    )
    recorder.register_serializer("kimiyaml", cassette_format)
    recorder.register_matcher("json_body", _json_body)
    saved = {k: os.environ.get(k) for k in ("EVOLINK_API_KEY", "EVOLINK_BASE_URL")}
    # The cassettes were written for the default base URL; the key is a placeholder.
    os.environ["EVOLINK_API_KEY"] = PLACEHOLDER_KEY
    os.environ.pop("EVOLINK_BASE_URL", None)
    try:
        with recorder.use_cassette(str(path)):
            yield False
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
