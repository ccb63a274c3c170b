"""`--record DIR`: every live exchange written as a kimiyaml cassette, credentials scrubbed.

Scrubbed as parsed (`langchain_kimi._secrets`): every string of a JSON body or stream event,
every header, every query value, the key found in any encoding; credential headers other than
`Authorization` (whose value becomes a placeholder) are dropped.

One cassette per test (or per open question), named after it. Responses carry
`x-cassette-provenance: recorded-live` and the file opens with a comment saying it was recorded,
so nothing mistakes it for an authored cassette. `python -m tools.authoring --diff DIR` compares
them structurally with the authored ones.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from http import HTTPStatus
from pathlib import Path
from typing import Any

from langchain_kimi._secrets import Scrubber
from tools import cassette_format
from tools.live.exchanges import Exchange, scrub_headers

RECORDED = "recorded-live"
RECORDED_COMMENT = (
    "# Recorded from the live service by `./dev live --record`, not authored. Responses carry\n"
    f"# the header {cassette_format.PROVENANCE_HEADER}: {RECORDED}. Credentials are scrubbed.\n"
)


def _headers(headers: dict[str, str], scrubber: Scrubber) -> dict[str, list[str]]:
    return {name: [scrubber.text(value)] for name, value in scrub_headers(headers).items()}


def _body(text: str, content_type: str, scrubber: Scrubber) -> str:
    """Cleaned as parsed: each JSON text (a body, a stream's `data:` line) as its JSON value, so
    an escaped key (`\\/`, `\\u0073`) the YAML writer would decode is found before it."""
    if "text/event-stream" not in content_type and not text.startswith(("event:", "data:")):
        return scrubber.json_text(text)
    lines = []
    for line in text.splitlines(keepends=True):
        field, colon, value = line.partition(":")
        if field == "data" and colon:
            data = value.rstrip("\r\n")
            line = f"data:{scrubber.json_text(data)}{value[len(data) :]}"
        lines.append(scrubber.text(line))
    return "".join(lines)


def to_interaction(exchange: Exchange, key: str) -> dict[str, Any]:
    scrubber = Scrubber.for_key(key)
    request_headers = _headers(exchange.request_headers, scrubber)
    response_headers = {
        **_headers(exchange.response_headers, scrubber),
        cassette_format.PROVENANCE_HEADER: [RECORDED],
    }
    try:
        reason = HTTPStatus(exchange.status).phrase
    except ValueError:
        reason = ""
    return {
        "request": {
            "method": exchange.method,
            "uri": scrubber.url(exchange.url),
            "headers": request_headers,
            "body": _body(exchange.request_body, "application/json", scrubber),
        },
        "response": {
            "status": {"code": exchange.status, "message": reason},
            "headers": response_headers,
            "body": {
                "string": _body(
                    exchange.response_body,
                    exchange.response_headers.get("content-type", ""),
                    scrubber,
                )
            },
        },
    }


def cassette_name(test: str) -> str:
    name = test.split("::", 1)[-1] if "::" in test else test
    return re.sub(r"[^A-Za-z0-9_.\-\[\]]+", "_", name.replace("::", ".")).strip("_") or "unnamed"


def write(exchanges: Iterable[Exchange], directory: Path, key: str) -> list[Path]:
    """Write one cassette per test; returns the files written."""
    grouped: dict[str, list[Exchange]] = defaultdict(list)
    for exchange in exchanges:
        if exchange.protocol is not None:
            grouped[cassette_name(exchange.test)].append(exchange)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, items in sorted(grouped.items()):
        cassette = {"version": 1, "interactions": [to_interaction(e, key) for e in items]}
        path = directory / f"{name}.yaml"
        path.write_text(RECORDED_COMMENT + cassette_format.serialize(cassette), encoding="utf-8")
        written.append(path)
    return written
