"""What every request carries: the headers, the encoded body, the host of a base URL.

The settings they are built from were checked at construction (`langchain_kimi._settings`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import httpx

from langchain_kimi._json import dumps_bytes


def build_headers(
    *,
    api_key: str,
    user_agent: str,
    default_headers: Mapping[str, str],
    stream: bool,
) -> httpx.Headers:
    # Case-insensitive: a caller's `user-agent` or `accept-encoding` replaces ours, never doubles.
    headers = httpx.Headers({"User-Agent": user_agent})
    headers.update(default_headers)
    headers["Authorization"] = f"Bearer {api_key}"
    headers["Content-Type"] = "application/json"
    headers["Accept"] = "text/event-stream" if stream else "application/json"
    return headers


@functools.lru_cache(maxsize=16)
def host(base_url: str) -> str:
    # Parsing a URL costs ~60 µs; there are only one or two bases per model.
    return httpx.URL(base_url).host


def encode_body(body: dict[str, Any]) -> bytes:
    """Serialize once; the same bytes are resent on every retry and on the fallback."""
    return dumps_bytes(body)
