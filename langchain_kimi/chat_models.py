"""`ChatKimi`: the LangChain chat model for the Kimi models on the EvoLink gateway.

This module holds the fields, the environment/secret handling and the LangChain hooks. It knows
no wire JSON: the protocol adapters build and parse bodies, `_http/transport.py` moves bytes,
`_call/plans.py` plans each call and `_call/_async/drivers.py` (with its generated sync twin)
carries it out.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Literal, Self

import httpx
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.base import LangSmithParams
from langchain_core.load.serializable import SerializedConstructor, SerializedNotImplemented
from langchain_core.messages import AIMessage, BaseMessage, convert_to_messages
from langchain_core.outputs import LLMResult
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable
from langchain_core.utils import from_env, secret_from_env
from pydantic import (
    AliasChoices,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    field_serializer,
    field_validator,
    model_validator,
)

from langchain_kimi._call._async import drivers as async_drivers
from langchain_kimi._call._sync import drivers
from langchain_kimi._call.plans import PlanSettings
from langchain_kimi._contract import PROVIDER, sum_usage
from langchain_kimi._http.transport import Transport, TransportConfig
from langchain_kimi._langchain import content_blocks, secret_headers
from langchain_kimi._langchain.arguments import accepted_names, public_fields, refuse_unknown
from langchain_kimi._langchain.token_estimate import estimate_message_tokens, estimate_text_tokens
from langchain_kimi._langchain.unreadable_blocks import refuse_unreadable_blocks
from langchain_kimi._request.profiles import K31_PRO, PROTOCOLS, Protocol, capabilities
from langchain_kimi._request.resolve import ModelDefaults, resolve_options
from langchain_kimi._request.tools import ToolLike, spec_to_bindable, to_tool_specs
from langchain_kimi._settings import (
    check_connection_settings,
    check_max_builtin_rounds,
    check_max_retries,
    check_rate_limit_timeout,
    transport_timeout,
)
from langchain_kimi._warn import from_caller
from langchain_kimi.protocols import adapter

DEFAULT_BASE_URL = "https://direct.evolink.ai"
DOCUMENTED_FALLBACK_URL = "https://api.evolink.ai"
_TRANSPORT_LOCK = threading.Lock()
"""Guards the lazy creation of a model's transport (threads sharing one model share one pool)."""
os.register_at_fork(  # never held in a forked child (held by the forking thread meanwhile)
    before=lambda: _TRANSPORT_LOCK.acquire(),
    after_in_parent=lambda: _TRANSPORT_LOCK.release(),
    after_in_child=lambda: _TRANSPORT_LOCK.release(),
)

_UNSET_FALLBACK = "<documented fallback>"

# The messages ChatKimi makes say `model_provider="kimi"`: their `content_blocks` come from this
# translator, registered wherever ChatKimi is loaded (by the package root, a `langchain_core.load`
# of a serialized model, or an unpickling).
content_blocks.register()


