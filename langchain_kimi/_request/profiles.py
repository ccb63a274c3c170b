"""The single capability table: what each Kimi model accepts on each gateway protocol.

Every check in the package (efforts, cache TTL, stop sequences, images, video, web search,
structured output, tool_choice forms, system blocks, sampling values) reads this table; nothing
else in the code branches on a model id. The facts come from the three published OpenAPI
documents in ``spec/`` (see ``spec/README.md`` in the shared folder for the English digest).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from langchain_kimi._warn import warn

Protocol = Literal["openai", "anthropic"]
PROTOCOLS: tuple[Protocol, ...] = ("openai", "anthropic")

K31_PRO = "kimi-k3.1-pro"
K31_PRO_HIGHSPEED = "kimi-k3.1-pro-highspeed"
K3 = "kimi-k3"
KNOWN_MODELS: tuple[str, ...] = (K31_PRO, K31_PRO_HIGHSPEED, K3)

CONTEXT_WINDOW = 1_048_576
"""All three models: 1,048,576-token context window; `max_tokens` may not exceed it."""

EFFORT_ALIASES: dict[str, str] = {
    # Documented aliases for generic clients; `none` does NOT turn reasoning off.
    "medium": "high",
    "xhigh": "max",
    "minimal": "low",
    "none": "low",
}
CANONICAL_EFFORTS: tuple[str, ...] = ("low", "high", "max")
CACHE_TTLS: tuple[str, ...] = ("5m", "1h")

ToolChoiceForm = Literal["auto", "any", "none", "named"]


@dataclass(frozen=True)
class Capabilities:
    """What one model accepts on one protocol (documented facts only)."""

    model: str
    protocol: Protocol
    known: bool
    """False for an unknown model id: capability checks are off (a one-time warning says so)."""
    efforts: tuple[str, ...]
    """Canonical reasoning efforts the model accepts."""
    effort_on_wire: bool
    """Whether the protocol has an effort field (anthropic `kimi-k3` has no output_config)."""
    cache_ttl: bool
    stop_sequences: bool
    """Native stop sequences (anthropic K3.1 only); elsewhere `stop` is emulated client-side."""
    max_stop_sequences: int
    max_stop_sequence_bytes: int
    image_inputs: bool
    image_url_inputs: bool
    image_media_types: tuple[str, ...] | None
    """Allowed base64 image types, or None when any `image/*` type may be sent."""
    video_inputs: bool
    image_tool_message: bool
    web_search: bool
    native_structured_output: bool
    """openai `response_format` json_schema, anthropic K3.1 `output_config.format`."""
    json_mode: bool
    """openai `response_format: {"type": "json_object"}`."""
    tool_choice_forms: frozenset[ToolChoiceForm]
    """Which tool_choice forms the wire accepts; "named" forces one tool by name."""
    system_blocks: bool
    """anthropic K3.1 accepts `system` as text blocks; K3 only a string."""
    tool_result_blocks: bool
    """anthropic K3.1 accepts text/image blocks inside `tool_result.content`."""
    server_tool_blocks: bool
    """anthropic K3.1 `server_tool_use` / `web_search_tool_result` history blocks."""
    refusal_stop_reason: bool
    fixed_sampling: bool
    """kimi-k3 rejects temperature/top_p other than the fixed 1 / 0.95."""
    sampling_on_wire: bool
    """Only the Chat Completions schema names `temperature` / `top_p`."""
    max_tools: int | None = 128
    """004's `maxItems: 128` (Chat Completions); 000 / 001 set no limit (None)."""
    max_tokens_limit: int = CONTEXT_WINDOW
    fixed_temperature: float = 1.0
    fixed_top_p: float = 0.95

    @property
    def is_k3(self) -> bool:
        return self.model == K3

    def supports_effort(self, effort: str) -> bool:
        return not self.known or effort in self.efforts

    def profile(self) -> dict[str, Any]:
        """LangChain `ModelProfile` view of this row (`BaseChatModel.profile`)."""
        return {
            "max_input_tokens": CONTEXT_WINDOW,
            "max_output_tokens": self.max_tokens_limit,
            "text_inputs": True,
            "text_outputs": True,
            "image_inputs": self.image_inputs,
            "image_url_inputs": self.image_url_inputs,
            "video_inputs": self.video_inputs,
            "audio_inputs": False,
            "pdf_inputs": False,
            "image_tool_message": self.image_tool_message,
            "pdf_tool_message": False,
            "reasoning_output": True,
            "reasoning_effort_levels": list(self.efforts),
            "tool_calling": True,
            "tool_choice": True,
            # Native structured output only: create_agent picks its ProviderStrategy from this
            # key, and anthropic kimi-k3 (no output_config) must get the ToolStrategy instead.
            "structured_output": self.native_structured_output,
            "tool_call_streaming": True,
            "reasoning_effort_default": "max",
            # Only keys `ModelProfile` knows: langchain-core warns about any other. Web search,
            # cache TTL and stop sequences stay on the `Capabilities` row (and in the docs).
        }


_ALL_FORMS: frozenset[ToolChoiceForm] = frozenset({"auto", "any", "none", "named"})

