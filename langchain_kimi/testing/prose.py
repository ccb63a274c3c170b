"""What the documents say in prose (not in the request schemas), and the assumed points, checked
on every request the fake gateway receives.

Documented (each refusal quotes its document):
- 004, kimi-k3 on Chat Completions: `temperature` "fijada por el modelo en `1` ... `kimi-k3`
  devuelve un error para valores no admitidos" (fixed at 1; kimi-k3 returns an error for other
  values); `top_p` the same at 0.95; `reasoning_effort` "`kimi-k3`: solo se admite `max`" (only
  max); `prompt_cache_options` "`kimi-k3` no admite este parámetro" (not supported).
- 000, K3.1 Messages `stop_sequences`: "Máximo 5 secuencias, de hasta 32 bytes cada una".

Assumed (the rows of `assumptions.py`, by question id): `chat-image-url`, `chat-stop`,
`anthropic-version`, `output-format-non-strict`, `k3-tool-blocks-without-tools`,
`tools-omit-history-tools`, `max-tokens-near-full-context`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from langchain_kimi.testing.assumptions import Assumed

CONTEXT_WINDOW = 1_048_576
"""000 / 001 / 004: "una ventana de contexto de 1.048.576 tokens"."""
MAX_STOP_SEQUENCE_BYTES = 32
_K3_FIXED = (("temperature", 1, "fijada por el modelo en `1`"), ("top_p", 0.95, "en `0.95`"))


def documented(body: dict[str, Any], protocol: str) -> list[str]:
    """What 004's and 000's prose refuses."""
    found: list[str] = []
    model = body.get("model")
    if protocol == "openai" and model == "kimi-k3":
        for name, fixed, quote in _K3_FIXED:
            if name in body and body[name] != fixed:
                found.append(
                    f"{name}: kimi-k3 accepts only {fixed} (004: {quote}; `kimi-k3` devuelve un "
                    "error para valores no admitidos)"
                )
        effort = body.get("reasoning_effort")
        if effort is not None and effort != "max":
            found.append(
                f"reasoning_effort: kimi-k3 supports only 'max', got {effort!r} (004: "
                "`kimi-k3`: solo se admite `max`)"
            )
        if "prompt_cache_options" in body:
            found.append(
                "prompt_cache_options: not supported by kimi-k3 (004: `kimi-k3` no admite este "
                "parámetro)"
            )
    if protocol == "anthropic" and model != "kimi-k3":
        for index, stop in enumerate(body.get("stop_sequences") or []):
            size = len(str(stop).encode("utf-8"))
            if size > MAX_STOP_SEQUENCE_BYTES:
                found.append(
                    f"stop_sequences/{index}: {size} bytes, over 32 (000: de hasta 32 bytes cada "
                    "una)"
                )
    return found


def assumed(
    body: dict[str, Any],
    protocol: str,
    headers: Mapping[str, str],
    choices: Assumed,
    request: int,
) -> list[str]:
    """The points resting on an assumption: each recorded, refused when its row is strict."""
    found = []
    for question, detail in _assumed_points(body, protocol, headers):
        refusal = choices.judge(question, request, detail)
        if refusal is not None:
            found.append(refusal)
    return found


def _assumed_points(
    body: dict[str, Any], protocol: str, headers: Mapping[str, str]
) -> Iterator[tuple[str, str]]:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if protocol == "openai":
        if "stop" in body:
            yield "chat-stop", "stop: not a field of 004's ChatCompletionRequest"
        if any(_web_image(m) for m in messages):
            yield "chat-image-url", "an image given by http(s) URL (004: URL data Base64)"
    else:
        if "anthropic-version" not in headers:
            yield "anthropic-version", "a Messages request without the anthropic-version header"
        schema = ((body.get("output_config") or {}).get("format") or {}).get("schema")
        if body.get("model") != "kimi-k3" and isinstance(schema, dict) and not _strict(schema):
            yield (
                "output-format-non-strict",
                "output_config.format.schema is not in strict form",
            )
        yield from _context_points(body)
    yield from _tool_points(body, protocol, messages)


def _tool_points(
    body: dict[str, Any], protocol: str, messages: list[dict[str, Any]]
) -> Iterator[tuple[str, str]]:
    used = _history_tools(messages, protocol)
    if not used:
        return
    declared = _declared_tools(body, protocol)
    if protocol == "anthropic" and body.get("model") == "kimi-k3" and not body.get("tools"):
        yield (
            "k3-tool-blocks-without-tools",
            "kimi-k3: tool_use / tool_result blocks in the history and no tools",
        )
        return
    omitted = sorted(used - declared)
    if omitted:
        yield (
            "tools-omit-history-tools",
            f"tools omit {omitted}, which the history calls",
        )


def _history_tools(messages: list[dict[str, Any]], protocol: str) -> set[str]:
    used: set[str] = set()
    for message in messages:
        if message.get("role") != "assistant":
            continue
        if protocol == "openai":
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict) and call.get("type") == "function":
                    used.add(str((call.get("function") or {}).get("name")))
        elif isinstance(message.get("content"), list):
            used |= {
                str(b.get("name"))
                for b in message["content"]
                if isinstance(b, dict) and b.get("type") == "tool_use"
            }
    return used


def declared_tools(body: dict[str, Any], protocol: str) -> set[str]:
    """The function tools a request declares, by name (web search excluded)."""
    return _declared_tools(body, protocol)


def _declared_tools(body: dict[str, Any], protocol: str) -> set[str]:
    names = set()
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if protocol == "openai" and tool.get("type") == "function":
            names.add(str((tool.get("function") or {}).get("name")))
        elif protocol == "anthropic" and "input_schema" in tool:
            names.add(str(tool.get("name")))
    return names


def _web_image(message: dict[str, Any]) -> bool:
    content = message.get("content")
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "image_url":
            url = part.get("image_url")
            text = url.get("url") if isinstance(url, dict) else url
            if isinstance(text, str) and text.startswith(("http://", "https://")):
                return True
    return False


def _strict(schema: Any) -> bool:
    """Every object closed (`additionalProperties: false`) with all its properties required."""
    if isinstance(schema, list):
        return all(_strict(item) for item in schema)
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required") or []) != set(properties):
            return False
    return all(_strict(value) for key, value in schema.items() if key != "enum")


def _context_points(body: dict[str, Any]) -> Iterator[tuple[str, str]]:
    budget = body.get("max_tokens")
    if not isinstance(budget, int):
        return
    prompt = len(json.dumps([body.get("system"), body.get("messages"), body.get("tools")])) // 4
    if prompt + budget > CONTEXT_WINDOW:
        yield (
            "max-tokens-near-full-context",
            f"max_tokens {budget} + a prompt of about {prompt} tokens exceed the context window "
            f"of {CONTEXT_WINDOW}",
        )
