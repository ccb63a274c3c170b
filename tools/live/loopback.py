"""A loopback gateway speaking both protocols from the authored cassettes, for the offline proof.

Requests are answered from the authored interaction with the same path and JSON body; any other
valid request gets a plain answer ("OK", with the figures of the authored plain cassettes),
streamed or not, written by the fake gateway's renderer for the requested model. Auth and request validation follow the documents: a wrong key answers 401, a body
that fails its schema answers 400, both with the documented error body and a request id.

`deviations` turns the faithful server into one that breaks the documents on purpose:
`drop_message_stop` (a Messages stream ends after its `message_delta`, which the documents allow:
"suele incluir"), `cut_before_delta` (a Messages stream cut before its `message_delta`),
`unknown_field`, `usage_count` (Chat `total_tokens` off by one) and `unauthorized` (401 for every
request).
"""

from __future__ import annotations

import itertools
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from langchain_kimi.testing import documents, frames, responses
from langchain_kimi.testing.script import Error
from langchain_kimi.testing.script import Reply as Step
from langchain_kimi.testing.wire import error_body
from tools import cassette_format
from tools.live.checks import sse_events
from tools.live.exchanges import ENDPOINTS
from tools.paths import CASSETTE_ROOT

DEVIATIONS = frozenset(
    {"drop_message_stop", "cut_before_delta", "unknown_field", "usage_count", "unauthorized"}
)
UNKNOWN_FIELD = "x_undocumented_extra"
SESSION_COOKIE = "__gateway_session"
PLAIN = Step(
    text="OK",
    reasoning="The user asks me to reply with OK. I will do exactly that.",
    tool_calls=(),
    usage={
        "input_tokens": 18,
        "output_tokens": 21,
        "reasoning_tokens": 19,
        "cache_read": 4,
        "cache_write": 2,
    },
)
"""The plain answer, as the authored plain cassettes (core_cassettes/*_plain.yaml) give it."""


@dataclass
class Reply:
    status: int
    content_type: str
    body: str


@dataclass
class Script:
    """The authored answers, by (path, canonical request body)."""

    answers: dict[tuple[str, str], Reply] = field(default_factory=dict)

    @classmethod
    def from_cassettes(cls, root: Path = CASSETTE_ROOT) -> Script:
        script = cls()
        for path in sorted(root.rglob("*.yaml")):
            for interaction in cassette_format.load_interactions(str(path)):
                key, reply = interaction_entry(interaction)
                script.answers.setdefault(key, reply)
        return script


@cache
def _authored_script() -> Script:
    """Read once per process (seconds of YAML); the gateway never changes it."""
    return Script.from_cassettes()


def canonical_json(body: Any) -> str:
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def interaction_entry(interaction: dict[str, Any]) -> tuple[tuple[str, str], Reply]:
    request, response = interaction["request"], interaction["response"]
    path = "/" + request["uri"].split("://", 1)[-1].split("/", 1)[-1]
    body = json.loads(cassette_format._unpack_body(request["body"]) or "null")
    headers = {k.lower(): v for k, v in response["headers"].items()}
    content_type = (headers.get("content-type") or ["application/json"])[0]
    text = cassette_format._unpack_body(response["body"]) or ""
    return (path, canonical_json(body)), Reply(response["status"]["code"], content_type, text)


def error_reply(protocol: str, status: int, kind: str, message: str, request_id: str) -> Reply:
    """The documented error body, as the fake gateway writes it."""
    error = Error(status=status, message=message, error_type=kind, code=kind, retry_after=None)
    return Reply(status, "application/json", json.dumps(error_body(error, protocol, request_id)))