_OPENAI_K31 = Capabilities(
    model=K31_PRO,
    protocol="openai",
    known=True,
    efforts=CANONICAL_EFFORTS,
    effort_on_wire=True,
    cache_ttl=True,
    stop_sequences=False,
    max_stop_sequences=5,
    max_stop_sequence_bytes=32,
    image_inputs=True,
    # 004: "Contenido de imagen como URL data Base64 (data:image/png;base64,...)". An http(s) URL
    # is still sent (with a warning), but the row does not claim it.
    image_url_inputs=False,
    image_media_types=None,
    video_inputs=True,
    image_tool_message=True,
    web_search=True,
    native_structured_output=True,
    json_mode=True,
    tool_choice_forms=_ALL_FORMS,
    system_blocks=True,
    tool_result_blocks=True,
    server_tool_blocks=False,
    refusal_stop_reason=False,
    fixed_sampling=False,
    sampling_on_wire=True,
)

_ANTHROPIC_K31 = replace(
    _OPENAI_K31,
    protocol="anthropic",
    stop_sequences=True,
    image_url_inputs=True,
    image_media_types=("image/jpeg", "image/png", "image/gif", "image/webp"),
    video_inputs=False,
    json_mode=False,
    tool_choice_forms=frozenset({"auto", "any", "none"}),
    server_tool_blocks=True,
    refusal_stop_reason=True,
    sampling_on_wire=False,
    max_tools=None,
)

_OPENAI_K3 = replace(
    _OPENAI_K31,
    model=K3,
    efforts=("max",),
    cache_ttl=False,
    fixed_sampling=True,
)

_ANTHROPIC_K3 = replace(
    _ANTHROPIC_K31,
    model=K3,
    efforts=("max",),
    effort_on_wire=False,
    cache_ttl=False,
    stop_sequences=False,
    image_inputs=False,
    image_url_inputs=False,
    image_tool_message=False,
    web_search=False,
    native_structured_output=False,
    tool_choice_forms=frozenset({"auto", "any", "named"}),
    system_blocks=False,
    tool_result_blocks=False,
    server_tool_blocks=False,
    refusal_stop_reason=False,
    # 001 has no temperature / top_p (the fixed 1 / 0.95 is 004's): warned and not sent, as on
    # K3.1 Messages.
    fixed_sampling=False,
)

_TABLE: dict[tuple[str, Protocol], Capabilities] = {
    (K31_PRO, "openai"): _OPENAI_K31,
    (K31_PRO_HIGHSPEED, "openai"): replace(_OPENAI_K31, model=K31_PRO_HIGHSPEED),
    (K3, "openai"): _OPENAI_K3,
    (K31_PRO, "anthropic"): _ANTHROPIC_K31,
    (K31_PRO_HIGHSPEED, "anthropic"): replace(_ANTHROPIC_K31, model=K31_PRO_HIGHSPEED),
    (K3, "anthropic"): _ANTHROPIC_K3,
}

_warned_unknown: set[str] = set()


def capabilities(model: str, protocol: Protocol) -> Capabilities:
    """The row for `model` x `protocol`.

    An unknown model id is allowed (new models appear): it gets the K3.1 row of that protocol
    with `known=False`, which switches the capability checks off, and a one-time warning.
    """
    if protocol not in PROTOCOLS:
        msg = f"protocol must be one of {PROTOCOLS}, got {protocol!r}"
        raise ValueError(msg)
    row = _TABLE.get((model, protocol))
    if row is not None:
        return row
    if model not in _warned_unknown:
        _warned_unknown.add(model)
        warn(
            f"Unknown Kimi model id {model!r}: sending it as is, with capability checks off "
            f"(known models: {', '.join(KNOWN_MODELS)})."
        )
    return replace(_TABLE[(K31_PRO, protocol)], model=model, known=False)


def model_family(model: Any) -> str | None:
    """The known model an id names: the id itself, or a dated / suffixed id of it
    (`kimi-k3-0901` -> `kimi-k3`); None for anything else."""
    if not isinstance(model, str):
        return None
    for known in sorted(KNOWN_MODELS, key=len, reverse=True):
        if model == known or model.startswith(f"{known}-"):
            return known
    return None


def cache_writes_billed_as_input(reply_model: Any, requested_model: Any = None) -> bool:
    """Whether the model folds cache writes into its plain input.

    001 (kimi-k3 Messages) `input_tokens`: "Tokens de entrada no servidos desde caché" (writes
    included); 004 `cache_write_tokens`: "`kimi-k3` no los distingue y los factura como entrada
    normal". K3.1 bills them apart (000: "Las tres categorías son excluyentes"). The reply's
    `model` decides when it names a known model family (it served the call); otherwise (absent,
    or a name of no known family) the requested model does.
    """
    family = model_family(reply_model) or model_family(requested_model)
    return family == K3


def all_rows() -> list[Capabilities]:
    """Every documented model x protocol row, for docs and tests."""
    return list(_TABLE.values())


def normalize_effort(value: str) -> str:
    """Map a documented alias to its canonical effort (`medium` -> `high`, ...)."""
    lowered = value.strip().lower()
    canonical = EFFORT_ALIASES.get(lowered, lowered)
    if canonical not in CANONICAL_EFFORTS:
        allowed = ", ".join([*CANONICAL_EFFORTS, *EFFORT_ALIASES])
        msg = f"reasoning_effort must be one of {allowed}; got {value!r}"
        raise ValueError(msg)
    return canonical
