"""`FakeKimiGateway`: a scripted Kimi gateway for your own tests, with no network at all.

It is an `httpx.MockTransport` handed to `ChatKimi` through `http_client` / `http_async_client`,
so every path of the real client runs (request building, the connection pool, retries, the SSE
reader, reply parsing); only the sockets are missing. Each request is checked against what the
documents state (the published request schemas, their prose, the multi-turn rules) and against
the table of assumptions where they leave it open (`assumptions.py`), before the script's step
answers it; a step the request makes impossible is a `ScriptError`.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from langchain_kimi.testing import cutting, possible, refusals, responses, rules
from langchain_kimi.testing.assumptions import Assumed, Use
from langchain_kimi.testing.binding import Script, Scripted, When, last_user_text
from langchain_kimi.testing.calls import AmbiguousStepError, Calls, CallTracker
from langchain_kimi.testing.raw_steps import Raw, RawAnswer, raw_step
from langchain_kimi.testing.script import (
    DEFAULT_REASONING,
    Error,
    Reply,
    ScriptError,
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
__all__ = ["FAKE_KEY", "FALLBACK_HOST", "AmbiguousStepError", "FakeKimiGateway", "ScriptError"]


class FakeKimiGateway:
    """A Kimi gateway in memory: script its answers, hand out models, read what they sent.

    ```python
    gw = FakeKimiGateway()
    gw.add_reply(text="Paris.", reasoning="The capital of France.")
    model = gw.chat_model(protocol="anthropic")
    model.invoke("Capital of France?").content  # 'Paris.'
    gw.requests  # the JSON bodies sent, in order
    ```

    Steps are served in order, each to one request (or to the request they are bound to with
    `when=`), as JSON or as an event stream, on either protocol. A request the documents say the
    service refuses (see docs/without-a-key.md) gets the gateway's 400 error body instead,
    without using a step; `refusals` lists why. `assume` picks, per open question of
    `tools/live/questions.py`, `"strict"` (refuse) or `"lenient"` (accept) where the documents
    leave it open; `assumed` records each point that rested on one.

    `key`: the only API key the gateway accepts (any other answers the documented 401; the
    models `chat_model` makes send it). `offline=True`: a gateway for tests where nothing may be
    sent (bad input refused before any I/O): every request is recorded, then fails the test.
    `fallback=True`: the documented fallback host is served to any client (for code that
    builds its own clients on `transport`; `chat_model(fallback=True)` does it for its models).
    """

    def __init__(
        self,
        *,
        assume: Mapping[str, str] | None = None,
        key: str | None = None,
        offline: bool = False,
        fallback: bool = False,
    ) -> None:
        self._key = key
        self._offline = offline
        self._assumed = Assumed(assume)
        self._lock = threading.Lock()
        calls = Calls()
        self._script = Script(calls.judge)
        self._tracker = CallTracker(calls, self._lock)
        self._ids = itertools.count(1)
        self._issued = rules.Issued()
        self.requests: list[dict[str, Any]] = []
        """The JSON body of every request received, in order (refused ones included)."""
        self.paths: list[str] = []
        """The URL path of every request received, in order."""
        self.hosts: list[str] = []
        """The host every request was sent to, in order (`api.evolink.ai`: the fallback)."""
        self.refusals: list[str] = []
        """Why each refused request was refused (the 400 error message), in order."""
        self.unverified: list[str] = []
        """Where a well-formed thinking signature this gateway did not issue was accepted
        unverified (`request #N messages.i.content.j`): the fake cannot check the service's."""
        self.transport = httpx.MockTransport(self._handle)
        """The gateway as an httpx transport: `httpx.Client(transport=gw.transport)` talks to it
        (what `chat_model` does), for code that builds its own clients."""
        self._clients: tuple[httpx.Client, httpx.AsyncClient] | None = None
        self._fallback_hosts: set[str] = {FALLBACK_HOST} if fallback else set()

    @property
    def assumed(self) -> list[Use]:
        """Every acceptance, refusal or rendering that rested on an assumption, in order."""
        return list(self._assumed.uses)

    # -- the script -------------------------------------------------------------------------

    def add_reply(
        self,
        text: str = "",
        *,
        reasoning: str | None = None,
        tool_calls: Sequence[Mapping[str, Any]] | None = None,
        usage: Mapping[str, int] | None = None,
        refusal: bool = False,
        truncated: bool = False,
        same_round: bool = False,
        repeat: bool = False,
        when: When = None,
    ) -> FakeKimiGateway:
        """The next reply: answer `text`, after `reasoning` (a default when None: reasoning is
        always on), calling `tool_calls` (`[{"name": ..., "args": {...}}]`, or `"arguments"`:
        the raw string the model wrote, malformed JSON allowed; ids are issued by the gateway).
        `usage` as LangChain reports it (`input_tokens` is all input; `output_tokens`,
        `reasoning_tokens`, `cache_read`, `cache_write`, `cache_write_1h` the part of the
        writes with the 1h TTL); estimated when None. `refusal`: the model declines (K3.1
        Messages `stop_reason` "refusal"). `truncated`: the reply stopped at the output limit
        (`max_tokens` / `length`; 004: the limit is "limitado también por el contexto
        restante", so below the request's cap too). `same_round` (Chat Completions): the
        reply's tool calls join the `$web_search` round before it (one assistant turn).
        `when`: the request this step answers (the text of its last user message, or a
        predicate on its JSON body), whatever the order. `repeat`: the step answers every
        request that reaches it and is never used up (an unbound one must come last).
        Returns the gateway, so calls chain."""
        calls = tool_calls_of(tool_calls)
        reasoning_text = DEFAULT_REASONING if reasoning is None else reasoning
        if usage is not None:  # refuse bad keys and counts now, against the text served
            Usage.of(usage, prompt=0, text=text, reasoning=reasoning_text)
        if reasoning == "" and calls:
            raise ValueError(
                "add_reply: a tool-call turn carries its reasoning (the service refuses its "
                "replay without: reasoning_content is missing in assistant tool call message); "
                "give reasoning=None (a default) or a text"
            )
        if refusal and calls:
            raise ValueError("add_reply: a refusal calls no tool")
        reply = Reply(
            text=text,
            reasoning=reasoning_text,
            tool_calls=calls,
            usage=dict(usage) if usage is not None else None,
            refusal=refusal,
            finish="max_tokens" if truncated else None,
            same_round=same_round,
        )
        return self._add(reply, when, repeat)

    def add_web_search(
        self,
        query: str,
        *,
        results: Sequence[Mapping[str, str]] | None = None,
        same_round: bool = False,
        error_code: str | None = None,
        reasoning: str | None = None,
        usage: Mapping[str, int] | None = None,
        when: When = None,
    ) -> FakeKimiGateway:
        """A built-in web search the model runs before the next reply (the request must declare
        the web search tool). Chat Completions: one `$web_search` round (ChatKimi sends the
        documented answer and asks again); Messages: `server_tool_use` and
        `web_search_tool_result` blocks inside the next reply. `results`: `[{"title", "url"}]`.
        `same_round`: a further `$web_search` call in the previous search's round.
        `error_code` (Messages only): the search fails with a `web_search_tool_result_error`.
        `reasoning` / `usage`: the Chat Completions round's own (the first search's counts for
        a round of several)."""
        search = WebSearch(
            query,
            search_results(query, results),
            same_round,
            error_code,
            reasoning,
            dict(usage) if usage is not None else None,
        )
        if usage is not None:  # refuse bad keys and counts now, against the text served
            Usage.of(usage, prompt=0, text="", reasoning=search.reasoning_text())
        return self._add(search, when)

    def add_error(
        self,
        status: int,
        message: str | None = None,
        *,
        error_type: str | None = None,
        code: str | None = None,
        retry_after: float | None = None,
        headers: Mapping[str, str] | None = None,
        repeat: bool = False,
        when: When = None,
    ) -> FakeKimiGateway:
        """The next request fails with HTTP `status` and the protocol's documented error body.
        `retry_after` (seconds) is sent as `Retry-After` and `retry-after-ms`; `repeat` and
        `when` as for `add_reply`."""
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
        return self._add(error, when, repeat)

    def add_raw(
        self,
        answer: RawAnswer,
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        repeat: bool = False,
        when: When = None,
    ) -> FakeKimiGateway:
        """The next request is answered with `answer` exactly, unchecked: an `httpx.Response`
        as it is, `bytes` / `str` as an event stream body, a mapping as a JSON body (those
        three with `status` and `headers`), or an exception raised as the transport would
        (`httpx.ConnectError(...)`). For what the service should never send (a cut or
        malformed stream, an odd body); the request is still judged first. `repeat` and `when`
        as for `add_reply`."""
        return self._add(raw_step(answer, status, headers), when, repeat)

    def _add(
        self, step: Reply | WebSearch | Error | Raw, when: When, repeat: bool = False
    ) -> FakeKimiGateway:
        if when is not None and not (callable(when) or isinstance(when, str)):
            raise ValueError(f"when: the last user message's text or a predicate, got {when!r}")
        with self._lock:
            self._script.add(step, when, repeat=repeat)
        return self

    @property
    def remaining(self) -> int:
        """How many scripted steps no request has used yet."""
        return len(self._script)

    # -- models -----------------------------------------------------------------------------

    def chat_model(self, *, fallback: bool = False, **fields: Any) -> ChatKimi:
        """A `ChatKimi` talking to this gateway; any ChatKimi field may be given.

        Defaults: the gateway's `key` (else a placeholder), `max_retries=0`,
        `rate_limit_timeout=0` and no fallback base URL, so that each scripted error reaches
        your code at once, and `adaptive_concurrency=False`: a fake answers at once, so its
        calls are not paced (pass `True` to exercise the send rate). Pass `max_retries` to
        exercise retries of failures, and
        `rate_limit_timeout` to let refusals (429, 503, 529) wait and be sent again (they wait
        out `Retry-After` and the back-off as in production: `max_retries=2` is three attempts
        of a failing call, each taking a step), and `fallback=True` (the
        documented fallback `https://api.evolink.ai`) or `fallback_base_url=` to let a 5xx
        move the call there: the gateway then serves that host too. Every model of one gateway
        shares its clients, so they share one connection pool, as models with the same
        settings do in production. Each model reports its calls' start and end to the gateway
        (a callback), which is how an unbound step taken while calls overlap is caught."""
        from langchain_kimi import ChatKimi

        sync_client, async_client = self._http_clients()
        settings: dict[str, Any] = {
            "api_key": self._key or FAKE_KEY,
            "max_retries": 0,
            "rate_limit_timeout": 0,
            "adaptive_concurrency": False,
            "fallback_base_url": f"https://{FALLBACK_HOST}" if fallback else None,
            "http_client": sync_client,
            "http_async_client": async_client,
            **fields,
        }
        settings["callbacks"] = [*(settings.get("callbacks") or []), self._tracker]
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
        number = len(self.requests) + 1
        request_id = f"req_fake_{number:04d}"
        path = request.url.path
        protocol = refusals.protocol_of(path) or "openai"
        try:
            body = json.loads(request.content)
        except ValueError:
            body = None
        self.requests.append(body)
        self.paths.append(path)
        self.hosts.append(request.url.host)
        if self._offline:
            raise ScriptError(
                f"FakeKimiGateway: request #{number} (POST {path}) was sent to an offline "
                f"gateway: nothing may be sent here (bad input is refused before any I/O); "
                f"body {body!r}"
            )
        if request.url.host == FALLBACK_HOST and FALLBACK_HOST not in self._fallback_hosts:
            raise ScriptError(
                f"FakeKimiGateway: request #{number} went to the fallback {FALLBACK_HOST} (a "
                "5xx moved the call there); the fake serves it only when asked: "
                "gw.chat_model(fallback=True), or fallback_base_url=None on your model"
            )
        judged = rules.Judged(self._assumed, number, self.unverified)
        refusal = refusals.refusal(request, body, protocol, self._issued, judged, self._key)
        if refusal is not None:
            if refusal.status == 400:
                self.refusals.append(refusal.message)
            return responses.error_response(refusal, protocol, request_id)
        step = self._next_step(protocol, body, f"request #{number} (POST {path})")
        if isinstance(step, Raw):
            return step.response()
        if isinstance(step, Error):
            return responses.error_response(step, protocol, request_id)
        return self._reply(step, protocol, body, request_id)

    def _take(self, body: Any, where: str) -> Scripted:
        try:
            scripted = self._script.take(body)
        except AmbiguousStepError as exc:
            raise AmbiguousStepError(f"FakeKimiGateway: {where}: {exc}") from None
        if scripted is None:
            raise ScriptError(
                f"FakeKimiGateway: {where} arrived but the script has no step left for it "
                f"(last user message {last_user_text(body)!r}); add one with gw.add_reply(...)"
            )
        return scripted

    def _next_step(
        self, protocol: str, body: dict[str, Any], where: str
    ) -> Reply | tuple[WebSearch, ...] | Error | Raw:
        """The step answering `body`: a reply (on Messages with the searches before it), a Chat
        Completions `$web_search` round (its searches), or an error."""
        scripted = self._take(body, where)
        step = scripted.step
        if isinstance(step, Error | Raw):
            return step
        searches: list[WebSearch] = []
        while isinstance(step, WebSearch):
            if not possible.declares_web_search(body):
                raise ScriptError(
                    f"FakeKimiGateway: {where}: the script's {scripted.describe()} is a web "
                    "search, but the request declares no web search tool "
                    "(bind_tools(['web_search']))"
                )
            searches.append(step)
            following = self._script.following(scripted, body)
            joins = following is not None and getattr(following.step, "same_round", False)
            if protocol == "openai" and not joins:
                return self._possible(scripted, tuple(searches), body, protocol, where)
            if following is None or isinstance(following.step, Error | Raw):
                raise ScriptError(
                    f"FakeKimiGateway: {where}: a web search must be followed by a reply"
                )
            self._script.remove(following)
            scripted, step = following, following.step
        reply = dataclasses.replace(step, searches=tuple(searches))
        return self._possible(scripted, reply, body, protocol, where)

    def _possible(
        self,
        scripted: Scripted,
        step: Reply | tuple[WebSearch, ...],
        body: dict[str, Any],
        protocol: str,
        where: str,
    ) -> Reply | tuple[WebSearch, ...]:
        cut = step if isinstance(step, tuple) else cutting.cut(step, body, protocol)
        for each in cut if isinstance(cut, tuple) else (cut,):
            found = possible.problem(each, body, protocol)
            if found is not None:
                raise ScriptError(
                    f"FakeKimiGateway: {scripted.describe()} answering {where}: {found}"
                )
        if isinstance(cut, tuple):
            return cut
        if cut.finish == "stop_sequence":
            self._assumed.served(
                "stop-sequence-reason",
                len(self.requests),
                f"a reply cut at the stop sequence {cut.stop_sequence!r}",
            )
        return cut

    def _reply(
        self,
        step: Reply | tuple[WebSearch, ...],
        protocol: str,
        body: dict[str, Any],
        request_id: str,
    ) -> httpx.Response:
        strict_stop = self._assumed.strict("stop-sequence-reason")
        rendering = responses.rendering(
            body,
            protocol,
            request_id,
            self._ids,
            stop_sequence_reason="end_turn" if strict_stop else "stop_sequence",
        )
        minimal = self._assumed.strict("reply-optional-fields")
        if minimal:
            self._assumed.served(
                "reply-optional-fields",
                len(self.requests),
                "a reply without the optional keys that say nothing",
            )
        return responses.reply_response(
            step, protocol, body, request_id, rendering, self._issued, optional_fields=not minimal
        )