class LoopbackGateway:
    def __init__(self, key: str, deviations: frozenset[str] = frozenset()) -> None:
        unknown = deviations - DEVIATIONS
        if unknown:
            raise ValueError(f"unknown deviations {sorted(unknown)}")
        self.key, self.deviations = key, deviations
        self.script = _authored_script()
        self._ids = itertools.count(1)

    def answer(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[Reply, str]:
        request_id = f"req_loopback_{next(self._ids):04d}"
        protocol = ENDPOINTS.get(path)
        if protocol is None:
            return Reply(404, "text/plain", "not found"), request_id
        if (
            "unauthorized" in self.deviations
            or headers.get("authorization") != f"Bearer {self.key}"
        ):
            return error_reply(
                protocol, 401, "authentication_error", "invalid api key", request_id
            ), request_id
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        # Schema only: whether undocumented fields are refused is one of the open questions.
        problems = (
            documents.request_problems(body, protocol)
            if isinstance(body, dict)
            else ["request body is not a JSON object"]
        )
        if problems:
            message = "; ".join(problems)[:200]
            return error_reply(
                protocol, 400, "invalid_request_error", message, request_id
            ), request_id
        reply = self.script.answers.get((path, canonical_json(body)))
        if reply is None:
            plain = responses.unjudged_reply(PLAIN, protocol, body, request_id)
            text = plain.text
            if protocol == "anthropic" and body.get("stream"):
                text = _with_ping(text)
            reply = Reply(200, plain.headers["content-type"], text)
        return self._deviate(protocol, reply), request_id

    def _deviate(self, protocol: str, reply: Reply) -> Reply:
        if reply.status != 200 or not self.deviations:
            return reply
        if "text/event-stream" in reply.content_type:
            events = [(name, _parse(data)) for name, data in sse_events(reply.body)]
            if "drop_message_stop" in self.deviations:
                events = [(n, d) for n, d in events if n != "message_stop"]
            if "cut_before_delta" in self.deviations:
                events = [(n, d) for n, d in events if n not in ("message_delta", "message_stop")]
            events = [(n, self._edit(protocol, d, first=i == 0)) for i, (n, d) in enumerate(events)]
            text = "".join(
                (f"event: {n}\n" if protocol == "anthropic" else "")
                + f"data: {d if isinstance(d, str) else json.dumps(d)}\n\n"
                for n, d in events
            )
            return Reply(reply.status, reply.content_type, text)
        return Reply(
            reply.status,
            reply.content_type,
            json.dumps(self._edit(protocol, _parse(reply.body), first=True)),
        )

    def _edit(self, protocol: str, payload: Any, *, first: bool) -> Any:
        if not isinstance(payload, dict):
            return payload
        if "unknown_field" in self.deviations and first:
            target = (
                payload.get("message")
                if protocol == "anthropic" and "message" in payload
                else payload
            )
            target[UNKNOWN_FIELD] = True
        usage = payload.get("usage")
        if "usage_count" in self.deviations and protocol == "openai" and isinstance(usage, dict):
            usage["total_tokens"] = usage.get("total_tokens", 0) + 1
        return payload


def _with_ping(stream: str) -> str:
    """A Messages stream with a `ping` after its first `content_block_start`, where the authored
    plain cassette (which the record diff compares with) has one: a keep-alive the service may
    interleave, which the documents do not list, so the fake gateway never sends it."""
    events = stream.split("\n\n")
    first = next(i for i, e in enumerate(events) if e.startswith("event: content_block_start"))
    events.insert(first + 1, "event: ping\ndata: " + json.dumps(frames.PING, separators=(",", ":")))
    return "\n\n".join(events)


def _parse(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data


class _Handler(BaseHTTPRequestHandler):
    gateway: LoopbackGateway
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?", 1)[0]
        reply, request_id = self.gateway.answer(path, headers, raw)
        data = reply.body.encode()
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        self.send_header("content-length", str(len(data)))
        self.send_header("x-request-id", request_id)
        # Gateways behind a CDN set cookies; a recording must not keep them.
        self.send_header("set-cookie", f"{SESSION_COOKIE}=loopback-session; Path=/")
        self.end_headers()
        self.wfile.write(data)

    do_POST = _serve  # noqa: N815 (http.server names its hooks so)
    do_GET = _serve  # noqa: N815


@contextmanager
def serve(
    key: str, deviations: frozenset[str] = frozenset(), *, tls: ssl.SSLContext | None = None
) -> Iterator[str]:
    """Run a loopback gateway in a thread; yields its base URL (http(s)://127.0.0.1:PORT)."""
    handler = type("Handler", (_Handler,), {"gateway": LoopbackGateway(key, deviations)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    # A short poll interval: shutdown() waits up to one interval for the serving thread.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        scheme = "https" if tls is not None else "http"
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
