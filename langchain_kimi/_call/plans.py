"""Sans-I/O plans for one ChatKimi call: which bodies to post and what to make of the replies.

The drivers (`_async/drivers.py`, and `_sync/drivers.py` generated from it) run these plans: they
only carry out the I/O a plan asks for. A call is one round unless its protocol says a reply asks
for a follow-up (the adapter's `CallRounds`: on Chat Completions, the built-in web search). The
plans know no protocol: they post, decode, ask the rounds for the follow-up, and finish the
message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from langchain_kimi._call.stop import StopStreamFilter, truncate_at_stop
from langchain_kimi._contract import RAW_USAGE, TOKEN_USAGE
from langchain_kimi._errors import KimiAPIError, KimiError, KimiStreamError, redact
from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import CONTEXT_WINDOW
from langchain_kimi._request.resolve import ModelDefaults, resolve_options
from langchain_kimi._secrets import Scrubber
from langchain_kimi._settings import check_max_builtin_rounds
from langchain_kimi.protocols import adapter as protocol_adapter
from langchain_kimi.protocols.interfaces import ProtocolAdapter, StreamDecoder

MAX_STREAM_EVENTS = 2 * CONTEXT_WINDOW
"""The most events ChatKimi reads in one stream: twice the most tokens a reply may hold (the
service sends at most a token or so per event)."""
MAX_TOOL_CALLS = 1_000
"""The most tool calls ChatKimi reads in one reply (langchain-core merges a streamed message's
tool-call pieces in time that grows with the number of calls times the pieces)."""
_TOO_MANY_CALLS = (
    f"the reply holds more than {MAX_TOOL_CALLS:,} tool calls, the most ChatKimi reads in one reply"
)

# What a parser raises on a reply of an unexpected shape, an unreadable reply (pydantic's
# ValidationError, raised by LangChain's message classes, is a ValueError).
_PARSER_FAILURES = (KeyError, IndexError, TypeError, AttributeError, ValueError)


@dataclass(frozen=True)
class PlanSettings:
    """What every call of one model starts from: its fields that shape a request, how many
    built-in rounds a call may run, and the key (and other credentials: those of the headers)
    to remove from every error."""

    defaults: ModelDefaults
    max_builtin_rounds: int
    secret: str = field(default="", repr=False)
    other_secrets: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        check_max_builtin_rounds(self.max_builtin_rounds)


class _Plan:
    """What both plans share: the request so far, the protocol's rounds of this call, and the
    guard every error of the call passes through."""

    _streams: ClassVar[bool] = False

    @classmethod
    def for_call(
        cls,
        messages: list[BaseMessage],
        stop: list[str] | None,
        kwargs: dict[str, Any],
        settings: PlanSettings,
    ) -> Self:
        """The plan of one call: its options (the model's checked fields, then the call's
        `stop` and keyword arguments) and the first body, built by the model's protocol. Bad
        input is a `ValueError` here, before anything is sent."""
        if not messages:
            msg = "ChatKimi needs at least one message"
            raise ValueError(msg)
        defaults = settings.defaults
        options = resolve_options(
            defaults, stop, kwargs, stream=cls._streams, defaults_checked=True
        )
        chosen = protocol_adapter(defaults.protocol)
        body = chosen.build_request(messages, options)
        return cls(
            chosen,
            options,
            body,
            max_builtin_rounds=settings.max_builtin_rounds,
            secret=settings.secret,
            other_secrets=settings.other_secrets,
        )

    def __init__(
        self,
        adapter: ProtocolAdapter,
        options: RequestOptions,
        body: dict[str, Any],
        *,
        max_builtin_rounds: int,
        secret: str = "",
        other_secrets: tuple[str, ...] = (),
    ) -> None:
        self.adapter = adapter
        self.options = options
        self._secret = secret
        self._other_secrets = other_secrets
        self.pending: dict[str, Any] | None = body
        """The next body to post; None once the reply is complete."""
        self._rounds = adapter.new_rounds(options, max_builtin_rounds)
        self._setup()

    def _setup(self) -> None:
        """The subclass's own state."""

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Wraps each round (the drivers' I/O and the parsing): every error of the call passes
        here, so this is where the API key is removed from all of them (HTTP error bodies,
        error events, transport errors, unreadable replies alike)."""
        try:
            yield
        except KimiError as error:
            self._on_error(error)
            error.scrub(lambda text: redact(text, self._secret))
            if self._other_secrets:
                error.scrub(Scrubber(self._other_secrets).text)
            # The exception it came from is dropped too: a JSONDecodeError keeps the whole
            # document, an httpx error its request, and tblib (which Dask installs) pickles
            # the chain along with the error.
            error.__cause__ = error.__context__ = None
            raise

    def _on_error(self, error: KimiError) -> None:
        """The subclass's additions to an error (a stream keeps what arrived)."""

    _unreadable_error: type[KimiError] = KimiAPIError

    @contextmanager
    def readable(
        self, what: str, event: str | None, payload: Any, *, request_id: str | None = None
    ) -> Iterator[None]:
        """Around parsing a reply (`event` None) or a stream event: a parser failing on a shape
        it did not expect raises the plan's typed error naming the field, with the payload as
        its `body` — never a bare KeyError, TypeError, ... from deep inside a parser."""
        try:
            yield
        except KimiError:
            raise
        except _PARSER_FAILURES as exc:
            text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
            if isinstance(payload, str):
                try:
                    payload = json.loads(payload)
                except ValueError:
                    payload = None
            first_line = str(exc).partition("\n")[0]
            problem = self.adapter.bad_field(event, payload) or f"{type(exc).__name__} {first_line}"
            raise self._unreadable_error(
                f"{what} could not be read: {problem}",
                status_code=200,
                request_id=request_id,
                body=text[:2000],
            ) from None


class InvokePlan(_Plan):
    """Non-streaming call: post `pending`, hand each reply to `on_reply` until it is None."""

    def _setup(self) -> None:
        self._result: AIMessage | None = None

    def on_reply(
        self, reply_body: dict[str, Any], base_url: str, request_id: str | None = None
    ) -> None:
        """Take one reply (one that cannot be read is a `KimiAPIError` naming the field)."""
        with self.readable("the reply", None, reply_body, request_id=request_id):
            self._take_reply(reply_body, base_url)

    def _take_reply(self, reply_body: dict[str, Any], base_url: str) -> None:
        assert self.pending is not None
        follow_up = self._rounds.follow_up(self.pending, reply_body)
        if follow_up is not None:
            self.pending = follow_up.body
            return
        parsed = self.adapter.parse_response(reply_body, self.options.model)
        calls = len(parsed.tool_calls) + len(parsed.invalid_tool_calls)
        if calls > MAX_TOOL_CALLS:
            raise KimiAPIError(_TOO_MANY_CALLS, status_code=200)
        message = self._rounds.final_message(parsed, reply_body)
        self._result = finalize_message(message, self.options, base_url)
        self.pending = None

    def result(self) -> ChatResult:
        if self._result is None:  # pragma: no cover - drivers stop only when pending is None
            msg = "the call ended without a reply"
            raise RuntimeError(msg)
        return ChatResult(
            generations=[ChatGeneration(message=self._result)],
            llm_output=llm_output(self._result, self.options.model),
        )


def llm_output(message: AIMessage, requested_model: str) -> dict[str, Any]:
    """What `on_llm_end` callbacks and `generate()` read (ChatOpenAI's `llm_output` keys): the
    service's usage object (summed over the rounds of the call) and the model that answered."""
    meta = message.response_metadata
    output: dict[str, Any] = {"model_name": meta.get("model_name") or requested_model}
    usage = meta.get(TOKEN_USAGE, meta.get(RAW_USAGE))
    if usage:
        output[TOKEN_USAGE] = usage
    return output


def finalize_message(message: AIMessage, options: RequestOptions, base_url: str) -> AIMessage:
    """Apply client-side stop emulation and record which base URL served the reply."""
    if options.stop and not options.native_stop and isinstance(message.content, str):
        text, matched = truncate_at_stop(message.content, options.stop)
        if matched is not None:
            message.content = text
            message.response_metadata["finish_reason"] = "stop"
            message.response_metadata["stop_sequence"] = matched
    message.response_metadata["base_url"] = base_url
    return message


class StreamPlan(_Plan):
    """Streaming call: one decoder per round; chunks pass through the stop filter.

    The driver opens a stream for `pending`, calls `start_round`, then `feed`s it the round's
    events up to the end event (`decoder.ended`) and takes the round's last chunks from
    `finish_round`; `guard()` around each round attaches what already arrived to a stream error
    (and removes the key from it, as for every error).
    """

    _streams = True
    _unreadable_error = KimiStreamError

    def _setup(self) -> None:
        stops = self.options.stop
        self._stop_filter = (
            StopStreamFilter(stops) if stops and not self.options.native_stop else None
        )
        self._base_url = ""
        self._request_id: str | None = None
        self._base_url_sent = False
        self._seen = _Seen()
        """Every chunk the caller has seen, in order: the one record of it."""
        self._events = 0
        """Events fed in this round (at most `MAX_STREAM_EVENTS`)."""
        self._calls: set[Any] = set()
        """The indexes of the tool calls of this round (at most `MAX_TOOL_CALLS`)."""
        self.decoder: StreamDecoder = self._rounds.new_decoder()

    def start_round(self, base_url: str, request_id: str | None = None) -> None:
        self.decoder = self._rounds.new_decoder()
        self._base_url = base_url
        self._request_id = request_id
        self._events = 0
        self._calls = set()

    def feed(self, event: str, data: str) -> list[ChatGenerationChunk]:
        self._events += 1
        if self._events > MAX_STREAM_EVENTS:
            msg = f"the stream sent more than {MAX_STREAM_EVENTS:,} events, the most ChatKimi reads"
            raise KimiStreamError(msg)
        with self.readable(f"the {event!r} stream event", event, data):
            return [self._emit(chunk) for chunk in self.decoder.feed(event, data)]

    def finish_round(self) -> list[ChatGenerationChunk]:
        """The round's last chunks; sets `pending` to the follow-up body or None."""
        with self.readable("the end of the stream", "", ""):
            return self._finish_round()

    def _finish_round(self) -> list[ChatGenerationChunk]:
        generations = [self._emit(chunk) for chunk in self.decoder.finish()]
        assert self.pending is not None
        follow_up = self._rounds.follow_up(self.pending, self.decoder.reply())
        if follow_up is not None:
            self.pending = follow_up.body
            generations.append(self._emit(follow_up.chunk))
        else:
            self.pending = None
        return generations

    def _on_error(self, error: KimiError) -> None:
        # Cut, timed out, unreadable or an error event: keep everything the caller saw, every
        # round of the call (a decoder knows only its own), with what the earlier rounds add
        # (an empty reply: the cut round adds nothing).
        if error.partial is None and self._seen:
            error.partial = self._seen.merged()
            self._rounds.final_chunk(error.partial, {})
        if error.request_id is None and self._request_id is not None:
            # A failure after the 200 headers (a cut, an unreadable or error event) names the
            # request the gateway answered (the guard re-renders the message after this hook).
            error.request_id = self._request_id

    def _emit(self, chunk: AIMessageChunk) -> ChatGenerationChunk:
        self._calls.update(piece.get("index") for piece in chunk.tool_call_chunks)
        if len(self._calls) > MAX_TOOL_CALLS:
            raise KimiStreamError(_TOO_MANY_CALLS)
        chunk = self._prepare_chunk(chunk)
        self._seen.append(chunk)
        return ChatGenerationChunk(message=chunk)

    def _prepare_chunk(self, chunk: AIMessageChunk) -> AIMessageChunk:
        """What the call adds to a decoder's chunk: the base URL once, stop emulation, and on the
        last chunk what the earlier rounds contributed."""
        if not self._base_url_sent:
            # Each response_metadata key once per stream: strings concatenate when merged.
            chunk.response_metadata["base_url"] = self._base_url
            self._base_url_sent = True
        if self._stop_filter is not None and isinstance(chunk.content, str) and chunk.content:
            chunk.content = self._stop_filter.push(chunk.content)
        if self._stop_filter is not None and chunk.chunk_position == "last":
            chunk.content = (chunk.content if isinstance(chunk.content, str) else "") + (
                self._stop_filter.flush()
            )
            if self._stop_filter.matched is not None:
                chunk.response_metadata["finish_reason"] = "stop"
                chunk.response_metadata["stop_sequence"] = self._stop_filter.matched
        if chunk.chunk_position == "last":
            # What the earlier rounds add, as the invoke path reports it (the reply is complete).
            self._rounds.final_chunk(chunk, self.decoder.reply())
        return chunk


SEEN_BLOCK = 256
"""How many chunks a stream plan keeps apart before it merges them into one."""


class _Seen:
    """The chunks of a call, merged `SEEN_BLOCK` at a time: langchain-core's `+` of a chunk and a
    list of chunks merges them all at once (one new message, its tool-call arguments parsed once),
    where adding them one by one re-parses the arguments so far each time (quadratic). Memory is
    what the chunks hold plus one message per block, not every chunk's own (about 2 KB each)."""

    def __init__(self) -> None:
        self._blocks: list[AIMessageChunk] = []
        self._recent: list[AIMessageChunk] = []

    def __bool__(self) -> bool:
        return bool(self._blocks or self._recent)

    def append(self, chunk: AIMessageChunk) -> None:
        self._recent.append(chunk)
        if len(self._recent) == SEEN_BLOCK:
            self._blocks.append(_merge(self._recent))
            self._recent = []

    def merged(self) -> AIMessageChunk:
        """Every chunk so far as one (the first chunk itself when it is the only one)."""
        return _merge([*self._blocks, *self._recent])


def _merge(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    if len(chunks) == 1:
        return chunks[0]
    merged = chunks[0] + chunks[1:]
    assert isinstance(merged, AIMessageChunk)
    return merged


def token_text(generation: ChatGenerationChunk) -> str:
    """The text LangChain's `on_llm_new_token` callback receives for a chunk."""
    content = generation.message.content
    return content if isinstance(content, str) else ""
