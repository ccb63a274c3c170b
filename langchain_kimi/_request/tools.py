"""LangChain tools, tool_choice values and output schemas -> protocol-neutral specs.

Accepted tools: `BaseTool`s, functions, pydantic models, TypedDicts, JSON-schema dicts,
OpenAI-format dicts, Anthropic-format dicts (`{name, description, input_schema}`), and the
gateway's built-in web search in any of its spellings (`"web_search"`, `{"type": "web_search"}`,
`{"type": "web_search_20250305", "name": "web_search", "max_uses": N}`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_json_schema, convert_to_openai_tool
from pydantic import BaseModel, TypeAdapter
from typing_extensions import is_typeddict

from langchain_kimi._request.options import (
    FunctionToolSpec,
    OutputFormat,
    ToolChoice,
    ToolSpec,
    WebSearchToolSpec,
)
from langchain_kimi._warn import warn

ToolLike = dict[str, Any] | type | Callable[..., Any] | BaseTool | str
_ANTHROPIC_WEB_SEARCH_PREFIX = "web_search_"


def _is_web_search(tool: object) -> bool:
    if tool == "web_search":
        return True
    if not isinstance(tool, dict):
        return False
    kind = tool.get("type")
    return kind == "web_search" or (
        isinstance(kind, str) and kind.startswith(_ANTHROPIC_WEB_SEARCH_PREFIX)
    )


_MESSAGES_WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}
_MESSAGES_WEB_SEARCH_FORM = (
    '{"type": "web_search_20250305", "name": "web_search"} with an optional "max_uses": <int >= 1>'
)


def _web_search_spec(tool: str | dict[str, Any]) -> WebSearchToolSpec:
    if isinstance(tool, str):
        return WebSearchToolSpec()
    # An option given as None is absent: Anthropic's SDK types and pydantic-ai spell the tool
    # with every option present (`"allowed_domains": None`, ...).
    tool = {key: value for key, value in tool.items() if value is not None}
    max_uses = tool.get("max_uses")
    messages_form = tool.get("type", "").startswith(_ANTHROPIC_WEB_SEARCH_PREFIX)
    if max_uses is not None and (
        isinstance(max_uses, bool) or not isinstance(max_uses, int) or max_uses < 1
    ):
        msg = f"web_search max_uses must be a positive integer, got {max_uses!r}"
        if messages_form:
            msg += f"; the documented form is {_MESSAGES_WEB_SEARCH_FORM}"
        raise ValueError(msg)
    if not messages_form:
        return WebSearchToolSpec(max_uses=max_uses)
    # The Messages form is sent as given, so it must be exactly 000's WebSearchTool: `type` and
    # `name` enums, `max_uses` ("Máximo de búsquedas permitidas en esta respuesta"), nothing else.
    fixed = {key: tool.get(key) for key in _MESSAGES_WEB_SEARCH}
    extra = sorted(set(tool) - {*_MESSAGES_WEB_SEARCH, "max_uses"})
    if extra:
        msg = f"web search option {', '.join(map(repr, extra))} is not documented; "
        msg += f"the documented form is {_MESSAGES_WEB_SEARCH_FORM}"
        raise ValueError(msg)
    if fixed != _MESSAGES_WEB_SEARCH:
        msg = f"unsupported web search tool {tool!r}; the documented form is "
        msg += _MESSAGES_WEB_SEARCH_FORM
        raise ValueError(msg)
    return WebSearchToolSpec(max_uses=max_uses, raw=tool)


def _check_parameters(name: str, parameters: object) -> dict[str, Any]:
    if not isinstance(parameters, dict):
        msg = f"tool {name!r}: the parameters schema must be a JSON-schema object (a dict)"
        raise ValueError(msg)
    kind = parameters.get("type", "object")
    if kind != "object":
        msg = f"tool {name!r}: the parameters schema must have type 'object', got {kind!r}"
        raise ValueError(msg)
    return parameters


def to_tool_spec(tool: ToolLike, *, strict: bool | None = None) -> ToolSpec:
    """One LangChain-accepted tool -> a neutral spec (raises ValueError when malformed)."""
    if _is_web_search(tool):
        return _web_search_spec(tool)  # type: ignore[arg-type]
    if isinstance(tool, str):
        msg = f"unknown tool {tool!r}: pass a tool object, a schema, or 'web_search'"
        raise ValueError(msg)
    if isinstance(tool, dict) and not isinstance(tool.get("type", ""), str):
        msg = f"tool {tool!r}: 'type' must be a string such as 'function', got {tool['type']!r}"
        raise ValueError(msg)
    if isinstance(tool, dict) and "input_schema" in tool and "name" in tool:
        # Anthropic-format tool dict.
        name = str(tool["name"])
        return FunctionToolSpec(
            name=name,
            description=str(tool.get("description") or ""),
            parameters=_check_parameters(name, tool["input_schema"]),
            strict=strict,
        )
    try:
        converted = convert_to_openai_tool(tool, strict=strict)
    except (ValueError, TypeError, KeyError) as exc:
        msg = f"cannot use {tool!r} as a tool: {exc}"
        raise ValueError(msg) from exc
    function = converted.get("function")
    if converted.get("type") != "function" or not isinstance(function, dict):
        msg = f"unsupported tool type {converted.get('type')!r}"
        raise ValueError(msg)
    function_name = function.get("name")
    if not isinstance(function_name, str) or not function_name:
        msg = f"tool {tool!r} has no name"
        raise ValueError(msg)
    return FunctionToolSpec(
        name=function_name,
        description=str(function.get("description") or ""),
        parameters=_check_parameters(function_name, function.get("parameters", {"type": "object"})),
        strict=_check_strict(function.get("strict", strict), f"tool {function_name!r}: strict"),
    )


def _check_strict(value: object, label: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        msg = f"{label} must be True, False or None, got {value!r:.60}"
        raise ValueError(msg)
    return value


def to_tool_specs(tools: Sequence[ToolLike], *, strict: bool | None = None) -> tuple[ToolSpec, ...]:
    _check_strict(strict, "strict")
    specs: list[ToolSpec] = []
    by_name: dict[str, FunctionToolSpec] = {}
    for tool in tools:
        spec = to_tool_spec(tool, strict=strict)
        if isinstance(spec, FunctionToolSpec):
            seen = by_name.get(spec.name)
            if seen is not None:
                # The same tool given twice (e.g. a pydantic model and its JSON schema): the
                # wire needs unique names, so the first declaration wins.
                if seen != spec:
                    warn(f"two tools are named {spec.name!r}; sending only the first")
                continue
            by_name[spec.name] = spec
        elif any(isinstance(s, WebSearchToolSpec) for s in specs):
            continue  # one web search declaration is enough
        specs.append(spec)
    return tuple(specs)


def spec_to_bindable(spec: ToolSpec) -> dict[str, Any]:
    """A JSON-serializable form of a spec, bound as a kwarg (visible in traces, re-readable)."""
    if isinstance(spec, WebSearchToolSpec):
        if spec.raw is not None:
            return dict(spec.raw)
        return {"type": "web_search", **({"max_uses": spec.max_uses} if spec.max_uses else {})}
    function: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
    }
    if spec.strict is not None:
        function["strict"] = spec.strict
    return {"type": "function", "function": function}


_MODE_ALIASES: dict[str, str] = {
    "auto": "auto",
    "any": "any",
    "required": "any",
    "none": "none",
}


def resolve_tool_choice(choice: object, specs: Sequence[ToolSpec]) -> ToolChoice | None:
    """LangChain's tool_choice values -> neutral; a named tool must be among `specs`."""
    if choice is None:
        return None
    if choice is True:
        return ToolChoice("any")
    if choice is False:
        return ToolChoice("none")
    name: str | None = None
    if isinstance(choice, str):
        if choice in _MODE_ALIASES:
            return ToolChoice(_MODE_ALIASES[choice])  # type: ignore[arg-type]
        name = choice
    elif isinstance(choice, dict):
        kind = choice.get("type")
        function = choice.get("function")
        if kind == "function" and isinstance(function, dict):
            name = function.get("name")
        elif kind == "tool":
            name = choice.get("name")
        elif isinstance(kind, str) and kind in _MODE_ALIASES:
            return ToolChoice(_MODE_ALIASES[kind])  # type: ignore[arg-type]
    if not isinstance(name, str) or not name:
        msg = f"unsupported tool_choice {choice!r}"
        raise ValueError(msg)
    known = {spec.name for spec in specs if isinstance(spec, FunctionToolSpec)}
    if name not in known:
        msg = f"tool_choice names {name!r}, which is not among the bound tools {sorted(known)}"
        raise ValueError(msg)
    return ToolChoice("named", name)


