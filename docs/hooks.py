"""MkDocs hook: render the tables that come from the code, so the docs never drift from it.

`<!-- table:capabilities -->` -> the model x protocol capability table (`_request/profiles.py`);
`<!-- table:tool-choice -->` -> the tool_choice wire forms, produced by the real request builders;
`<!-- table:fields -->` / `<!-- table:base-fields -->` -> ChatKimi's constructor fields (its own /
LangChain's), with type, default and the field's docstring; `<!-- table:errors -->` -> the exported
error classes with the langchain-core classes they also are; `<!-- table:rate-knobs -->` -> every
tunable number of the rate policy (`_http/limits/knobs.py`), and `{knob:NAME}` -> one knob's value
with its unit, `{default:FIELD}` -> a ChatKimi field's default, `{limit:NAME}` -> one of the
other numbers the pages state (`LIMITS`). An unknown name fails the build.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import json
import re
import textwrap
import types
import typing
from collections.abc import Callable
from typing import Any

from langchain_core import exceptions as lc_exceptions
from langchain_core.messages import HumanMessage
from pydantic import AliasChoices, SecretStr
from pydantic.fields import FieldInfo

import langchain_kimi
from langchain_kimi import ChatKimi, _json
from langchain_kimi._call import plans
from langchain_kimi._http import drain
from langchain_kimi._http.limits import knobs
from langchain_kimi._langchain import token_estimate
from langchain_kimi._request.options import FunctionToolSpec, RequestOptions, ToolChoice
from langchain_kimi._request.profiles import CONTEXT_WINDOW, K31_PRO, Capabilities, all_rows
from langchain_kimi._settings import DEFAULT_TIMEOUT
from langchain_kimi.protocols import adapter as _adapter

_YES, _NO = "yes", "—"


def _flag(value: bool) -> str:
    return _YES if value else _NO


SAMPLING_NOT_SENT = "not sent"
SAMPLING_FIXED = "sent; must be 1 / 0.95 (refused before sending otherwise)"
SAMPLING_IGNORED = "sent; ignored by the service (004)"


def sampling_cell(caps: Capabilities) -> str:
    """What happens to `temperature` / `top_p` on a row, as the code decides it: only the Chat
    Completions document (004) names the fields; K3.1 "lo ignoran automáticamente" (ignores
    them), `kimi-k3` "devuelve un error para valores no admitidos" (errors on other values).
    The Messages documents (000, 001) have no such fields, so nothing is sent there."""
    if not caps.sampling_on_wire:
        return SAMPLING_NOT_SENT
    return SAMPLING_FIXED if caps.fixed_sampling else SAMPLING_IGNORED


def capability_table() -> str:
    rows = all_rows()
    columns: list[tuple[str, Any]] = [
        ("reasoning efforts", lambda c: " / ".join(c.efforts)),
        (
            "effort sent as",
            lambda c: (
                ("`output_config.effort`" if c.protocol == "anthropic" else "`reasoning_effort`")
                if c.effort_on_wire
                else "(not sent: `max` only)"
            ),
        ),
        ("cache TTL (5m / 1h)", lambda c: _flag(c.cache_ttl)),
        (
            "native stop sequences",
            lambda c: _flag(c.stop_sequences) if c.stop_sequences else "emulated client-side",
        ),
        ("image input", lambda c: _flag(c.image_inputs)),
        ("video input", lambda c: _flag(c.video_inputs)),
        ("images in tool results", lambda c: _flag(c.image_tool_message)),
        ("built-in web search", lambda c: _flag(c.web_search)),
        ("native structured output", lambda c: _flag(c.native_structured_output)),
        ("JSON mode", lambda c: _flag(c.json_mode)),
        ("tool_choice forms", lambda c: ", ".join(sorted(c.tool_choice_forms))),
        ("system as blocks", lambda c: _flag(c.system_blocks)),
        ("temperature / top_p", sampling_cell),
    ]
    header = "| | " + " | ".join(f"`{r.model}`<br>{r.protocol}" for r in rows) + " |"
    rule = "|---" * (len(rows) + 1) + "|"
    body = [f"| {name} | " + " | ".join(render(r) for r in rows) + " |" for name, render in columns]
    return "\n".join([header, rule, *body])


def _wire_choice(caps: Capabilities, choice: ToolChoice) -> str:
    tools = (
        FunctionToolSpec("get_weather", "Weather for a city", {"type": "object", "properties": {}}),
        FunctionToolSpec("get_time", "Time in a city", {"type": "object", "properties": {}}),
    )
    options = RequestOptions(caps=caps, tools=tools, tool_choice=choice)
    try:
        body = _adapter(caps.protocol).build_request([HumanMessage("hi")], options)
    except ValueError as exc:
        return f"refused: {exc}"
    sent = body.get("tool_choice", "(none)")
    names = [t.get("name") or t.get("function", {}).get("name") for t in body.get("tools", [])]
    note = "" if len(names) == len(tools) else f" + tools {names}"
    return f"`{json.dumps(sent)}`{note}" if "tools" in body else "tools and tool_choice dropped"


def tool_choice_table() -> str:
    choices = [
        ('`"auto"`', ToolChoice("auto")),
        ('`"any"` / `"required"` / `True`', ToolChoice("any")),
        ('`"none"`', ToolChoice("none")),
        ('`"get_weather"` (a name)', ToolChoice("named", "get_weather")),
    ]
    rows = [r for r in all_rows() if r.model != "kimi-k3.1-pro-highspeed"]
    header = "| tool_choice | " + " | ".join(f"`{r.model}`<br>{r.protocol}" for r in rows) + " |"
    rule = "|---" * (len(rows) + 1) + "|"
    body = [
        f"| {label} | " + " | ".join(_wire_choice(r, choice) for r in rows) + " |"
        for label, choice in choices
    ]
    return "\n".join([header, rule, *body])


# --- constructor fields ------------------------------------------------------------------------


def _attribute_docs(cls: type) -> dict[str, tuple[type, str]]:
    """Field name -> (defining class, docstring): the string right after each annotated field."""
    found: dict[str, tuple[type, str]] = {}
    for owner in cls.__mro__:
        for name, doc in _own_attribute_docs(owner):
            found.setdefault(name, (owner, doc))
    return found


@functools.cache
def _own_attribute_docs(owner: type) -> tuple[tuple[str, str], ...]:
    # Cached: finding a class's source parses its whole module (Runnable's is thousands of lines).
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(owner)))
    except (OSError, TypeError):
        return ()
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    return tuple(
        (node.target.id, inspect.cleandoc(after.value.value))
        for node, after in itertools.pairwise(body)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    )


def _type_name(tp: Any) -> str:
    if tp is type(None):
        return "None"
    if tp is Any:
        return "Any"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(arg) for arg in args)
    if origin is typing.Literal:
        return " | ".join(json.dumps(arg) for arg in args)
    if origin is not None:
        inner = ", ".join(
            "[" + ", ".join(map(_type_name, a)) + "]" if isinstance(a, list) else _type_name(a)
            for a in args
        )
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]"
    if isinstance(tp, type):
        module = tp.__module__.split(".")[0]
        return f"{module}.{tp.__name__}" if module in ("httpx",) else tp.__name__
    return str(tp)


def _default(info: FieldInfo) -> str:
    factory = info.default_factory
    if factory is None:
        value = info.default
        if isinstance(value, str) and value.startswith("<"):
            return value.strip("<>")  # a sentinel resolved at construction (see the meaning)
        return f"`{value!r}`"
    if factory is dict:
        return "`{}`"
    code, closure = getattr(factory, "__code__", None), getattr(factory, "__closure__", None)
    cells = dict(zip(code.co_freevars, [c.cell_contents for c in closure or ()], strict=True))
    if "key" in cells:  # langchain-core's from_env / secret_from_env
        fallback = cells.get("default")
        shown = f" or `{fallback}`" if isinstance(fallback, str) else ""
        return f"env `{cells['key']}`{shown}"
    if factory.__name__ == "_get_verbosity":
        return "LangChain's global `set_verbose()`"
    return f"`{factory.__name__}()`"


def _names(name: str, info: FieldInfo) -> str:
    aliases = []
    if isinstance(info.validation_alias, AliasChoices):
        aliases = [a for a in info.validation_alias.choices if isinstance(a, str) and a != name]
    shown = f"`{name}`"
    return shown + (" (alias " + ", ".join(f"`{a}`" for a in aliases) + ")" if aliases else "")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _fields_table(own: bool) -> str:
    docs = _attribute_docs(ChatKimi)
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, info in ChatKimi.model_fields.items():
        if name not in docs:
            msg = f"ChatKimi.{name} has no docstring: the API reference needs its meaning"
            raise ValueError(msg)
        owner, doc = docs[name]
        if (owner is ChatKimi) != own:
            continue
        meaning = doc if own else doc.split("\n\n")[0]
        annotation = SecretStr | None if name == "api_key" else info.annotation
        rows.append(
            f"| {_names(name, info)} | `{_cell(_type_name(annotation))}` | "
            f"{_cell(_default(info))} | {_cell(meaning)} |"
        )
    return "\n".join(rows)


def fields_table() -> str:
    return _fields_table(own=True)


def base_fields_table() -> str:
    return _fields_table(own=False)


def errors_table() -> str:
    rows = ["| error | also a (langchain-core) | subclass of | raised when |", "|---|---|---|---|"]
    for name in langchain_kimi.__all__:
        cls = getattr(langchain_kimi, name)
        if not (isinstance(cls, type) and issubclass(cls, langchain_kimi.KimiError)):
            continue
        core = [
            f"`{base.__name__}`"
            for base in cls.__mro__[1:]
            if base.__module__ == lc_exceptions.__name__
            and base.__name__.startswith(("Model", "ContextOverflow"))
        ]
        parent = cls.__mro__[1]
        own_parent = f"`{parent.__name__}`" if issubclass(parent, langchain_kimi.KimiError) else ""
        doc = inspect.cleandoc(cls.__doc__ or "").split("\n\n")[0]
        rows.append(f"| `{name}` | {', '.join(core)} | {own_parent} | {_cell(doc)} |")
    return "\n".join(rows)


def rate_knobs_table() -> str:
    rows = ["| knob | value | unit | meaning |", "|---|---:|---|---|"]
    rows += [f"| `{n}` | {v} | {u} | {_cell(m)} |" for n, v, u, m in knobs.rows()]
    return "\n".join(rows)


KNOB_REFERENCE = re.compile(r"\{knob:(\w+)\}")
_UNITS_SHOWN = {"s": " s", "requests/s": " requests/s", "x": "x"}


def knob_text(name: str) -> str:
    """One knob as a page writes it: `2 s`, `0.9`, `10`."""
    if name not in {row[0] for row in knobs.rows()}:
        msg = f"{{knob:{name}}}: no such knob in the rate policy's table (_http/limits/knobs.py)"
        raise ValueError(msg)
    unit = next(row[2] for row in knobs.rows() if row[0] == name)
    return knobs.format_value(getattr(knobs.KNOBS, name)) + _UNITS_SHOWN.get(unit, "")


def render_knobs(markdown: str) -> str:
    return KNOB_REFERENCE.sub(lambda match: knob_text(match.group(1)), markdown)


DEFAULT_REFERENCE = re.compile(r"\{default:(\w+)\}")


def default_text(name: str) -> str:
    """A ChatKimi field's default as a page writes it: `2`, `300`, `True`."""
    field = ChatKimi.model_fields.get(name)
    if field is None or field.default_factory is not None:
        raise ValueError(f"{{default:{name}}}: ChatKimi has no field {name!r} with a plain default")
    value = field.default
    return (
        knobs.format_value(value)
        if isinstance(value, int | float) and not isinstance(value, bool)
        else str(value)
    )


