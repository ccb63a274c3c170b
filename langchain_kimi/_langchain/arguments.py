"""Strict constructor arguments: an unknown name is an error naming the closest field.

LangChain's base model ignores unknown constructor arguments (and ChatOpenAI / ChatAnthropic /
ChatDeepSeek move them into `model_kwargs` with a warning), so `ChatKimi(api_base=url)` would
quietly send requests to the default gateway. ChatKimi refuses them, as it refuses unknown call
arguments, and points at the field the caller most likely meant.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import AliasChoices
from pydantic.fields import FieldInfo

# The names the peer integrations use for settings ChatKimi has under another name.
_PEER_NAMES = {
    "api_base": "base_url",
    "openai_api_base": "base_url",
    "anthropic_api_url": "base_url",
    "base": "base_url",
    "url": "base_url",
    "endpoint": "base_url",
    "openai_api_key": "api_key",
    "anthropic_api_key": "api_key",
    "deepseek_api_key": "api_key",
    "moonshot_api_key": "api_key",
    "request_timeout": "timeout",
    "default_request_timeout": "timeout",
    "stop_sequence": "stop",
    "thinking": "reasoning_effort",
    "reasoning": "reasoning_effort",
    "max_output_tokens": "max_tokens",
    "max_tokens_to_sample": "max_tokens",
    "prompt_cache_options": "cache_ttl",
    # ChatOpenAI's OpenAI SDK clients: ChatKimi takes httpx clients.
    "client": "http_client",
    "root_client": "http_client",
    "async_client": "http_async_client",
    "root_async_client": "http_async_client",
}
# Peer settings spelled like a field that means something else: no suggestion (ChatAnthropic's
# `top_k` is not `top_p`, ChatOpenAI's `verbosity` of the answer not LangChain's `verbose`).
_NOT_CLOSE = frozenset({"top_k", "verbosity"})
_PROXY_NAMES = frozenset({"proxy", "proxies", "openai_proxy", "anthropic_proxy"})


def accepted_names(fields: Mapping[str, FieldInfo]) -> set[str]:
    """Every field name plus every validation alias (`model_name`, `effort`, ...)."""
    names = set(fields)
    for info in fields.values():
        if isinstance(info.validation_alias, AliasChoices):
            names.update(c for c in info.validation_alias.choices if isinstance(c, str))
        elif isinstance(info.validation_alias, str):
            names.add(info.validation_alias)
        if info.alias:
            names.add(info.alias)
    return names


def refuse_unknown(given: Iterable[str], accepted: set[str], public: Iterable[str]) -> None:
    """Raise ValueError for the first unknown argument, suggesting the closest public field."""
    unknown = sorted(name for name in given if name not in accepted)
    if not unknown:
        return
    hints = [_hint(name, sorted(public)) for name in unknown]
    listed = ", ".join(f"`{name}`" for name in unknown)
    msg = (
        f"ChatKimi got unexpected argument{'s' if len(unknown) > 1 else ''} {listed}. "
        + " ".join(h for h in hints if h)
        + " Undocumented request-body fields go in model_kwargs={...} (or extra_body={...})."
    )
    raise ValueError(" ".join(msg.split()))


def _hint(name: str, public: list[str]) -> str:
    if name in _PROXY_NAMES:
        return (
            f"For `{name}`, pass http_client=httpx.Client(proxy=...) and "
            "http_async_client=httpx.AsyncClient(proxy=...) (or set HTTPS_PROXY)."
        )
    suggestion = _PEER_NAMES.get(name)
    if suggestion is None and name not in _NOT_CLOSE:
        close = difflib.get_close_matches(name, public, n=1, cutoff=0.75)
        suggestion = close[0] if close else None
    return f"For `{name}`, did you mean `{suggestion}`?" if suggestion else ""


def public_fields(fields: Mapping[str, Any]) -> list[str]:
    return [name for name in fields if not name.startswith("_")]
