"""Hand-written request bodies for the standard integration suite on /v1/messages."""

from __future__ import annotations

from typing import Any

from tests.authoring._kit import Reply

Table = dict[str, list[tuple[dict[str, Any], Reply]]]


def table() -> Table:
    return {}
