"""What every request carries, checked once: the configuration, the headers, the encoded body.

Pure (no I/O); a bad configuration is refused at construction, before anything is sent.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

import httpx

from langchain_kimi._json import dumps_bytes


def check_max_retries(value: int) -> int:
    """The one rule for `max_retries` (ChatKimi's field and `TransportConfig` both apply it)."""
    if value < 0:
        raise ValueError("max_retries must be >= 0")
    return value


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


def validate_config(
    base_url: str,
    fallback_base_url: str | None,
    api_key: str,
    default_headers: Mapping[str, str],
    *,
    allow_insecure_http: bool,
    max_retries: int,
) -> None:
    """Refuse a bad configuration at construction, before any I/O."""
    check_base_url(base_url, allow_insecure_http=allow_insecure_http, label="base_url")
    if fallback_base_url is not None:
        check_base_url(
            fallback_base_url, allow_insecure_http=allow_insecure_http, label="fallback_base_url"
        )
    if any(name.lower() == "authorization" for name in default_headers):
        raise ValueError("default_headers may not set Authorization; pass the key as api_key")
    if any(ch in api_key for ch in "\r\n\0") or not api_key.isascii():
        raise ValueError("api_key contains characters that are not allowed in an HTTP header")
    check_max_retries(max_retries)


def check_base_url(url: str, *, allow_insecure_http: bool, label: str) -> None:
    """Refuse anything but https, except plain http to a loopback host or when allowed."""
    parsed = httpx.URL(url)
    if parsed.scheme not in ("https", "http") or not parsed.host:
        raise ValueError(f"{label} must be an absolute https:// URL, got {url!r}")
    if parsed.scheme == "http" and not allow_insecure_http and not _is_loopback(parsed.host):
        raise ValueError(
            f"{label} {url!r} uses plain http://, which would send the API key unencrypted. "
            "Use https://, or set allow_insecure_http=True if you really mean it."
        )


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def encode_body(body: dict[str, Any]) -> bytes:
    """Serialize once; the same bytes are resent on every retry and on the fallback."""
    return dumps_bytes(body)
