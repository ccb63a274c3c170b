"""The settings a model is built with, checked once: base URLs, headers, key, timeouts, retries.

Pure (no I/O). A bad configuration is refused at construction with a `ValueError` that says what to
change, never as a connection error at the first call or as a request to the wrong place: the
protocol path (`/v1/messages`, `/v1/chat/completions`) is appended to the base URL as text, so a
query string, a fragment or a trailing `/v1` would all change the destination, and `user:pw@`
makes httpx send Basic auth instead of the key.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Mapping

import httpx

from langchain_kimi._secrets import Scrubber, split_userinfo

# RFC 9110 §5.6.2: a field name is a `token`.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# RFC 9110 §5.5: no control characters in a field value except horizontal tab (CR / LF would
# split the header and let the value inject others).
_VALUE_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_URL_FORBIDDEN = re.compile(r"[\x00-\x20\x7f]")

_USERINFO_REFUSED = (
    "{label} must not contain user:password@ (httpx would send Basic auth instead of the API "
    "key); pass the key as api_key and other headers via default_headers"
)
DEFAULT_TIMEOUT = httpx.Timeout(900.0, connect=10.0)
"""The one timeout default (a model's requests, and the pooled clients' own setting). Long
reasoning replies at effort `max` can take many minutes; every wait is still bounded."""

MAX_TIMEOUT_SECONDS = 86_400.0
"""The longest wait a `timeout` (or any part of an `httpx.Timeout`) may name: one day, far more
than any reply takes, and far below where the waits under httpx give out (a socket or thread
wait past about 9.2e9 s raises `OverflowError`; NaN and negative values a `ValueError` deep in
`socket.py`). `None` parts are no limit for that wait, as the caller asked."""

_VERSION_SUFFIX = "/v1"
"""ChatOpenAI-style base URLs end in `/v1`; ChatKimi appends `/v1/...` itself."""


def check_max_retries(value: int) -> int:
    """The one rule for `max_retries` (ChatKimi's field and `TransportConfig` both apply it)."""
    if value < 0:
        raise ValueError("max_retries must be >= 0")
    return value


def check_max_builtin_rounds(value: object) -> int:
    """The one rule for `max_builtin_rounds`: the field's, and every call plan's (an assignment
    or a `model_copy(update=...)` skips the field's validation)."""
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"max_builtin_rounds must be an integer >= 1, got {value!r:.60}"
        raise ValueError(msg)
    if value < 1:
        msg = "max_builtin_rounds must be >= 1"
        raise ValueError(msg)
    return value


def check_rate_limit_timeout(value: float) -> float:
    """`rate_limit_timeout` is a finite number of seconds, 0 or more (every wait has an end)."""
    if not math.isfinite(value) or value < 0:
        raise ValueError(
            f"rate_limit_timeout must be a finite number of seconds >= 0, got {value!r}"
        )
    return float(value)


def transport_timeout(value: float | httpx.Timeout | None) -> httpx.Timeout:
    """The timeout a model's requests carry: the default for None, a number for every wait, or
    the `httpx.Timeout` given. Each number must be finite, > 0 and at most
    `MAX_TIMEOUT_SECONDS`; otherwise a `ValueError` naming the part, before any I/O."""
    if value is None:
        return DEFAULT_TIMEOUT
    if not isinstance(value, httpx.Timeout):
        _check_seconds("timeout", value)
        return httpx.Timeout(value)
    for part, seconds in value.as_dict().items():
        if seconds is not None:
            _check_seconds(f"timeout.{part}", seconds)
    return value


def _check_seconds(label: str, seconds: object) -> None:
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        expected = "an httpx.Timeout" if label == "timeout" else "None"
        msg = f"{label} must be a number of seconds or {expected}, got {seconds!r}"
        raise ValueError(msg)
    if not 0 < seconds <= MAX_TIMEOUT_SECONDS:  # False for NaN too
        msg = (
            f"{label} must be a finite number of seconds > 0 and at most "
            f"{MAX_TIMEOUT_SECONDS:,.0f} s (one day), got {float(seconds)!r}"
        )
        if label != "timeout":
            msg += "; None means no limit for that wait"
        raise ValueError(msg)


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
    check_connection_settings(
        base_url, fallback_base_url, default_headers, allow_insecure_http=allow_insecure_http
    )
    if any(ch in api_key for ch in "\r\n\0") or not api_key.isascii():
        raise ValueError("api_key contains characters that are not allowed in an HTTP header")
    if api_key != api_key.strip():
        # RFC 9110 §5.5: a field value has no leading or trailing whitespace (h11 refuses it).
        raise ValueError(
            "api_key has surrounding whitespace, which an HTTP header cannot carry: remove it "
            "(check EVOLINK_API_KEY)"
        )
    check_max_retries(max_retries)


def check_connection_settings(
    base_url: str,
    fallback_base_url: str | None,
    default_headers: Mapping[str, str],
    *,
    allow_insecure_http: bool,
) -> tuple[str, str | None]:
    """The one check of where requests go and what they carry: the base URLs (returned
    normalized) and the extra headers. `ValueError` naming the setting otherwise."""
    insecure = allow_insecure_http
    base = normalize_base_url(base_url, label="base_url", allow_insecure_http=insecure)
    fallback = None
    if fallback_base_url is not None:
        fallback = normalize_base_url(
            fallback_base_url, label="fallback_base_url", allow_insecure_http=insecure
        )
    check_default_headers(default_headers)
    return base, fallback


def normalize_base_url(url: object, *, label: str, allow_insecure_http: bool) -> str:
    """The host root requests are sent to: checked, without trailing `/` or `/v1`.

    Plain `http://` is allowed to loopback hosts (`localhost`, `127.0.0.0/8`, `::1`: local
    proxies and test servers never leave the machine) and, with `allow_insecure_http=True`,
    anywhere.
    """
    if not isinstance(url, str):
        raise ValueError(f"{label} must be a string, got {type(url).__name__}")
    # What the messages show: a refused URL may carry a credential (`user:pw@`, `?api_key=`).
    shown = repr(Scrubber.for_key(None, url).url(url))
    if split_userinfo(url)[0] is not None:
        raise ValueError(_USERINFO_REFUSED.format(label=label))
    if _URL_FORBIDDEN.search(url):
        raise ValueError(f"{label} {shown} contains whitespace or control characters")
    if "?" in url or "#" in url:
        raise ValueError(
            f"{label} {shown} has a query string or fragment: the protocol path is appended to "
            "the base URL, so it would end up inside them. Use the bare host root, e.g. "
            "'https://direct.evolink.ai'"
        )
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ValueError(f"{label} {shown} is not a valid URL: {exc}") from None
    if parsed.scheme not in ("https", "http") or not parsed.host:
        raise ValueError(f"{label} must be an absolute https:// URL, got {shown}")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise ValueError(f"{label} {shown} is not a valid URL: port out of range")
    if parsed.userinfo:
        raise ValueError(_USERINFO_REFUSED.format(label=label))
    if parsed.scheme == "http" and not allow_insecure_http and not _is_loopback(parsed.host):
        raise ValueError(
            f"{label} {shown} uses plain http://, which would send the API key unencrypted. "
            "Use https://, or set allow_insecure_http=True if you really mean it."
        )
    root = url.rstrip("/")
    if root.endswith(_VERSION_SUFFIX):
        root = root.removesuffix(_VERSION_SUFFIX).rstrip("/")
    return root


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_default_headers(headers: Mapping[str, str]) -> None:
    """Refuse header names that are not tokens and values with control characters."""
    for name, value in headers.items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise ValueError(f"default_headers: {name!r} is not a valid HTTP header name")
        if not isinstance(value, str) or _VALUE_CONTROL.search(value):
            raise ValueError(
                f"default_headers[{name!r}] contains CR, LF or another control character "
                "(not allowed in an HTTP header value)"
            )
        if not value.isascii():
            # httpx encodes header values as ASCII (RFC 9110 §5.5 calls other bytes obsolete).
            raise ValueError(
                f"default_headers[{name!r}] holds non-ASCII characters, which httpx cannot send "
                "in a header: percent-encode the value (or use ASCII only)"
            )
        if name.lower() == "authorization":
            raise ValueError("default_headers may not set Authorization; pass the key as api_key")
