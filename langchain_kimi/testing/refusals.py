"""What the gateway answers instead of a reply: 404 for an unknown path, 401 without a Bearer
key (or with another than the one a keyed gateway accepts), 400 with every reason the documents
(and the assumptions held strict) give."""

from __future__ import annotations

from typing import Any

import httpx

from langchain_kimi.testing import documents, prose, rules
from langchain_kimi.testing.script import Error

PATHS = {"/v1/messages": "anthropic", "/v1/chat/completions": "openai"}


def protocol_of(path: str) -> str | None:
    """The protocol of a documented endpoint path, also under a base-URL path prefix (a gateway
    behind a proxy, `base_url="https://host/kimi"`); None for any other path (a doubled `/v1`
    included: no documented URL has one)."""
    for endpoint, protocol in PATHS.items():
        prefix = path.removesuffix(endpoint)
        if path.endswith(endpoint) and not prefix.endswith("/v1"):
            return protocol
    return None


def refusal(
    request: httpx.Request,
    body: Any,
    protocol: str,
    issued: rules.Issued,
    judged: rules.Judged,
    key: str | None = None,
) -> Error | None:
    """The error the service answers `request` with, or None when it is served."""
    path = request.url.path
    if protocol_of(path) is None:
        return Error(404, f"no route for POST {path}", "not_found_error", None, None)
    scheme, _, token = request.headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        # 000 / 001 / 004 `bearerAuth`: "Authorization: Bearer YOUR_API_KEY".
        return Error(401, "missing API key", "authentication_error", None, None)
    if key is not None and token.strip() != key:
        # 000 / 004 `Unauthorized`: "La API Key no existe o no es válida" (the key does not
        # exist or is not valid).
        return Error(401, "invalid API key", "authentication_error", "invalid_api_key", None)
    found = documents.request_problems(body, protocol)
    if not found:  # the rules read a body the schema accepted
        found = prose.documented(body, protocol)
        found += rules.problems(body, protocol, issued, judged)
        found += prose.assumed(body, protocol, request.headers, judged.assumed, judged.request)
    if not found:
        return None
    return Error(400, "; ".join(found), "invalid_request_error", "invalid_request", None)
