"""MkDocs hook: render the tables that come from the code, so the docs never drift from it.

`<!-- table:capabilities -->` -> the model x protocol capability table (`_profiles.py`);
`<!-- table:tool-choice -->` -> the tool_choice wire forms, produced by the real request builders.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import HumanMessage

from langchain_kimi._options import FunctionToolSpec, RequestOptions, ToolChoice
from langchain_kimi._profiles import Capabilities, all_rows
from langchain_kimi.protocols import adapter as _adapter

_YES, _NO = "yes", "—"


def _flag(value: bool) -> str:
    return _YES if value else _NO


def capability_table() -> str:
    rows = all_rows()
    columns: list[tuple[str, Any]] = [
        ("reasoning efforts", lambda c: " / ".join(c.efforts)),
        ("effort sent as", lambda c: (
            ("`output_config.effort`" if c.protocol == "anthropic" else "`reasoning_effort`")
            if c.effort_on_wire else "(not sent: `max` only)"
        )),
        ("cache TTL (5m / 1h)", lambda c: _flag(c.cache_ttl)),
        ("native stop sequences", lambda c: _flag(c.stop_sequences) if c.stop_sequences
         else "emulated client-side"),
        ("image input", lambda c: _flag(c.image_inputs)),
        ("video input", lambda c: _flag(c.video_inputs)),
        ("images in tool results", lambda c: _flag(c.image_tool_message)),
        ("built-in web search", lambda c: _flag(c.web_search)),
        ("native structured output", lambda c: _flag(c.native_structured_output)),
        ("JSON mode", lambda c: _flag(c.json_mode)),
        ("tool_choice forms", lambda c: ", ".join(sorted(c.tool_choice_forms))),
        ("system as blocks", lambda c: _flag(c.system_blocks)),
        ("temperature / top_p", lambda c: "must be 1 / 0.95" if c.fixed_sampling
         else "ignored by the service"),
    ]
    header = "| | " + " | ".join(f"`{r.model}` {r.protocol}" for r in rows) + " |"
    rule = "|---" * (len(rows) + 1) + "|"
    body = [
        f"| {name} | " + " | ".join(render(r) for r in rows) + " |" for name, render in columns
    ]
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
        ("`\"auto\"`", ToolChoice("auto")),
        ("`\"any\"` / `\"required\"` / `True`", ToolChoice("any")),
        ("`\"none\"`", ToolChoice("none")),
        ("`\"get_weather\"` (a name)", ToolChoice("named", "get_weather")),
    ]
    rows = [r for r in all_rows() if r.model != "kimi-k3.1-pro-highspeed"]
    header = "| tool_choice | " + " | ".join(f"`{r.model}` {r.protocol}" for r in rows) + " |"
    rule = "|---" * (len(rows) + 1) + "|"
    body = [
        f"| {label} | " + " | ".join(_wire_choice(r, choice) for r in rows) + " |"
        for label, choice in choices
    ]
    return "\n".join([header, rule, *body])


_TABLES = {
    "<!-- table:capabilities -->": capability_table,
    "<!-- table:tool-choice -->": tool_choice_table,
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    for marker, render in _TABLES.items():
        if marker in markdown:
            markdown = markdown.replace(marker, render())
    return markdown
