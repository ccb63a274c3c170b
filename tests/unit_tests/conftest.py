"""Fixtures shared by more than one layer's unit tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.chat_server import serving


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """A loopback Chat Completions server (`tests/support/chat_server.py`) for the module."""
    with serving() as url:
        yield url
