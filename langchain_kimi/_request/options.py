"""Protocol-neutral description of one request: what ChatKimi resolved, what an adapter sends.

`ChatKimi` turns its fields plus per-call kwargs into one `RequestOptions` (validated against the
capability table before anything is sent); each protocol adapter's `build_request` turns the
messages plus these options into a wire body. No wire JSON lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_kimi._request.profiles import Capabilities


@dataclass(frozen=True)
class FunctionToolSpec:
    """A client-side function tool, already normalized to JSON Schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool | None = None


@dataclass(frozen=True)
class WebSearchToolSpec:
    """The gateway's built-in web search (anthropic `web_search_20250305`, openai `web_search`)."""

    max_uses: int | None = None
    raw: dict[str, Any] | None = None
    """The caller's Anthropic-format tool dict, sent verbatim on the anthropic protocol."""


ToolSpec = FunctionToolSpec | WebSearchToolSpec


@dataclass(frozen=True)
class ToolChoice:
    """`auto` | `any` (a call is required) | `none` | `named` (force `name`)."""

    mode: Literal["auto", "any", "none", "named"]
    name: str | None = None


@dataclass(frozen=True)
class OutputFormat:
    """Structured output asked of the service.

    `json_schema`: the reply text is JSON matching `schema` (openai `response_format`,
    anthropic K3.1 `output_config.format`). `json_object`: any JSON object (openai only).
    """

    kind: Literal["json_schema", "json_object"]
    name: str = "output"
    schema: dict[str, Any] | None = None
    strict: bool | None = None


@dataclass(frozen=True)
class RequestOptions:
    """Everything besides the messages that shapes one request body."""

    caps: Capabilities
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    reasoning_effort: str | None = None
    """Canonical (`low` / `high` / `max`); None sends nothing (service default `max`)."""
    cache_ttl: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    output_format: OutputFormat | None = None
    stream: bool = False
    extra_body: dict[str, Any] = field(default_factory=dict)
    """Future or undocumented top-level fields, merged last (the caller's responsibility)."""

    @property
    def model(self) -> str:
        return self.caps.model

    @property
    def native_stop(self) -> bool:
        """Stop sequences go on the wire; otherwise ChatKimi truncates client-side."""
        return self.caps.stop_sequences
