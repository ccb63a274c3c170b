"""`FakeKimiGateway`: a scripted Kimi gateway for your own tests, with no network at all.

It is an `httpx.MockTransport` handed to `ChatKimi` through `http_client` / `http_async_client`,
so every path of the real client runs (request building, the connection pool, retries, the SSE
reader, reply parsing); only the sockets are missing. Each request is checked the way the
service checks it (the published request schemas, the multi-turn rules) before the script's next
step answers it.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from langchain_kimi.testing import documents, rules, wire
from langchain_kimi.testing.script import (
    DEFAULT_REASONING,
    Error,
    Reply,
    Step,
    Usage,
    WebSearch,
    error_type_for,
    search_results,
    tool_calls_of,
)

if TYPE_CHECKING:
    from langchain_kimi import ChatKimi

FAKE_KEY = "fake-kimi-gateway-key"
"""The key `chat_model` passes: a key must be sent, as to the service; never a real one."""
FALLBACK_HOST = "api.evolink.ai"
"""004 / 000: `https://api.evolink.ai` "sirve como dirección de respaldo para los modelos de
texto" (serves as the fallback address for the text models): served only when a test asks."""
_PATHS = {"/v1/messages": "anthropic", "/v1/chat/completions": "openai"}


class ScriptError(AssertionError):
    """The script cannot answer a request: no step left, or a web search the request did not
    declare the tool for. It fails the test (it is an `AssertionError`) with what to change."""