class ChatKimi(BaseChatModel):
    """Kimi K3.1 Pro / K3.1 Pro Highspeed / K3 through the EvoLink gateway.

    One model, both gateway protocols: `protocol="openai"` (Chat Completions, the default — the
    same features on all three models) or `protocol="anthropic"` (Messages: signed thinking,
    native stop sequences and server search blocks are only there). Reasoning is always on and
    always preserved: the full text in `additional_kwargs["reasoning_content"]`, and on the
    anthropic protocol the signed thinking blocks, replayed unchanged in later turns.

    Example:
        ```python
        from langchain_kimi import ChatKimi

        model = ChatKimi(model="kimi-k3.1-pro", reasoning_effort="low")
        reply = model.invoke("Reply with OK.")
        print(reply.content, reply.additional_kwargs["reasoning_content"])
        ```
    """

    model: str = Field(default=K31_PRO, validation_alias=AliasChoices("model", "model_name"))
    """Model id: `kimi-k3.1-pro`, `kimi-k3.1-pro-highspeed` or `kimi-k3` (others allowed,
    with a one-time warning that capability checks are off)."""
    protocol: Protocol = "openai"
    """`"openai"` (Chat Completions) or `"anthropic"` (Messages)."""
    api_key: SecretStr | None = Field(
        default_factory=secret_from_env("EVOLINK_API_KEY", default=None)
    )
    """EvoLink API key; read from `EVOLINK_API_KEY`. Needed at call time, not to construct.
    Never printed, logged or serialized; a pickle omits it (the loading process reads its own
    `EVOLINK_API_KEY`)."""
    base_url: str = Field(default_factory=from_env("EVOLINK_BASE_URL", default=DEFAULT_BASE_URL))
    """Host root (env `EVOLINK_BASE_URL`); `/v1/messages` or `/v1/chat/completions` is appended.
    A trailing `/v1` (as ChatOpenAI base URLs have) is removed. Must be `https://` (plain
    `http://` only to a loopback host, or with `allow_insecure_http`), without a query string,
    fragment or `user:password@`; refused at construction otherwise."""
    fallback_base_url: str | None = _UNSET_FALLBACK
    """Used when the primary base cannot be reached or keeps failing with 5xx. Defaults to the
    documented fallback `https://api.evolink.ai` when `base_url` is the default; `None` disables.
    Checked and normalized like `base_url`."""
    max_tokens: int | None = Field(
        default=None, validation_alias=AliasChoices("max_tokens", "max_completion_tokens")
    )
    """Output cap (reasoning + answer), 1..1,048,576: `max_tokens` on anthropic (131,072 when
    unset: the field is required there), `max_completion_tokens` on openai (unset: not sent)."""
    stop: list[str] | None = Field(
        default=None, validation_alias=AliasChoices("stop", "stop_sequences")
    )
    """Stop sequences: native on anthropic K3.1, emulated client-side elsewhere."""
    reasoning_effort: str | None = Field(
        default=None, validation_alias=AliasChoices("reasoning_effort", "effort")
    )
    """`low` / `high` / `max` (aliases `medium`, `xhigh`, `minimal`, `none`); unset: service
    default `max`. `kimi-k3` accepts only `max`. `none` does NOT turn reasoning off."""
    cache_ttl: Literal["5m", "1h"] | None = None
    """Context-cache write TTL (K3.1 only)."""
    temperature: float | None = None
    """Chat Completions (004): "fijada por el modelo en `1`"; K3.1 ignores other values (a
    warning), kimi-k3 refuses them (refused before sending). Messages: not sent (its documents
    have no such field; a warning)."""
    top_p: float | None = None
    """Chat Completions (004): "fijado por el modelo en `0.95`"; otherwise as `temperature`."""
    timeout: float | httpx.Timeout | None = None
    """Seconds or an `httpx.Timeout`; default 900 s read, 10 s connect; each part finite, > 0 and
    at most 86,400 s (one day), or `None` (no limit for that wait). Per attempt: a gateway
    that sends no byte raises after (max_retries + 1) x timeout plus the waits (docs/errors.md)."""
    max_retries: int = 2
    """Retries of a failed attempt (a 5xx other than 503 and 529, 408, 409, a connection error, a
    timeout): 2 = up to 3 attempts on each base URL. A refusal (a 429 that is not a spent quota, a
    503, a 529) spends no retry: it waits, within `rate_limit_timeout`. So a call facing endless
    429s ends with `KimiRateLimitError` once it has waited `rate_limit_timeout` seconds."""
    rate_limit_timeout: float = 300.0
    """Seconds a call may wait in all after refusals (a 429 that is not a spent quota, a 503, a
    529), each wait its `Retry-After` or the backoff; then the refusal is raised. `0`: a refusal
    is raised at once. (Its turns among the key's calls wait at most the pool timeout.)"""
    default_headers: dict[str, str] | None = None
    """Extra HTTP headers on every request (not `Authorization`; names must be valid header
    names and values free of CR, LF and other control characters, or construction fails).
    Messages requests also carry `anthropic-version: 2023-06-01`, as Anthropic clients do (the
    documents neither require nor forbid it); a header of that name here replaces it. A header
    named like a credential (`Proxy-Authorization`, `X-Proxy-Token`: a name holding auth, token,
    secret, key, cookie, password, credential or session) is kept out of every view and pickle,
    as the key is (docs/reference.md, Serialization)."""
    model_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Extra top-level body fields for future or undocumented options (sent as given)."""
    extra_body: dict[str, Any] | None = None
    """Like `model_kwargs` (the name ChatOpenAI and ChatDeepSeek users know): merged into every
    request body after `model_kwargs`; a call's own `extra_body=` is merged after both."""
    stream_usage: bool = True
    """Token usage goes on the last chunk of a stream, when the stream carries it; `False` leaves
    it off the chunks. Per call: `stream(..., stream_usage=False)`. ChatKimi assumes Chat
    Completions streams carry usage: 004 names no `stream_options` and does not say they do (live
    question `chat-stream-usage`); a stream without it gives `usage_metadata=None`, no warning."""
    streaming: bool = False
    """Stream internally even for `invoke` (LangChain's standard `streaming` flag)."""
    adaptive_concurrency: bool = True
    """Pace the sends of each API key at the rate its gateway admits, learnt from its 429s and
    shared by every model, thread and event loop using the key (docs/errors.md). `False`: no
    pacing; a refused call still waits its `Retry-After` before it is sent again."""
    max_builtin_rounds: int = 8
    """Chat Completions web search: how many `$web_search` rounds one call may run."""
    allow_insecure_http: bool = False
    """Allow sending the key over plain `http://` to a non-loopback host (off: refused)."""
    http_client: httpx.Client | None = Field(default=None, exclude=True)
    """Your own `httpx.Client` (not closed by ChatKimi)."""
    http_async_client: httpx.AsyncClient | None = Field(default=None, exclude=True)
    """Your own `httpx.AsyncClient` (not closed by ChatKimi)."""

    _transport_cache: tuple[tuple[Any, ...], Transport] | None = PrivateAttr(default=None)
    """The transport and the settings it was made for (a copy or an assignment may change them)."""
    _withheld_headers: tuple[str, ...] = PrivateAttr(default=())
    """Credential headers a pickle left out and the loading process did not have."""

    # Aliases are validation-only so that type checkers see the field names in `__init__`
    # (`ChatKimi(model=..., reasoning_effort=...)` type-checks) while `model_name=`,
    # `effort=`, `max_completion_tokens=` and `stop_sequences=` are accepted at runtime too.
    # `hide_input_in_errors`: a validation error would otherwise print the constructor's input,
    # the API key included.
    model_config = ConfigDict(
        populate_by_name=True, arbitrary_types_allowed=True, hide_input_in_errors=True
    )

    # ---------------------------------------------------------------- validation

    @model_validator(mode="before")
    @classmethod
    def _refuse_unknown_arguments(cls, values: Any) -> Any:
        if isinstance(values, dict):
            refuse_unknown(
                values, accepted_names(cls.model_fields), public_fields(cls.model_fields)
            )
        return values

    @field_validator("protocol", mode="before")
    @classmethod
    def _check_protocol(cls, value: Any) -> Any:
        if value not in PROTOCOLS:
            msg = f"protocol must be 'openai' or 'anthropic', got {value!r}"
            raise ValueError(msg)
        return value

    @field_validator("timeout")
    @classmethod
    def _check_timeout(cls, value: float | httpx.Timeout | None) -> float | httpx.Timeout | None:
        transport_timeout(value)  # finite, > 0 and at most a day, per part
        return value

    @field_validator("default_headers", mode="before")
    @classmethod
    def _take_secret_header_values(cls, value: Any) -> Any:
        return secret_headers.accepted(value)

    @field_serializer("default_headers")
    def _mask_credential_headers(
        self, value: dict[str, str] | None
    ) -> dict[str, str | SecretStr] | None:
        return secret_headers.shown(value)

    @field_validator("max_retries")
    @classmethod
    def _check_retries(cls, value: int) -> int:
        return check_max_retries(value)

    @field_validator("rate_limit_timeout")
    @classmethod
    def _check_rate_limit_timeout(cls, value: float) -> float:
        return check_rate_limit_timeout(value)

    @field_validator("max_builtin_rounds")
    @classmethod
    def _check_rounds(cls, value: int) -> int:
        return check_max_builtin_rounds(value)

    @model_validator(mode="after")
    def _complete_after_validation(self) -> Self:
        self._check_connection_settings()
        if self.fallback_base_url == _UNSET_FALLBACK:
            # The documented fallback only backs the documented primary: a custom base URL
            # (a proxy, a test server) never silently falls back to the public gateway.
            default_primary = self.base_url == DEFAULT_BASE_URL
            self.fallback_base_url = DOCUMENTED_FALLBACK_URL if default_primary else None
        # Validate field-level settings now (bad effort, TTL, max_tokens...), not at call time.
        resolve_options(self._defaults(), None, {}, stream=False)
        if self.profile is None:
            self.profile = capabilities(self.model, self.protocol).profile()  # type: ignore[assignment]
        return self

    def _check_connection_settings(self) -> None:
        """Refuse bad base URLs and headers now, not at the first call; drop a trailing `/v1`."""
        explicit_fallback = self.fallback_base_url not in (None, _UNSET_FALLBACK)
        base_url, fallback = check_connection_settings(
            self.base_url,
            self.fallback_base_url if explicit_fallback else None,
            self.default_headers or {},
            allow_insecure_http=self.allow_insecure_http,
        )
        # Assigned only when changed: an assignment marks the field as set.
        if base_url != self.base_url:
            self.base_url = base_url
        if explicit_fallback and fallback != self.fallback_base_url:
            self.fallback_base_url = fallback

    def _defaults(self) -> ModelDefaults:
        return ModelDefaults(
            model=self.model,
            protocol=self.protocol,
            max_tokens=self.max_tokens,
            stop=self.stop,
            reasoning_effort=self.reasoning_effort,
            cache_ttl=self.cache_ttl,
            temperature=self.temperature,
            top_p=self.top_p,
            model_kwargs={**self.model_kwargs, **(self.extra_body or {})},
        )

    @property
    def model_name(self) -> str:
        """The model id, as `ChatOpenAI.model_name` reads it (the same as `model`)."""
        return self.model

    # ---------------------------------------------------------------- LangChain metadata

    @property
    def _llm_type(self) -> str:
        return "kimi-chat"

    @property
    def lc_secrets(self) -> dict[str, str]:
        # `default_headers` is listed so that langchain-core leaves the per-header secret
        # references of `to_json` as they are (it escapes any other kwarg holding such a dict).
        return {"api_key": "EVOLINK_API_KEY", "default_headers": secret_headers.SECRET_ID_PREFIX}

    def to_json(self) -> SerializedConstructor | SerializedNotImplemented:
        serialized = super().to_json()
        if serialized["type"] == "constructor" and self.default_headers is not None:
            headers = secret_headers.serialized(self.default_headers)
            serialized["kwargs"]["default_headers"] = headers
        return serialized

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, secret_headers.shown(value) if name == "default_headers" else value

    @classmethod
    def is_lc_serializable(cls) -> bool:
        return True

    @classmethod
    def get_lc_namespace(cls) -> list[str]:
        return ["langchain_kimi", "chat_models"]

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "protocol": self.protocol,
            "base_url": self.base_url,
            "max_tokens": self.max_tokens,
            "reasoning_effort": self.reasoning_effort,
            "cache_ttl": self.cache_ttl,
            "stop": self.stop,
        }

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        # What the request carries, as ChatAnthropic reports it: a Messages request always
        # carries `max_tokens` (required by 000 and 001); only Chat Completions (004) has
        # `temperature`.
        model = str(kwargs.get("model") or self.model)
        params = LangSmithParams(ls_provider=PROVIDER, ls_model_name=model, ls_model_type="chat")
        temperature = kwargs.get("temperature", self.temperature)
        if temperature is not None and capabilities(model, self.protocol).sampling_on_wire:
            params["ls_temperature"] = temperature
        max_tokens = next(
            (kwargs[name] for name in ("max_tokens", "max_completion_tokens") if name in kwargs),
            self.max_tokens,
        )
        if max_tokens is None:
            max_tokens = adapter(self.protocol).default_max_tokens
        if max_tokens is not None:
            params["ls_max_tokens"] = max_tokens
        stops = stop or kwargs.get("stop") or self.stop
        if isinstance(stops, str):
            stops = [stops]
        if stops and isinstance(stops, list | tuple):  # anything else: the call refuses it
            params["ls_stop"] = list(stops)
        return params

    # ---------------------------------------------------------------- transport life cycle

    def _transport(self) -> Transport:
        # `model_copy(update=...)`, `copy.copy` and plain assignment skip validation and share
        # private attributes: the transport is checked against the settings at every call, so a
        # key is never sent with a copy's old base URL (and a new timeout is not ignored).
        settings = self._transport_settings()
        cached = self._transport_cache
        if cached is not None and cached[0] == settings:
            return cached[1]
        with _TRANSPORT_LOCK:  # threads sharing one model must share one pool
            cached = self._transport_cache
            if cached is None or cached[0] != settings:
                cached = self._transport_cache = (settings, self._new_transport())
            return cached[1]

    def _transport_settings(self) -> tuple[Any, ...]:
        """Every field the transport is built from (`SecretStr` and clients compare by value and
        by identity; the headers are copied: a dict changed in place is a change)."""
        return (
            self.protocol,
            self.base_url,
            self.fallback_base_url,
            self.api_key,
            self.timeout,
            self.max_retries,
            self.rate_limit_timeout,
            dict(self.default_headers or {}),
            self.allow_insecure_http,
            self.adaptive_concurrency,
            self.http_client,
            self.http_async_client,
        )

    def _request_headers(self) -> dict[str, str]:
        """The protocol's headers (Messages: `anthropic-version`), then the caller's, which
        replace a protocol header of the same name in any case."""
        own = dict(self.default_headers or {})
        replaced = {name.lower() for name in own}
        protocol_headers = adapter(self.protocol).headers.items()
        return {**{k: v for k, v in protocol_headers if k.lower() not in replaced}, **own}

    def _new_transport(self) -> Transport:
        if self.api_key is None or not self.api_key.get_secret_value():
            msg = (
                "No EvoLink API key: set the EVOLINK_API_KEY environment variable or pass "
                "ChatKimi(api_key=...). To try ChatKimi without a key (FakeKimiGateway, "
                "replayed cassettes), see docs/without-a-key.md"
            )
            raise ValueError(msg)
        secret_headers.check_present(self.default_headers, self._withheld_headers)
        config = TransportConfig(
            base_url=self.base_url,
            fallback_base_url=self.fallback_base_url,
            api_key=self.api_key,
            timeout=transport_timeout(self.timeout),  # checked again: assignments skip validation
            max_retries=self.max_retries,
            rate_limit_timeout=self.rate_limit_timeout,
            default_headers=self._request_headers(),
            allow_insecure_http=self.allow_insecure_http,
            adaptive_concurrency=self.adaptive_concurrency,
        )
        return Transport(
            config, http_client=self.http_client, http_async_client=self.http_async_client
        )

    def close(self) -> None:
        """Close the pooled HTTP clients ChatKimi created (they are re-created on next use)."""
        if self._transport_cache is not None:
            self._transport_cache[1].close()
            self._transport_cache = None

    async def aclose(self) -> None:
        """Async twin of `close`: close the pooled clients ChatKimi created (on their loops).

        Your own `http_client` / `http_async_client` are left open. The model stays usable:
        the next call opens new connections. `async with ChatKimi(...) as model:` calls it."""
        if self._transport_cache is not None:
            await self._transport_cache[1].aclose()
            self._transport_cache = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getstate__(self) -> dict[Any, Any]:
        # Live HTTP clients don't pickle: drop them; they are re-created lazily after loading.
        # The key is never written into a pickle either: the loading process reads it from its
        # own EVOLINK_API_KEY (as LangChain's own serialization does with secrets).
        state = super().__getstate__()
        private = dict(state.get("__pydantic_private__") or {})
        private["_transport_cache"] = None
        state["__pydantic_private__"] = private
        fields = dict(state["__dict__"])
        fields["http_client"] = None
        fields["http_async_client"] = None
        fields["api_key"] = None
        # Credential headers go the key's way: left out, read back from the loading process's
        # environment (`EVOLINK_HEADER_<NAME>`), and a call refused while one is missing.
        fields["default_headers"], private["_withheld_headers"] = secret_headers.for_pickle(
            self.default_headers, self._withheld_headers
        )
        state["__dict__"] = fields
        return state

    def __setstate__(self, state: dict[Any, Any]) -> None:
        super().__setstate__(state)
        if self.api_key is None:
            self.__dict__["api_key"] = secret_from_env("EVOLINK_API_KEY", default=None)()
        headers, missing = secret_headers.from_environment(
            self.default_headers, self._withheld_headers
        )
        self.__dict__["default_headers"] = headers
        self._withheld_headers = missing

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        # Deep-copy the settings, share the caller's own httpx clients, never the pooled ones.
        shared = {"http_client", "http_async_client"}
        fields = {
            name: getattr(self, name)
            if name in shared
            else copy.deepcopy(getattr(self, name), memo)
            for name in type(self).model_fields
        }
        copied = type(self).model_construct(_fields_set=set(self.model_fields_set), **fields)
        copied._withheld_headers = self._withheld_headers
        return copied

    # ---------------------------------------------------------------- calls

    def _plan_settings(self) -> PlanSettings:
        """What every plan of this model starts from (its fields, checked at construction)."""
        secret = self.api_key.get_secret_value() if self.api_key is not None else ""
        return PlanSettings(
            self._defaults(),
            self.max_builtin_rounds,
            secret=secret,
            other_secrets=secret_headers.values(self.default_headers),
        )

    # LangChain's call hooks are written once, async, in `_call/_async/drivers.py`; the sync ones
    # are generated from them (`tools/unasync.py`), so the two halves cannot drift apart.
    _generate = drivers.generate
    _agenerate = async_drivers.agenerate
    _stream = drivers.stream
    _astream = async_drivers.astream

    def _stream_usage(self, kwargs: dict[str, Any]) -> bool:
        """A call's `stream_usage=` (taken out: it is no body field), else the field."""
        value = kwargs.pop("stream_usage", None)
        return self.stream_usage if value is None else bool(value)

    def _combine_llm_outputs(self, llm_outputs: list[dict[str, Any] | None]) -> dict[str, Any]:
        """`generate()`'s `llm_output`: the calls' usage objects added up, as ChatOpenAI does."""
        usage: dict[str, Any] | None = None
        for output in llm_outputs:
            part = (output or {}).get("token_usage")
            if isinstance(part, dict):
                usage = sum_usage(usage, part)
        combined: dict[str, Any] = {"model_name": self.model}
        if usage:
            combined["token_usage"] = usage
        return combined

    # langchain-core reads the blocks of the messages before any hook above runs, and dies on
    # some with a bare error (a v0 text file): every way in refuses them first, in our words.

    def _convert_input(self, model_input: LanguageModelInput) -> PromptValue:
        prompt = super()._convert_input(model_input)
        refuse_unreadable_blocks([prompt.to_messages()])
        return prompt

    def generate(self, messages: list[list[BaseMessage]], *args: Any, **kwargs: Any) -> LLMResult:
        refuse_unreadable_blocks(messages)
        return super().generate(messages, *args, **kwargs)

    async def agenerate(
        self, messages: list[list[BaseMessage]], *args: Any, **kwargs: Any
    ) -> LLMResult:
        refuse_unreadable_blocks(messages)
        return await super().agenerate(messages, *args, **kwargs)

    # ---------------------------------------------------------------- calls in tasks / threads

    # langchain-core runs these in tasks or threads of their own, whose stacks do not reach the
    # caller: the caller's line is recorded first, so that a warning names it (`_warn`).

    ainvoke = from_caller(BaseChatModel.ainvoke)
    batch = from_caller(BaseChatModel.batch)
    abatch = from_caller(BaseChatModel.abatch)

    # ---------------------------------------------------------------- token estimate

    def get_num_tokens(self, text: str) -> int:
        """Offline estimate (no counting endpoint exists): about 4 ASCII characters or 1
        non-ASCII character per token."""
        return estimate_text_tokens(text)

    def get_num_tokens_from_messages(
        self, messages: list[BaseMessage], tools: Sequence[Any] | None = None
    ) -> int:
        """Offline estimate of the prompt size, for budgeting the 1,048,576-token context.

        About 4 ASCII characters or 1 non-ASCII character per token, plus 4 per message;
        the exact count arrives in each reply's `usage_metadata`.
        """
        return estimate_message_tokens(convert_to_messages(messages), tools or ())

    # ---------------------------------------------------------------- tools and structure

    def bind_tools(
        self,
        tools: Sequence[ToolLike],
        *,
        tool_choice: str | bool | dict[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        strict: bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools (any LangChain tool form, plus `"web_search"`) with an optional choice.

        `tool_choice`: `"auto"`, `"any"` / `"required"` / `True`, `"none"`, a tool name or a
        dict; mapped per model x protocol to the documented forms (see the docs' table).
        Invalid tools or choices raise `ValueError` here, before any call.
        """
        specs = to_tool_specs(tools, strict=strict)
        bound: dict[str, Any] = {"tools": [spec_to_bindable(spec) for spec in specs]}
        if tool_choice is not None:
            bound["tool_choice"] = tool_choice
        if parallel_tool_calls is not None:
            bound["parallel_tool_calls"] = parallel_tool_calls
        # Fail now, not at the first call: resolve once with the same rules as a real call.
        resolve_options(
            self._defaults(), None, {**kwargs, **bound}, stream=False, defaults_checked=True
        )
        return super().bind(**bound, **kwargs)

    def with_structured_output(
        self,
        schema: dict[str, Any] | type | None = None,
        *,
        method: Literal["json_schema", "function_calling", "json_mode"] = "json_schema",
        include_raw: bool = False,
        strict: bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, dict[str, Any] | Any]:
        """Structured output, native where documented.

        `method="json_schema"` (default) uses the service's native structured output where the
        model x protocol documents it and falls back to a forced tool call elsewhere;
        `"function_calling"` always uses a tool; `"json_mode"` asks for a JSON object (without
        a schema on Chat Completions only). `include_raw=True` returns
        `{"raw", "parsed", "parsing_error"}`. The docs' structured-output page has the table."""
        # Imported on first use: its output parsers cost a fifth of this package's import time.
        from langchain_kimi._langchain import structured as _structured

        return _structured.build(
            self, schema, method=method, include_raw=include_raw, strict=strict, **kwargs
        )


__all__ = ["ChatKimi"]
