"""Fixtures of the HTTP layer's tests (transport, retries, pool)."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    """Each test runs once on the sync path and once on the async one."""
    return str(request.param)
