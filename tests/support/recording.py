"""Recording and replay settings shared by the root `conftest.py` and the cassette checks.

CI replays only (record mode ``none``); ``VCR_RECORD_MODE=rewrite EVOLINK_API_KEY=... pytest
--force-enable-socket`` re-records, and the scrub hooks below keep every key out of the files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import vcr.request  # type: ignore[import-untyped]

from langchain_kimi import ChatKimi

PLACEHOLDER_AUTH = "Bearer <EVOLINK_API_KEY>"

_SECRET_HEADERS = ("authorization", "x-api-key", "api-key", "proxy-authorization")
_KEYLIKE = re.compile(r"(sk-[A-Za-z0-9_\-]{16,}|Bearer\s+\S{16,})")

ReplayModel = Callable[..., ChatKimi]
"""The `replay_model` fixture: `replay_model(protocol, model="kimi-k3.1-pro", **fields)`."""


def record_mode() -> str:
    mode = os.environ.get("VCR_RECORD_MODE", "none")
    # pytest-recording maps "rewrite" to deleting `<name>.<serializer>`, which misses our
    # `.yaml` files; vcrpy's own "all" re-records every interaction and rewrites the file.
    return "all" if mode == "rewrite" else mode


def scrub_request(request: vcr.request.Request) -> vcr.request.Request:
    for name in list(request.headers):
        lowered = name.lower()
        if lowered == "authorization":
            request.headers[name] = PLACEHOLDER_AUTH
        elif lowered in _SECRET_HEADERS or _KEYLIKE.search(str(request.headers[name])):
            del request.headers[name]
    return request


def scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers", {})
    for name in list(headers):
        values = headers[name] if isinstance(headers[name], list) else [headers[name]]
        if name.lower() in _SECRET_HEADERS or any(_KEYLIKE.search(str(v)) for v in values):
            del headers[name]
    return response