def render_defaults(markdown: str) -> str:
    return DEFAULT_REFERENCE.sub(lambda match: default_text(match.group(1)), markdown)


def _row(protocol: str) -> Capabilities:
    return next(r for r in all_rows() if r.model == K31_PRO and r.protocol == protocol)


def _number(value: float, unit: str) -> str:
    return knobs.format_value(value) + (f" {unit}" if unit else "")


LIMITS: dict[str, tuple[Callable[[], float], str]] = {
    "context_window": (lambda: CONTEXT_WINDOW, ""),
    "messages_max_tokens": (lambda: _adapter("anthropic").default_max_tokens or 0, ""),
    "max_tools": (lambda: _row("openai").max_tools or 0, ""),
    "stop_sequences": (lambda: _row("anthropic").max_stop_sequences, ""),
    "stop_sequence_bytes": (lambda: _row("anthropic").max_stop_sequence_bytes, ""),
    "read_timeout": (lambda: DEFAULT_TIMEOUT.read or 0, "s"),
    "connect_timeout": (lambda: DEFAULT_TIMEOUT.connect or 0, "s"),
    "drain_time": (lambda: drain.DRAIN_SECONDS * 1000, "ms"),
    "drain_events": (lambda: drain.DRAIN_EVENTS, ""),
    "drains": (lambda: drain.DRAINS, ""),
    "chars_per_token": (lambda: token_estimate.ASCII_CHARS_PER_TOKEN, ""),
    "tokens_per_message": (lambda: token_estimate.PER_MESSAGE_OVERHEAD, ""),
    "read_depth": (lambda: _json.MAX_READ_DEPTH, ""),
    "arguments_depth": (lambda: _json.MAX_DEPTH, ""),
    "stream_events": (lambda: plans.MAX_STREAM_EVENTS, ""),
    "tool_calls": (lambda: plans.MAX_TOOL_CALLS, ""),
}
"""The numbers pages state that are neither a knob nor a field's default: name -> (the value,
read from the code; its unit)."""

LIMIT_REFERENCE = re.compile(r"\{limit:(\w+)\}")


def limit_text(name: str) -> str:
    if name not in LIMITS:
        raise ValueError(f"{{limit:{name}}}: no such limit in docs/hooks.py's LIMITS")
    value, unit = LIMITS[name]
    return _number(value(), unit)


def render_limits(markdown: str) -> str:
    return LIMIT_REFERENCE.sub(lambda match: limit_text(match.group(1)), markdown)


_TABLES: dict[str, Callable[[], str]] = {
    "<!-- table:capabilities -->": capability_table,
    "<!-- table:tool-choice -->": tool_choice_table,
    "<!-- table:fields -->": fields_table,
    "<!-- table:base-fields -->": base_fields_table,
    "<!-- table:errors -->": errors_table,
    "<!-- table:rate-knobs -->": rate_knobs_table,
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    for marker, render in _TABLES.items():
        if marker in markdown:
            markdown = markdown.replace(marker, render())
    return render_limits(render_defaults(render_knobs(markdown)))
