"""Whether a scripted reply is one the service could send to the request it answers.

A reply the request makes impossible is a mistake in the test's script, not an answer: the
gateway raises `ScriptError` naming the step and the request instead of serving it.
- a call to a tool the request does not declare;
- tool calls under `tool_choice` none (004 `"none"`, 000 `{"type": "none"}`: "none desactiva
  las herramientas"); no tool call under any / required / a named tool (000: "any exige una
  llamada"; 001: "tool exige la herramienta indicada"), or a call to another tool than the named;
- text that is not JSON for the schema under a `json_schema` format (004 `response_format`:
  "salida conforme al esquema"; 000 `output_config.format`: "devuelve JSON que sigue
  estrictamente el JSON Schema proporcionado");
- more searches than the web search tool's `max_uses` (000: "Máximo de búsquedas permitidas en
  esta respuesta");
- what a protocol cannot carry: `refusal` outside K3.1 Messages (the only `stop_reason` enum
  with it), a search error on Chat Completions (004 has no such object), raw arguments that are
  no JSON object in a Messages JSON reply (000 `ToolUseBlock.input` is an object);
- a 1h cache write split on kimi-k3 (004 / 001: the cache TTL is K3.1's only).
"""

from __future__ import annotations

import json
from typing import Any

from langchain_kimi.testing.documents import schema_problem
from langchain_kimi.testing.prose import declared_tools
from langchain_kimi.testing.script import Reply, WebSearch
from langchain_kimi.testing.wire import tool_input


def problem(step: Reply | WebSearch, body: dict[str, Any], protocol: str) -> str | None:
    """Why the service could not send `step` in answer to `body` (None: it could)."""
    if isinstance(step, WebSearch):
        if protocol == "openai" and step.error_code is not None:
            return "a web search error: Chat Completions (004) has no search error object"
        return None
    for check in (_tools, _tool_choice, _format, _protocol_limits):
        found = check(step, body, protocol)
        if found is not None:
            return found
    return None


def _tools(step: Reply, body: dict[str, Any], protocol: str) -> str | None:
    declared = declared_tools(body, protocol)
    undeclared = sorted({c.name for c in step.tool_calls} - declared)
    if undeclared:
        return f"calls {undeclared}, which the request does not declare (tools: {sorted(declared)})"
    return None


def _choice(body: dict[str, Any], protocol: str) -> tuple[str, str | None]:
    """(mode, name): auto | none | any | named."""
    choice = body.get("tool_choice")
    if isinstance(choice, str):
        return ("any" if choice == "required" else choice), None
    if not isinstance(choice, dict):
        return "auto", None
    if protocol == "openai":
        return "named", str((choice.get("function") or {}).get("name"))
    kind = str(choice.get("type"))
    return ("named", str(choice.get("name"))) if kind == "tool" else (kind, None)


def _tool_choice(step: Reply, body: dict[str, Any], protocol: str) -> str | None:
    mode, name = _choice(body, protocol)
    if mode == "none" and step.tool_calls:
        return "calls a tool, but the request's tool_choice is none"
    cut = step.finish == "max_tokens"  # a reply cut at max_tokens has no complete call
    if mode in ("any", "named") and not step.tool_calls and not step.refusal and not cut:
        return f"calls no tool, but the request's tool_choice forces one ({mode})"
    if mode == "named" and any(c.name != name for c in step.tool_calls):
        return f"calls another tool than the one tool_choice names ({name!r})"
    return None


def _json_schema(body: dict[str, Any], protocol: str) -> dict[str, Any] | None:
    if protocol == "openai":
        form = body.get("response_format") or {}
        if form.get("type") == "json_object":
            return {}
        if form.get("type") == "json_schema":
            schema = (form.get("json_schema") or {}).get("schema")
            return schema if isinstance(schema, dict) else {}
        return None
    form = (body.get("output_config") or {}).get("format") or {}
    schema = form.get("schema") if form.get("type") == "json_schema" else None
    return schema if isinstance(schema, dict) else None


def _format(step: Reply, body: dict[str, Any], protocol: str) -> str | None:
    schema = _json_schema(body, protocol)
    if schema is None or step.tool_calls or step.refusal or step.finish is not None:
        return None
    try:
        value = json.loads(step.text)
    except ValueError:
        return f"answers {step.text[:60]!r}, not JSON, under a JSON response format"
    problem = schema_problem(value, schema)
    return None if problem is None else f"answers JSON the request's schema refuses ({problem})"


def _protocol_limits(step: Reply, body: dict[str, Any], protocol: str) -> str | None:
    model = body.get("model")
    if step.refusal and (protocol != "anthropic" or model == "kimi-k3"):
        return "a refusal: only K3.1 Messages has the stop_reason refusal (000)"
    raw_only = any(tool_input(c) is None for c in step.tool_calls)
    if protocol == "anthropic" and not body.get("stream") and raw_only:
        return (
            "raw arguments that are no JSON object: a Messages JSON reply carries tool "
            "input as an object (000 ToolUseBlock.input); stream the request instead"
        )
    if model == "kimi-k3" and (step.usage or {}).get("cache_write_1h"):
        return "a 1h cache write: kimi-k3 has no cache TTL (004: solo la serie K3.1)"
    limit = _max_uses(body)
    # A search beyond max_uses comes back as an error result (`error_code`), not as results.
    run = [s for s in step.searches if s.error_code is None]
    if protocol == "anthropic" and limit is not None and len(run) > limit:
        return f"runs {len(run)} searches, beyond the web search tool's max_uses {limit}"
    return None


def _max_uses(body: dict[str, Any]) -> int | None:
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("name") == "web_search" and "max_uses" in tool:
            value = tool["max_uses"]
            return value if isinstance(value, int) else None
    return None


def declares_web_search(body: dict[str, Any]) -> bool:
    """Whether the request declares the built-in web search (either protocol's form)."""
    return any(
        isinstance(t, dict) and (t.get("type") == "web_search" or t.get("name") == "web_search")
        for t in body.get("tools") or []
    )
