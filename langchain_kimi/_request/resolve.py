"""Resolve ChatKimi's fields plus one call's kwargs into a validated `RequestOptions`.

Every refusal that depends on the model x protocol lives here, driven by the capability table
(`profiles.py`), before any network call, with a `ValueError` that says what to change. The
adapters' `build_request` only rejects shapes its wire cannot express.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_kimi._request.options import (
    OutputFormat,
    RequestOptions,
    ToolSpec,
    WebSearchToolSpec,
)
from langchain_kimi._request.profiles import (
    CACHE_TTLS,
    Capabilities,
    Protocol,
    capabilities,
    normalize_effort,
)
from langchain_kimi._request.tools import (
    output_format_from_response_format,
    resolve_tool_choice,
    to_tool_specs,
)
from langchain_kimi._warn import warn

# Call kwargs that LangChain or agents pass for tracing/bookkeeping only: never sent.
_TRACING_ONLY = frozenset({"ls_structured_output_format", "ls_structured_output_format_kwargs"})
_KNOWN_CALL_KWARGS = frozenset(
    {
        "model",
        "max_tokens",
        "max_completion_tokens",
        "stop",
        "stop_sequences",
        "reasoning_effort",
        "effort",
        "cache_ttl",
        "temperature",
        "top_p",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "strict",
        "response_format",
        "extra_body",
        "stream",
    }
)


@dataclass(frozen=True)
class ModelDefaults:
    """The ChatKimi fields that shape a request body (per-call kwargs override them)."""

    model: str
    protocol: Protocol
    max_tokens: int | None = None
    stop: Sequence[str] | None = None
    reasoning_effort: str | None = None
    cache_ttl: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    model_kwargs: Mapping[str, Any] = field(default_factory=dict)


def _check_max_tokens(value: object, caps: Capabilities) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"max_tokens must be an integer, got {value!r}"
        raise ValueError(msg)
    if not 1 <= value <= caps.max_tokens_limit:
        msg = f"max_tokens must be between 1 and {caps.max_tokens_limit:,}, got {value:,}"
        raise ValueError(msg)
    return value


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_stop(stop: object, caps: Capabilities) -> tuple[str, ...]:
    if stop is None:
        return ()
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, Sequence) or not all(isinstance(s, str) and s for s in stop):
        msg = f"stop must be a list of non-empty strings, got {stop!r}"
        raise ValueError(msg)
    stops = tuple(stop)
    for seq in stops:
        if not _encodes(seq):
            msg = (
                f"stop sequence {seq!r} holds a lone surrogate, which UTF-8 cannot encode "
                "(text must be valid Unicode): remove or replace it"
            )
            raise ValueError(msg)
    if caps.stop_sequences and caps.known:
        # anthropic K3.1 `stop_sequences`: at most 5, each at most 32 bytes (documented).
        if len(stops) > caps.max_stop_sequences:
            msg = f"at most {caps.max_stop_sequences} stop sequences are allowed, got {len(stops)}"
            raise ValueError(msg)
        for seq in stops:
            size = len(seq.encode("utf-8"))
            if size > caps.max_stop_sequence_bytes:
                msg = (
                    f"stop sequence {seq!r} is {size} bytes in UTF-8; "
                    f"the limit is {caps.max_stop_sequence_bytes}"
                )
                raise ValueError(msg)
    return stops


def _check_extra_body(value: object) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        msg = f"extra_body must be a dict of body field names to values, got {value!r:.80}"
        raise ValueError(msg)
    return value


def _check_effort(value: object, caps: Capabilities) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        msg = f"reasoning_effort must be a string, got {value!r}"
        raise ValueError(msg)
    effort = normalize_effort(value)
    if not caps.supports_effort(effort):
        msg = (
            f"{caps.model} accepts reasoning_effort {' / '.join(caps.efforts)} only; "
            f"got {value!r}" + (f" (= {effort!r})" if effort != value else "")
        )
        raise ValueError(msg)
    return effort


def _check_cache_ttl(value: object, caps: Capabilities) -> str | None:
    if value is None:
        return None
    if value not in CACHE_TTLS:
        msg = f"cache_ttl must be one of {', '.join(CACHE_TTLS)}, got {value!r}"
        raise ValueError(msg)
    if caps.known and not caps.cache_ttl:
        msg = (
            f"{caps.model} has no cache TTL option on the {caps.protocol} protocol; drop cache_ttl"
        )
        raise ValueError(msg)
    return str(value)


# What 004 (Chat Completions) says of the sampling fields; the Messages documents (000, 001)
# have no such fields at all.
_CHAT_SAMPLING_DOC = {
    "temperature": "Temperatura de muestreo, fijada por el modelo en `1`",
    "top_p": "Umbral de muestreo nucleus, fijado por el modelo en `0.95`",
}
_K31_IGNORES = "`kimi-k3.1-pro` / `kimi-k3.1-pro-highspeed` lo ignoran automáticamente"
_K3_REFUSES = "`kimi-k3` devuelve un error para valores no admitidos"


def _ignored_sampling_warning(name: str, value: float, caps: Capabilities) -> str:
    documented = f'004 (Chat Completions): "{_CHAT_SAMPLING_DOC[name]}"'
    if caps.sampling_on_wire:
        return (
            f'{caps.model} ignores {name}; {documented}, "{_K31_IGNORES}". {value} is sent '
            "and has no effect"
        )
    return (
        f"{caps.model} on the Messages protocol: {name}={value} is not sent, its document "
        f'names no {name} field. {documented}; "{_K31_IGNORES}"; "{_K3_REFUSES}"'
    )


def _check_sampling(
    name: str, value: object, fixed: float, caps: Capabilities, *, announce: bool
) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        msg = f"{name} must be a finite number, got {value!r}"
        raise ValueError(msg)
    if caps.known and caps.fixed_sampling and value != fixed:
        msg = f"{caps.model} only accepts {name}={fixed} (fixed by the model); got {value}"
        raise ValueError(msg)
    if announce and caps.known and not caps.fixed_sampling and value != fixed:
        warn(_ignored_sampling_warning(name, value, caps))
    return float(value) if caps.sampling_on_wire else None


def _sampling(
    name: Literal["temperature", "top_p"],
    kwargs: Mapping[str, Any],
    defaults: ModelDefaults,
    caps: Capabilities,
    defaults_checked: bool,
) -> float | None:
    """A call's `temperature` / `top_p` (or the model's own): the model's field was warned
    about once, at construction; a call argument is warned about at the call."""
    value = _first_set(kwargs, name, default=getattr(defaults, name))
    announce = not defaults_checked or kwargs.get(name) is not None
    fixed = caps.fixed_temperature if name == "temperature" else caps.fixed_top_p
    return _check_sampling(name, value, fixed, caps, announce=announce)


def _check_tools(specs: tuple[ToolSpec, ...], caps: Capabilities) -> None:
    if caps.known and not caps.web_search and any(isinstance(s, WebSearchToolSpec) for s in specs):
        msg = (
            f"built-in web search is not available for {caps.model} on the {caps.protocol} "
            "protocol; use protocol='openai' (all models) or a K3.1 model"
        )
        raise ValueError(msg)
    if caps.max_tools is not None and len(specs) > caps.max_tools:
        # 004's `maxItems: 128`, held for unknown models too; the Messages documents set no limit.
        msg = (
            f"at most {caps.max_tools} tools may be bound on the {caps.protocol} protocol; "
            f"got {len(specs)}"
        )
        raise ValueError(msg)


def _check_output_format(fmt: OutputFormat | None, caps: Capabilities) -> None:
    if fmt is None or not caps.known:
        return
    if fmt.kind == "json_object" and not caps.json_mode:
        msg = (
            f"JSON mode (response_format json_object) is not documented on the {caps.protocol} "
            "protocol; pass a schema, or use protocol='openai'"
        )
        raise ValueError(msg)
    if fmt.kind == "json_schema" and not caps.native_structured_output:
        msg = (
            f"{caps.model} has no native structured output on the {caps.protocol} protocol; "
            "use with_structured_output(..., method='function_calling') or protocol='openai'"
        )
        raise ValueError(msg)


def _check_unknown_kwargs(kwargs: Mapping[str, Any]) -> None:
    unknown = set(kwargs) - _KNOWN_CALL_KWARGS - _TRACING_ONLY
    if unknown:
        msg = (
            f"unexpected call arguments {sorted(unknown)}; pass undocumented body fields via "
            "extra_body={...} (per call) or model_kwargs={...} (on the model)"
        )
        raise ValueError(msg)


def _first_set(kwargs: Mapping[str, Any], *names: str, default: Any = None) -> Any:
    for name in names:
        if kwargs.get(name) is not None:
            return kwargs[name]
    return default


_parallel_warned = False


def _warn_parallel(value: object) -> None:
    global _parallel_warned
    if value is False and not _parallel_warned:
        _parallel_warned = True
        warn(
            "parallel_tool_calls=False has no documented field on either Kimi protocol and is "
            "not sent; the model may still return several tool calls"
        )


def resolve_options(
    defaults: ModelDefaults,
    stop: Sequence[str] | None,
    kwargs: Mapping[str, Any],
    *,
    stream: bool,
    defaults_checked: bool = False,
) -> RequestOptions:
    """Validate and combine; raises ValueError before anything is sent.

    `defaults_checked`: the model's own fields were resolved (and warned about) at construction,
    so only the call's arguments may warn now: one warning per setting, not one per call.
    """
    _check_unknown_kwargs(kwargs)
    caps = capabilities(str(kwargs.get("model") or defaults.model), defaults.protocol)
    specs = to_tool_specs(kwargs.get("tools") or (), strict=kwargs.get("strict"))
    _check_tools(specs, caps)
    output_format = output_format_from_response_format(kwargs.get("response_format"))
    _check_output_format(output_format, caps)
    _warn_parallel(kwargs.get("parallel_tool_calls"))
    extra_body = {**defaults.model_kwargs, **_check_extra_body(kwargs.get("extra_body"))}
    return RequestOptions(
        caps=caps,
        max_tokens=_check_max_tokens(
            _first_set(kwargs, "max_tokens", "max_completion_tokens", default=defaults.max_tokens),
            caps,
        ),
        stop=_check_stop(
            stop
            if stop is not None
            else _first_set(kwargs, "stop", "stop_sequences", default=defaults.stop),
            caps,
        ),
        reasoning_effort=_check_effort(
            _first_set(kwargs, "reasoning_effort", "effort", default=defaults.reasoning_effort),
            caps,
        ),
        cache_ttl=_check_cache_ttl(
            _first_set(kwargs, "cache_ttl", default=defaults.cache_ttl), caps
        ),
        temperature=_sampling("temperature", kwargs, defaults, caps, defaults_checked),
        top_p=_sampling("top_p", kwargs, defaults, caps, defaults_checked),
        tools=specs,
        tool_choice=resolve_tool_choice(kwargs.get("tool_choice"), specs) if specs else None,
        output_format=output_format,
        stream=stream,
        extra_body=extra_body,
    )
