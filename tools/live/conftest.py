"""Live tests: deselected unless the live runner asks for them; real key and base URL kept.

`python -m tools.live` sets `KIMI_LIVE=1` (and `KIMI_LIVE_EXCHANGES`, the JSON-lines file every
HTTP exchange is teed into for the spec report). A plain `pytest` or `./dev test` never runs them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.live import exchanges

LIVE = os.environ.get("KIMI_LIVE") == "1"
_LOG = exchanges.ExchangeLog(
    Path(os.environ["KIMI_LIVE_EXCHANGES"]) if os.environ.get("KIMI_LIVE_EXCHANGES") else None
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if LIVE:
        return
    live = [item for item in items if item.get_closest_marker("live")]
    if live:
        config.hook.pytest_deselected(items=live)
        items[:] = [item for item in items if not item.get_closest_marker("live")]


# Read at import, before any fixture runs: the root conftest swaps in a placeholder key.
_CALLER_ENV = {name: os.environ.get(name) for name in ("EVOLINK_API_KEY", "EVOLINK_BASE_URL")}


@pytest.fixture(autouse=True)
def _placeholder_env() -> None:
    """Overrides the replay placeholder: live tests use the caller's key and base URL."""


@pytest.fixture(autouse=True)
def _caller_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # Also restores them should the root fixture be renamed (autouse runs outer conftest first).
    for name, value in _CALLER_ENV.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)


@pytest.fixture(scope="session", autouse=True)
def _capture_exchanges() -> Iterator[None]:
    if not LIVE:
        yield
        return
    undo = exchanges.install(_LOG)
    yield
    undo()


@pytest.fixture(autouse=True)
def _label_exchanges(request: pytest.FixtureRequest) -> None:
    _LOG.current_test = request.node.nodeid
