"""Live or replay, shared by the examples.

With `EVOLINK_API_KEY` set, an example talks to the live Kimi service. Without it, it replays the
responses stored in `cassettes/examples/<name>.yaml` (authored from the published spec) through
vcrpy in record mode "none": nothing reaches the network, and a request that differs from the
stored one (method, host, path or JSON body) fails loudly instead of going out.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASSETTE_DIR = ROOT / "cassettes" / "examples"
PLACEHOLDER_KEY = "replay-placeholder-not-a-key"

if str(ROOT) not in sys.path:  # `tools.cassette_format` lives under the repo root
    sys.path.insert(0, str(ROOT))


@contextlib.contextmanager
def live_or_replay(name: str) -> Iterator[bool]:
    """Run the block live (yields True) or against `cassettes/examples/<name>.yaml` (False)."""
    if os.environ.get("EVOLINK_API_KEY"):
        print("EVOLINK_API_KEY is set: talking to the live Kimi service.\n")
        yield True
        return

    try:
        # vcrpy + the readable "kimiyaml" format
        from tools.cassette_format import replay_vcr

        recorder = replay_vcr(record_mode="none")
    except ImportError:
        sys.exit("Set EVOLINK_API_KEY, or `pip install vcrpy pyyaml` to replay the cassettes.")

    path = CASSETTE_DIR / f"{name}.yaml"
    print(
        f"No EVOLINK_API_KEY set: replaying authored responses from "
        f"{path.relative_to(ROOT)} (no network).\n"
    )
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
