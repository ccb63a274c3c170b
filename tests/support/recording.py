"""Recording and replay settings shared by the root `conftest.py` and the cassette checks.

CI replays only (record mode ``none``); ``VCR_RECORD_MODE=rewrite EVOLINK_API_KEY=... pytest
--force-enable-socket`` re-records, and the scrub hooks below keep every key out of the files
(the shared scrubber of `langchain_kimi/_secrets.py`: every credential header, the key in any
encoding in a response body).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import cache
from typing import Any

import vcr.request  # type: ignore[import-untyped]

from langchain_kimi import ChatKimi
from langchain_kimi._secrets import Scrubber, is_credential_name

PLACEHOLDER_AUTH = "Bearer <EVOLINK_API_KEY>"

_KEYLIKE = re.compile(r"(sk-[A-Za-z0-9_\-]{16,}|Bearer\s+\S{16,})")

ReplayModel = Callable[..., ChatKimi]
"""The `replay_model` fixture: `replay_model(protocol, model="kimi-k3.1-pro", **fields)`."""


def record_mode() -> str:
    mode = os.environ.get("VCR_RECORD_MODE", "none")
    # pytest-recording maps "rewrite" to deleting `<name>.<serializer>`, which misses our
    # `.yaml` files; vcrpy's own "all" re-records every interaction and rewrites the file.
    return "all" if mode == "rewrite" else mode


def _secrets() -> Scrubber:
    return _scrubber(os.environ.get("EVOLINK_API_KEY", ""))


@cache
def _scrubber(key: str) -> Scrubber:
    return Scrubber.for_key(key)


def _secret_header(name: str, values: list[Any]) -> bool:
    """A credential by its name (`x-api-key`, `Cookie`, `X-Proxy-Token`, ...) or its value."""
    secrets = _secrets()
    return is_credential_name(name) or any(
        _KEYLIKE.search(str(v)) or secrets.text(str(v)) != str(v) for v in values
    )


def scrub_request(request: vcr.request.Request) -> vcr.request.Request:
    """Headers only (vcrpy also runs this before matching, so the body stays as sent)."""
    for name in list(request.headers):
        if name.lower() == "authorization":
            request.headers[name] = PLACEHOLDER_AUTH
        elif _secret_header(name, [request.headers[name]]):
            del request.headers[name]
    return request


def scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    """Credential headers dropped; the body cleaned as parsed JSON (a key the gateway echoes,
    in any encoding), or as text."""
    headers = response.get("headers", {})
    for name in list(headers):
        values = headers[name] if isinstance(headers[name], list) else [headers[name]]
        if _secret_header(name, values):
            del headers[name]
    body = response.get("body")
    raw = body.get("string") if isinstance(body, dict) else None
    if isinstance(raw, bytes | str):
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError:
            return response  # compressed or binary: no text to echo a key in
        cleaned = _secrets().json_text(text)
        if cleaned != text:
            body["string"] = cleaned.encode("utf-8") if isinstance(raw, bytes) else cleaned
    return response