def schema_name_and_json(schema: dict[str, Any] | type) -> tuple[str, dict[str, Any]]:
    """(name, JSON schema) for a pydantic model, TypedDict, JSON-schema or OpenAI tool dict."""
    if isinstance(schema, dict) and schema.get("type") == "function" and "function" in schema:
        function = schema["function"]
        return str(function["name"]), dict(function.get("parameters") or {"type": "object"})
    if isinstance(schema, dict) and "input_schema" in schema and "name" in schema:
        return str(schema["name"]), dict(schema["input_schema"])
    if isinstance(schema, dict) and "name" in schema and "parameters" in schema:
        return str(schema["name"]), dict(schema["parameters"])
    json_schema = convert_to_json_schema(schema)
    title = json_schema.get("title") or getattr(schema, "__name__", None) or "output"
    return str(title), json_schema


def schema_parts(schema: dict[str, Any] | type) -> tuple[str, str, dict[str, Any]]:
    """(name, description, JSON schema) for every schema form `with_structured_output` takes.

    Beyond `schema_name_and_json`: OpenAI `response_format` dicts (`{"type":
    "json_schema", "json_schema": {...}}` or `{"name", "schema"}`), and TypedDicts whose
    `NotRequired` fields langchain-core cannot convert (pydantic's TypeAdapter is used then).
    """
    if isinstance(schema, dict):
        inner = schema.get("json_schema") if schema.get("type") == "json_schema" else schema
        if isinstance(inner, dict) and "name" in inner and isinstance(inner.get("schema"), dict):
            body = dict(inner["schema"])
            return str(inner["name"]), str(inner.get("description") or ""), body
    try:
        name, body = schema_name_and_json(schema)
    except TypeError:
        if not is_typeddict(schema):
            raise
        body = TypeAdapter(schema).json_schema()  # type: ignore[arg-type]
        name = str(body.get("title") or getattr(schema, "__name__", "output"))
    body = dict(body)
    description = str(body.get("description") or "")
    if isinstance(schema, dict) and schema.get("type") == "function":
        description = str(schema["function"].get("description") or "")
    elif isinstance(schema, dict) and ("input_schema" in schema or "parameters" in schema):
        # The Anthropic and bare function forms carry the description beside the schema.
        description = str(schema.get("description") or "")
    if not body.get("description"):
        body.pop("description", None)  # langchain-core adds an empty one for undocumented models
    return name, description, body


def output_format_from_response_format(value: object) -> OutputFormat | None:
    """OpenAI-style `response_format` (as create_agent binds it) -> neutral OutputFormat."""
    if value is None:
        return None
    if isinstance(value, OutputFormat):
        return value
    if isinstance(value, type) and issubclass(value, BaseModel):
        name, schema = schema_name_and_json(value)
        return OutputFormat("json_schema", name=name, schema=schema)
    if not isinstance(value, dict):
        msg = f"unsupported response_format {value!r}"
        raise ValueError(msg)
    kind = value.get("type")
    if kind == "json_object":
        return OutputFormat("json_object")
    if kind == "text":
        return None
    if kind == "json_schema" and isinstance(value.get("json_schema"), dict):
        spec = value["json_schema"]
        schema = spec.get("schema")
        if not isinstance(schema, dict):
            msg = "response_format json_schema needs a 'schema' object"
            raise ValueError(msg)
        return OutputFormat(
            "json_schema",
            name=str(spec.get("name") or "output"),
            schema=schema,
            strict=spec.get("strict"),
        )
    msg = f"unsupported response_format {value!r}"
    raise ValueError(msg)