class FakeKimiGateway:
    """A Kimi gateway in memory: script its answers, hand out models, read what they sent.

    ```python
    gw = FakeKimiGateway()
    gw.add_reply(text="Paris.", reasoning="The capital of France.")
    model = gw.chat_model(protocol="anthropic")
    model.invoke("Capital of France?").content  # 'Paris.'
    gw.requests  # the JSON bodies sent, in order
    ```

    Steps are served in order, each to one request, as JSON or as an event stream (whichever the
    request asks for), on either protocol. A request the service would refuse (not valid for the
    published request schema, reasoning or a signature changed, a tool result that answers no
    tool call, a tool call left unanswered) gets the gateway's 400 error body instead, without
    using a step; `refusals` lists why.
    """

    def __init__(self) -> None:
        self._steps: deque[Step] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._issued = rules.Issued()
        self.requests: list[dict[str, Any]] = []
        """The JSON body of every request received, in order (refused ones included)."""
        self.paths: list[str] = []
        """The URL path of every request received, in order."""
        self.hosts: list[str] = []
        """The host every request was sent to, in order (`api.evolink.ai`: the fallback)."""
        self._fallback_hosts: set[str] = set()
        self.refusals: list[str] = []
        """Why each refused request was refused (the 400 error message), in order."""
        self.transport = httpx.MockTransport(self._handle)
        """The gateway as an httpx transport: `httpx.Client(transport=gw.transport)` talks to it
        (what `chat_model` does), for code that builds its own clients."""
        self._clients: tuple[httpx.Client, httpx.AsyncClient] | None = None

    # -- the script -------------------------------------------------------------------------

    def add_reply(
        self,
        text: str = "",
        *,
        reasoning: str | None = None,
        tool_calls: Sequence[Mapping[str, Any]] | None = None,
        usage: Mapping[str, int] | None = None,
    ) -> FakeKimiGateway:
        """The next reply: answer `text`, after `reasoning` (a default when None: reasoning is
        always on), calling `tool_calls` (`[{"name": ..., "args": {...}}]`, ids are issued by
        the gateway). `usage` as LangChain reports it (`input_tokens` is all input;
        `output_tokens`, `reasoning_tokens`, `cache_read`, `cache_write`); estimated when None.
        Returns the gateway, so calls chain."""
        if usage is not None:
            Usage.of(usage, prompt=0, text=text, reasoning=reasoning or "")  # refuse bad keys now
        reply = Reply(
            text=text,
            reasoning=DEFAULT_REASONING if reasoning is None else reasoning,
            tool_calls=tool_calls_of(tool_calls),
            usage=dict(usage) if usage is not None else None,
        )
        return self._add(reply)

    def add_web_search(
        self, query: str, *, results: Sequence[Mapping[str, str]] | None = None
    ) -> FakeKimiGateway:
        """A built-in web search the model runs before the next reply (the request must declare
        the web search tool). Chat Completions: one `$web_search` round (ChatKimi sends the
        documented answer and asks again); Messages: `server_tool_use` and
        `web_search_tool_result` blocks inside the next reply. `results`: `[{"title", "url"}]`."""
        return self._add(WebSearch(query, search_results(query, results)))

    def add_error(
        self,
        status: int,
        message: str | None = None,
        *,
        error_type: str | None = None,
        code: str | None = None,
        retry_after: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> FakeKimiGateway:
        """The next request fails with HTTP `status` and the protocol's documented error body.
        `retry_after` (seconds) is sent as `Retry-After` and `retry-after-ms`."""
        if not 400 <= status <= 599:
            raise ValueError(f"add_error: status must be 4xx or 5xx, got {status}")
        error = Error(
            status=status,
            message=message or f"scripted error {status}",
            error_type=error_type or error_type_for(status),
            code=code,
            retry_after=retry_after,
            headers=dict(headers or {}),
        )
        return self._add(error)

    def _add(self, step: Step) -> FakeKimiGateway:
        with self._lock:
            self._steps.append(step)
        return self

    @property
    def remaining(self) -> int:
        """How many scripted steps no request has used yet."""
        return len(self._steps)

    # -- models -----------------------------------------------------------------------------

    def chat_model(self, *, fallback: bool = False, **fields: Any) -> ChatKimi:
        """A `ChatKimi` talking to this gateway; any ChatKimi field may be given.

        Defaults: a placeholder key, `max_retries=0` and no fallback base URL, so that each
        scripted error reaches your code at once. Pass `max_retries` to exercise retries (they
        wait out `Retry-After` and the back-off as in production: `max_retries=2` is three
        attempts, each taking a step), and `fallback=True` (the documented fallback
        `https://api.evolink.ai`) or `fallback_base_url=` to let a 5xx move the call there: the
        gateway then serves that host too. Every model of one gateway shares its clients, so
        they share one connection pool, as models with the same settings do in production."""
        from langchain_kimi import ChatKimi

        sync_client, async_client = self._http_clients()
        settings: dict[str, Any] = {
            "api_key": FAKE_KEY,
            "max_retries": 0,
            "fallback_base_url": f"https://{FALLBACK_HOST}" if fallback else None,
            "http_client": sync_client,
            "http_async_client": async_client,
            **fields,
        }
        if settings["fallback_base_url"]:
            with self._lock:
                self._fallback_hosts.add(httpx.URL(settings["fallback_base_url"]).host)
        return ChatKimi(**settings)

    def _http_clients(self) -> tuple[httpx.Client, httpx.AsyncClient]:
        with self._lock:
            if self._clients is None:
                self._clients = (
                    httpx.Client(transport=self.transport),
                    httpx.AsyncClient(transport=self.transport),
                )
            return self._clients

    # -- serving ----------------------------------------------------------------------------

    def _handle(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            return self._serve(request)

    def _serve(self, request: httpx.Request) -> httpx.Response:
        request_id = f"req_fake_{len(self.requests) + 1:04d}"
        path = request.url.path
        protocol = _PATHS.get(path, "openai")
        try:
            body = json.loads(request.content)
        except ValueError:
            body = None
        self.requests.append(body)
        self.paths.append(path)
        self.hosts.append(request.url.host)
        if request.url.host == FALLBACK_HOST and FALLBACK_HOST not in self._fallback_hosts:
            raise ScriptError(
                f"FakeKimiGateway: request #{len(self.requests)} went to the fallback "
                f"{FALLBACK_HOST} (a 5xx moved the call there); the fake serves it only when "
                "asked: gw.chat_model(fallback=True), or fallback_base_url=None on your model"
            )
        refusal = self._refusal(request, body, protocol)
        if refusal is not None:
            return self._error(refusal, protocol, request_id)
        step = self._next_step(protocol, body, path)
        if isinstance(step, Error):
            return self._error(step, protocol, request_id)
        return self._reply(step, protocol, body, request_id)

    def _refusal(self, request: httpx.Request, body: Any, protocol: str) -> Error | None:
        """What the service would answer instead of a reply: 404, 401, or 400 with the reason."""
        path = request.url.path
        if path not in _PATHS:
            return Error(404, f"no route for POST {path}", "not_found_error", None, None)
        if not request.headers.get("authorization", "").removeprefix("Bearer ").strip():
            return Error(401, "missing API key", "authentication_error", None, None)
        found = documents.request_problems(body, protocol)
        if not found:
            found = rules.problems(body, protocol, self._issued)
        if not found:
            return None
        message = "; ".join(found)
        self.refusals.append(message)
        return Error(400, message, "invalid_request_error", "invalid_request", None)

    def _next_step(
        self, protocol: str, body: dict[str, Any], path: str
    ) -> Reply | WebSearch | Error:
        if not self._steps:
            msg = (
                f"FakeKimiGateway: request #{len(self.requests)} (POST {path}) arrived but the "
                "script has no step left; add one with gw.add_reply(...)"
            )
            raise ScriptError(msg)
        step = self._steps.popleft()
        if isinstance(step, Error):
            return step
        searches: list[WebSearch] = []
        if isinstance(step, WebSearch) and not _declares_web_search(body):
            raise ScriptError(
                "FakeKimiGateway: the script's next step is a web search, but the request "
                "declares no web search tool (bind_tools(['web_search']))"
            )
        if protocol == "anthropic":  # searches run inside the next reply
            while isinstance(step, WebSearch):
                searches.append(step)
                if not self._steps or not isinstance(self._steps[0], Reply | WebSearch):
                    raise ScriptError("FakeKimiGateway: a web search must be followed by a reply")
                step = self._steps.popleft()
            assert isinstance(step, Reply)
            return Reply(step.text, step.reasoning, step.tool_calls, step.usage, tuple(searches))
        return step

    def _reply(
        self, step: Reply | WebSearch, protocol: str, body: dict[str, Any], request_id: str
    ) -> httpx.Response:
        rendering = wire.Rendering(
            model=str(body.get("model")),
            reply_id=f"{'msg' if protocol == 'anthropic' else 'chatcmpl'}_fake_{request_id[-4:]}",
            new_call_id=lambda: (
                f"{'toolu' if protocol == 'anthropic' else 'call'}_fake_{next(self._ids):04d}"
            ),
            sign=rules.sign,
            prompt_chars=len(json.dumps(body.get("messages"))),
        )
        stream = bool(body.get("stream"))
        headers = {"x-request-id": request_id}
        if protocol == "anthropic":
            assert isinstance(step, Reply)
            message = wire.anthropic_json(step, rendering)
            self._issued.remember_anthropic(message["content"])
            if stream:
                return _sse(wire.anthropic_sse(message), headers)
            return httpx.Response(200, json=message, headers=headers)
        assistant, finish, usage = wire.openai_message(step, rendering)
        self._issued.remember_openai(assistant)
        if stream:
            return _sse(wire.openai_sse(assistant, finish, usage, rendering), headers)
        return httpx.Response(
            200, json=wire.openai_json(assistant, finish, usage, rendering), headers=headers
        )

    def _error(self, error: Error, protocol: str, request_id: str) -> httpx.Response:
        headers = {"x-request-id": request_id, **error.headers}
        if error.retry_after is not None:
            headers["retry-after"] = str(math.ceil(max(0.0, error.retry_after)))
            headers["retry-after-ms"] = str(round(error.retry_after * 1000))
        return httpx.Response(
            error.status, json=wire.error_body(error, protocol, request_id), headers=headers
        )


def _declares_web_search(body: dict[str, Any]) -> bool:
    return any(
        isinstance(t, dict) and (t.get("type") == "web_search" or t.get("name") == "web_search")
        for t in body.get("tools") or []
    )


def _sse(text: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.Response(
        200, content=text.encode("utf-8"), headers={**headers, "content-type": "text/event-stream"}
    )
