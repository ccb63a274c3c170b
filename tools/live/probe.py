"""Raw wire requests for the open questions: exactly the body given, captured like any other.

The questions ask about the wire, so they bypass ChatKimi (which would refuse or repair some of
these bodies before sending). Every exchange is logged with the test label `question:<id>`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from tools import cassette_format
from tools.live.checks import QUESTION_PREFIX
from tools.live.exchanges import Exchange, ExchangeLog, scrub_headers
from tools.live.loopback import CASSETTE_ROOT

PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
TIMEOUT = httpx.Timeout(300.0, connect=10.0)


def authored_request(cassette: str, index: int = 0) -> dict[str, Any]:
    """The request body of one authored interaction: live, the same request is sent again."""
    interaction = cassette_format.load_interactions(str(CASSETTE_ROOT / cassette))[index]
    body: dict[str, Any] = interaction["request"]["body"]["json"]
    return body


@dataclass
class Probe:
    base_url: str
    key: str
    log: ExchangeLog
    fallback_url: str | None = None
    question: str = ""
    costly: bool = False
    """Whether a question may send a large billed request (`./dev live --costly`)."""
    _client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=TIMEOUT))

    def post(
        self,
        protocol: str,
        body: dict[str, Any],
        *,
        key: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Exchange:
        headers = {
            **(headers or {}),
            "authorization": f"Bearer {key or self.key}",
            "content-type": "application/json",
        }
        url = self.base_url.rstrip("/") + PATHS[protocol]
        request = self._client.build_request("POST", url, json=body, headers=headers)
        exchange = Exchange(
            method="POST",
            url=url,
            request_headers=scrub_headers(request.headers),
            request_body=request.content.decode(),
            test=QUESTION_PREFIX + self.question,
            started=time.monotonic(),
        )
        try:
            response = self._client.send(request)
        except httpx.HTTPError as exc:
            exchange.response_body = f"{type(exc).__name__}: {exc}"
            return exchange
        exchange.status = response.status_code
        exchange.response_headers = scrub_headers(response.headers)
        exchange.response_body = response.text
        exchange.elapsed_s = time.monotonic() - exchange.started
        self.log.add(exchange)
        return exchange

    def get(self, url: str) -> tuple[int | None, str]:
        """Status of a plain GET (any HTTP answer means the host is reachable) or the error."""
        try:
            return self._client.get(url, timeout=15.0).status_code, ""
        except httpx.HTTPError as exc:
            return None, type(exc).__name__

    def close(self) -> None:
        self._client.close()
