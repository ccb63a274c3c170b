"""`python -m langchain_kimi doctor`: why does ChatKimi not work on this machine?

Checks, in order: the key is set (it is never printed) and has no surrounding whitespace; the
base URL ChatKimi would use answers
(DNS, TLS, latency), and so does the documented fallback when it is in play (the default base
URL; an unreachable fallback is only a warning while the primary answers); then the smallest
call per model x protocol asked for, reporting the typed error and its request id on failure,
time to first token, output tokens per second, whether reasoning came back, and usage.

Nothing it prints holds a credential: every text passes the shared scrubber (the key in any
encoding, echoed in an error body or not; `user:password@` and `?api_key=`-style parts of
`EVOLINK_BASE_URL`), and the reachability check never sends them.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import httpx
from pydantic import ValidationError

from langchain_kimi._errors import KimiError
from langchain_kimi._request.profiles import KNOWN_MODELS, PROTOCOLS, Protocol, capabilities
from langchain_kimi._secrets import Scrubber
from langchain_kimi._settings import normalize_base_url
from langchain_kimi.chat_models import DEFAULT_BASE_URL, DOCUMENTED_FALLBACK_URL, ChatKimi

PROMPT = "Reply with OK."
REACH_TIMEOUT_S = 10.0
CALL_TIMEOUT = httpx.Timeout(120.0, connect=10.0)
MAX_TOKENS = 1024
"""Reasoning is always on: a tighter cap could end the reply before the answer starts."""
PADDED_KEY = (
    "EVOLINK_API_KEY has surrounding whitespace: remove it (ChatKimi refuses such a key; an HTTP "
    "header cannot carry it). The calls below used the key without it."
)


@dataclass
class Reach:
    role: str
    url: str
    dns: str
    tls: str
    latency_ms: float | None
    ok: bool
    error: str = ""


@dataclass
class Call:
    model: str
    protocol: str
    ok: bool
    error: str = ""
    request_id: str | None = None
    first_token_s: float | None = None
    tokens_per_s: float | None = None
    reasoning: bool = False
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass
class Diagnosis:
    key_set: bool
    base_url: str
    reach: list[Reach]
    calls: list[Call]
    warnings: list[str]
    failures: list[str]

    @property
    def ok(self) -> bool:
        return not self.failures

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


# --------------------------------------------------------------------------- reachability


def _resolve(host: str, port: int) -> str:
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
    except OSError:
        pass
    else:
        return "n/a (IP address)"
    # getaddrinfo has no timeout of its own: wait for it on a worker thread.
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        infos = pool.submit(socket.getaddrinfo, host, port).result(timeout=REACH_TIMEOUT_S)
    except FutureTimeout:
        raise OSError(f"DNS lookup of {host} timed out") from None
    finally:
        pool.shutdown(wait=False)
    return ", ".join(sorted({str(info[4][0]) for info in infos}))


def check_reach(role: str, url: str) -> Reach:
    """Any HTTP answer counts: this is about DNS, TLS and the network, not about the API. The
    URL is reached without its `user:password@`, query and fragment: no credential is sent."""
    url = without_credentials(url)
    parsed = httpx.URL(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        dns = _resolve(parsed.host, port)
    except OSError as exc:
        return Reach(role, url, "failed", "-", None, ok=False, error=str(exc))
    started = time.monotonic()
    try:
        with httpx.Client(timeout=REACH_TIMEOUT_S) as client, client.stream("GET", url) as reply:
            latency = (time.monotonic() - started) * 1000
            tls = _tls_version(reply) if parsed.scheme == "https" else "none (plain http)"
    except httpx.HTTPError as exc:
        tls = "failed" if "ssl" in str(exc).lower() or "certificate" in str(exc).lower() else "-"
        return Reach(role, url, dns, tls, None, ok=False, error=f"{type(exc).__name__}: {exc}")
    return Reach(role, url, dns, tls, round(latency, 1), ok=True)


def _tls_version(reply: httpx.Response) -> str:
    stream = reply.extensions.get("network_stream")
    ssl_object = stream.get_extra_info("ssl_object") if stream is not None else None
    return str(ssl_object.version()) if ssl_object is not None else "ok"


# --------------------------------------------------------------------------- the smallest call


def cheapest_effort(model: str, protocol: Protocol) -> str | None:
    """`low` where the model accepts it; otherwise the service default (kimi-k3: only `max`)."""
    return "low" if "low" in capabilities(model, protocol).efforts else None


def smallest_call(
    model: str, protocol: Protocol, base_url: str, *, api_key: str | None = None
) -> Call:
    """`api_key` None: ChatKimi reads `EVOLINK_API_KEY` itself."""
    effort = cheapest_effort(model, protocol)
    key: dict[str, Any] = {} if api_key is None else {"api_key": api_key}
    try:
        chat = ChatKimi(
            **key,
            model=model,
            protocol=protocol,
            base_url=base_url,
            reasoning_effort=effort,
            max_tokens=MAX_TOKENS,
            max_retries=0,
            rate_limit_timeout=0,  # one probe: a refusal is reported, not waited out
            timeout=CALL_TIMEOUT,
        )
        return _timed_stream(chat, model, protocol)
    except KimiError as exc:
        return Call(model, protocol, ok=False, error=_describe(exc), request_id=exc.request_id)
    except ValueError as exc:  # configuration refused before any network call
        return Call(model, protocol, ok=False, error=_refusal(exc))


def _refusal(exc: ValueError) -> str:
    """The constructor's own `ValueError` on one line, not pydantic's wrapper around it."""
    if isinstance(exc, ValidationError):
        causes = [error.get("ctx", {}).get("error") for error in exc.errors()]
        exc = next((c for c in causes if isinstance(c, ValueError)), exc)
    return f"{type(exc).__name__}: {exc}"


def _describe(exc: KimiError) -> str:
    status = f" ({exc.status_code})" if exc.status_code else ""
    return f"{type(exc).__name__}{status}: {exc.message}"


def _timed_stream(chat: ChatKimi, model: str, protocol: str) -> Call:
    started = time.monotonic()
    first: float | None = None
    total: Any = None
    try:
        for chunk in chat.stream(PROMPT):
            if first is None and (
                chunk.content or chunk.additional_kwargs.get("reasoning_content")
            ):
                first = time.monotonic()
            total = chunk if total is None else total + chunk
    finally:
        chat.close()
    ended = time.monotonic()
    usage = dict(total.usage_metadata or {}) if total is not None else {}
    output = usage.get("output_tokens") or 0
    span = ended - first if first is not None else 0.0
    return Call(
        model,
        protocol,
        ok=True,
        first_token_s=round(first - started, 3) if first is not None else None,
        tokens_per_s=round(output / span, 1) if span > 0 and output else None,
        reasoning=bool(total is not None and total.additional_kwargs.get("reasoning_content")),
        usage=usage,
    )


# --------------------------------------------------------------------------- the whole check


def base_url_in_use() -> str:
    """The base URL ChatKimi would use: `EVOLINK_BASE_URL` (a trailing `/v1` dropped) or the
    default. A URL ChatKimi refuses is returned as given: the calls then report the refusal."""
    given = os.environ.get("EVOLINK_BASE_URL") or DEFAULT_BASE_URL
    try:
        return normalize_base_url(given, label="EVOLINK_BASE_URL", allow_insecure_http=False)
    except ValueError:
        return given


def without_credentials(url: str) -> str:
    """`url` without `user:password@`, query and fragment (a URL ChatKimi refuses anyway)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def diagnose(models: Sequence[str], protocols: Sequence[Protocol]) -> Diagnosis:
    """The whole check; every text of the result is scrubbed of the key and the URL's secrets."""
    environment_key = os.environ.get("EVOLINK_API_KEY", "")
    key = environment_key.strip()
    key_set = bool(key)
    secrets = Scrubber.for_key(environment_key, os.environ.get("EVOLINK_BASE_URL"))
    base_url = base_url_in_use()
    reach = [check_reach("primary", base_url)]
    if base_url.rstrip("/") == DEFAULT_BASE_URL:
        reach.append(check_reach("fallback", DOCUMENTED_FALLBACK_URL))
    warnings: list[str] = []
    failures: list[str] = []
    if not key_set:
        failures.append("EVOLINK_API_KEY is not set")
    elif key != environment_key:
        failures.append(PADDED_KEY)
    for item in reach:
        if item.ok:
            continue
        problem = f"{item.role} {item.url} unreachable: {item.error}"
        (warnings if item.role == "fallback" and reach[0].ok else failures).append(problem)
    calls = []
    if key_set:
        api_key = key if key != environment_key else None
        calls = [smallest_call(m, p, base_url, api_key=api_key) for m in models for p in protocols]
        failures += [f"{c.model} over {c.protocol}: {c.error}" for c in calls if not c.ok]
    diagnosis = Diagnosis(key_set, secrets.url(base_url), reach, calls, warnings, failures)
    cleaned: Diagnosis = secrets.value(diagnosis)
    return cleaned


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table; `None` cells print as `-`."""
    cells = [list(map(str, headers)), *[[("-" if c is None else str(c)) for c in r] for r in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _usage_text(usage: dict[str, Any]) -> str:
    if not usage:
        return "-"
    return f"in {usage.get('input_tokens', '?')} / out {usage.get('output_tokens', '?')}"


def render(diagnosis: Diagnosis) -> str:
    key = "set" if diagnosis.key_set else "NOT SET (export EVOLINK_API_KEY=...)"
    parts = [f"EVOLINK_API_KEY: {key}", f"base URL: {diagnosis.base_url}", ""]
    reach_rows = [
        (r.role, r.url, r.dns, r.tls, r.latency_ms, "ok" if r.ok else r.error)
        for r in diagnosis.reach
    ]
    parts.append(format_table(("role", "url", "dns", "tls", "latency ms", "result"), reach_rows))
    if diagnosis.calls:
        call_rows = [
            (
                c.model,
                c.protocol,
                "OK" if c.ok else c.error,
                c.request_id,
                c.first_token_s,
                c.tokens_per_s,
                "yes" if c.reasoning else "no",
                _usage_text(c.usage),
            )
            for c in diagnosis.calls
        ]
        headers = ("model", "protocol", "result", "request id", "first token s", "out tok/s")
        parts += ["", format_table((*headers, "reasoning", "usage"), call_rows)]
    parts += [""] + [f"warning: {w}" for w in diagnosis.warnings]
    parts += [f"FAILED: {f}" for f in diagnosis.failures]
    parts.append("OK: ChatKimi is ready" if diagnosis.ok else "doctor found problems (exit 1)")
    return "\n".join(p for p in parts if p is not None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m langchain_kimi doctor", description=__doc__)
    parser.add_argument("--model", action="append", choices=KNOWN_MODELS, help="repeatable")
    parser.add_argument("--protocol", action="append", choices=PROTOCOLS, help="repeatable")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    protocols = cast(list[Protocol], args.protocol or ["openai"])
    diagnosis = diagnose(args.model or [KNOWN_MODELS[0]], protocols)
    print(json.dumps(diagnosis.as_json(), indent=2) if args.json else render(diagnosis))
    return 0 if diagnosis.ok else 1
