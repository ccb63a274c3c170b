"""`--record DIR`: every live exchange written as a kimiyaml cassette, credentials scrubbed.

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

from tests.support import cassette_format
from tools.live.exchanges import Exchange, scrub_headers

RECORDED = "recorded-live"
RECORDED_COMMENT = (
    "# Recorded from the live service by `./dev live --record`, not authored. Responses carry\n"
    f"# the header {cassette_format.PROVENANCE_HEADER}: {RECORDED}. Credentials are scrubbed.\n"
)
_KEYLIKE = re.compile(r"sk-[A-Za-z0-9_\-]{16,}")


def _scrub_text(text: str, key: str) -> str:
    if key:
        text = text.replace(key, "<EVOLINK_API_KEY>")
    return _KEYLIKE.sub("<EVOLINK_API_KEY>", text)


def _headers(headers: dict[str, str], key: str) -> dict[str, list[str]]:
    return {name: [_scrub_text(value, key)] for name, value in scrub_headers(headers).items()}


def to_interaction(exchange: Exchange, key: str) -> dict[str, Any]:
    response_headers = {
        **_headers(exchange.response_headers, key),
        cassette_format.PROVENANCE_HEADER: [RECORDED],
    }
    try:
        reason = HTTPStatus(exchange.status).phrase
    except ValueError:
        reason = ""
    return {
        "request": {
            "method": exchange.method,
            "uri": _scrub_text(exchange.url, key),
            "headers": _headers(exchange.request_headers, key),
            "body": _scrub_text(exchange.request_body, key),
        },
        "response": {
            "status": {"code": exchange.status, "message": reason},
            "headers": response_headers,
            "body": {"string": _scrub_text(exchange.response_body, key)},
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
