"""`with_structured_output` for ChatKimi: native where documented, a forced tool elsewhere.

| model x protocol | `json_schema` (default) | `function_calling` | `json_mode` |
|---|---|---|---|
| all models, openai | `response_format` json_schema | one function tool, named `tool_choice` | `response_format` json_object |
| K3.1, anthropic | `output_config.format` json_schema | only that tool + `{"type": "any"}` | = json_schema (schema required) |
| kimi-k3, anthropic | forced tool `{"type": "tool", "name": ...}` | the same forced tool | = json_schema (schema required) |

Nothing undocumented is sent: the Messages protocol has no JSON mode, so `json_mode` there needs a
schema and takes the json_schema path; kimi-k3 on Messages has no `output_config`, so its
json_schema path is the forced tool. On openai the service defaults `json_schema.strict` to true;
ChatKimi says so explicitly and sends a strict-compatible copy of the schema (see `make_strict`).
"""  # noqa: E501

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from langchain_core.exceptions import ModelRefusalError, OutputParserException
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, BaseMessageChunk
from langchain_core.output_parsers import (
    JsonOutputKeyToolsParser,
    JsonOutputParser,
    PydanticToolsParser,
)
from langchain_core.output_parsers.transform import BaseCumulativeTransformOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, Generation
from langchain_core.runnables import Runnable, RunnableLambda, RunnableMap
from langchain_core.utils.pydantic import is_basemodel_subclass
from pydantic import ValidationError
from typing_extensions import is_typeddict

from langchain_kimi import _json as fast_json
from langchain_kimi._langchain.strict_schema import drop_optional_nulls, make_strict
from langchain_kimi._request.profiles import Protocol as WireProtocol
from langchain_kimi._request.profiles import capabilities
from langchain_kimi._request.tools import schema_parts

if TYPE_CHECKING:
    from langchain_core.language_models import LanguageModelInput


class StructuredModel(Protocol):
    """What structured output needs from the chat model (`ChatKimi`): its model x protocol and
    its two ways of binding a request."""

    @property
    def model(self) -> str: ...

    @property
    def protocol(self) -> WireProtocol: ...

    def bind(self, **kwargs: Any) -> Runnable[LanguageModelInput, BaseMessage]: ...

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: str | bool | dict[str, Any] | None = None,
        strict: bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]: ...


Method = Literal["json_schema", "function_calling", "json_mode"]
_METHODS: tuple[Method, ...] = ("json_schema", "function_calling", "json_mode")

# --- parsers ----------------------------------------------------------------------------------


def raise_on_refusal(message: object) -> None:
    """Anthropic K3.1 `stop_reason: refusal` (normalized `finish_reason`) -> ModelRefusalError."""
    if isinstance(message, BaseMessage) and message.response_metadata.get("finish_reason") == (
        "refusal"
    ):
        raise ModelRefusalError(
            "Kimi refused to produce the requested output (stop_reason=refusal)",
            raw_message=message,
        )


class _FinalParseMixin(BaseCumulativeTransformOutputParser[Any]):
    """Streams partial results, then parses the complete reply once more with `partial=False`:
    the stream ends with the full object, and bad JSON or a refusal raises instead of ending
    silently (langchain-core's cumulative parsers only ever parse partially while streaming)."""

    def _transform(self, input: Iterator[str | BaseMessage]) -> Iterator[Any]:
        fold = _PartialFold(self)
        for chunk in input:
            yield from fold.push(chunk)
        yield from fold.close()

    async def _atransform(self, input: AsyncIterator[str | BaseMessage]) -> AsyncIterator[Any]:
        fold = _PartialFold(self)
        async for chunk in input:
            for parsed in fold.push(chunk):
                yield parsed
        for parsed in fold.close():
            yield parsed


class _PartialFold:
    """The state both `_transform`s share: the text so far and the last value yielded."""

    def __init__(self, parser: BaseCumulativeTransformOutputParser[Any]) -> None:
        self._parser = parser
        self._total: ChatGenerationChunk | None = None
        self._last: Any = None

    def push(self, chunk: str | BaseMessage) -> list[Any]:
        self._total = _accumulate(self._total, chunk)
        parsed = self._parser.parse_result([self._total], partial=True)
        if parsed is None or parsed == self._last:
            return []
        self._last = parsed
        return [parsed]

    def close(self) -> list[Any]:
        if self._total is None:
            return []
        final = self._parser.parse_result([self._total], partial=False)
        return [] if final == self._last else [final]


def _accumulate(total: ChatGenerationChunk | None, chunk: str | BaseMessage) -> ChatGenerationChunk:
    if isinstance(chunk, BaseMessageChunk):
        piece = ChatGenerationChunk(message=chunk)
    elif isinstance(chunk, BaseMessage):
        piece = ChatGenerationChunk(message=AIMessageChunk(**chunk.model_dump(exclude={"type"})))
    else:
        piece = ChatGenerationChunk(message=AIMessageChunk(content=chunk))
    return piece if total is None else total + piece


class KimiJsonAnswerParser(_FinalParseMixin, JsonOutputParser):
    """Parses the answer text as JSON: pydantic schemas give instances, others dicts."""

    pydantic_schema: Any = None
    strict_source: dict[str, Any] | None = None
    """The caller's schema when a strict copy was sent: its optional nulls are dropped."""

    def parse_result(self, result: list[Generation], *, partial: bool = False) -> Any:
        if result and isinstance(result[0], ChatGeneration):
            raise_on_refusal(result[0].message)
        parsed = super().parse_result(result, partial=True) if partial else _parse_complete(result)
        if parsed is None:
            return None
        if self.strict_source is not None:
            parsed = drop_optional_nulls(parsed, self.strict_source)
        if self.pydantic_schema is None:
            return parsed
        try:
            return _validate(self.pydantic_schema, parsed)
        except (ValidationError, ValueError, TypeError) as exc:
            if partial:
                return None
            text = result[0].text if result else ""
            msg = f"the reply does not match {self.pydantic_schema.__name__}: {exc}"
            raise OutputParserException(msg, llm_output=text) from exc


def _parse_complete(result: list[Generation]) -> Any:
    """The whole answer as JSON, strictly: langchain-core's JSON parser also accepts truncated
    text (it completes partial JSON), which would hide a cut-off reply."""
    text = result[0].text if result else ""
    stripped = text.strip()
    fenced = _FENCE.fullmatch(stripped)
    try:
        return fast_json.loads(fenced.group(1) if fenced else stripped)
    except ValueError as exc:
        msg = f"the reply is not valid JSON: {exc}"
        raise OutputParserException(msg, llm_output=text) from exc


_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def _validate(model: Any, data: Any) -> Any:
    if hasattr(model, "model_validate"):
        return model.model_validate(data)
    return model.parse_obj(data)  # pydantic v1 (its ValidationError is a ValueError)


def _raise_on_cut_tool_call(message: BaseMessage) -> None:
    """A forced tool call in a reply cut at `max_tokens` (normalized `finish_reason` "length")
    holds partial arguments: an error, not the part (or None) the generic parsers return."""
    if message.response_metadata.get("finish_reason") == "length":
        calls = [*getattr(message, "tool_calls", []), *getattr(message, "invalid_tool_calls", [])]
        raise OutputParserException(
            "the reply was cut at max_tokens (finish_reason=length) before its tool call was"
            " complete; raise max_tokens or shorten the request",
            llm_output=json.dumps([call.get("args") for call in calls], default=str),
        )


class _FinalToolParseMixin(_FinalParseMixin):
    """The complete reply of a forced tool call: a refusal or a cut-off call raises."""

    def parse_result(self, result: list[Generation], *, partial: bool = False) -> Any:
        if result and isinstance(result[0], ChatGeneration) and not partial:
            raise_on_refusal(result[0].message)
            _raise_on_cut_tool_call(result[0].message)
        return super().parse_result(result, partial=partial)


class _ToolsParser(_FinalToolParseMixin, PydanticToolsParser):
    pass


class _KeyParser(_FinalToolParseMixin, JsonOutputKeyToolsParser):
    pass


# --- method selection and the runnable ---------------------------------------------------------


def effective_method(model: StructuredModel, schema: object, method: str) -> Method:
    """The method actually used for `method` on this model x protocol (ValueError if none)."""
    if method not in _METHODS:
        msg = f"method must be one of {', '.join(_METHODS)}; got {method!r}"
        raise ValueError(msg)
    caps = capabilities(model.model, model.protocol)
    if schema is None and method != "json_mode":
        msg = f"method={method!r} needs a schema (only method='json_mode' works without one)"
        raise ValueError(msg)
    if method == "json_mode" and (caps.json_mode or not caps.known):
        return "json_mode"
    if method == "json_mode":
        if schema is None:
            msg = (
                f"JSON mode without a schema is not documented on the {caps.protocol} protocol "
                f"(only response_format json_object on Chat Completions); pass a schema or use "
                "protocol='openai'"
            )
            raise ValueError(msg)
        method = "json_schema"  # the Messages protocol's only JSON output is schema-driven
    if method == "json_schema" and not caps.native_structured_output:
        return "function_calling"  # kimi-k3 on Messages: no output_config, a forced tool instead
    return method  # type: ignore[return-value]


def build(
    model: StructuredModel,
    schema: dict[str, Any] | type | None,
    *,
    method: str,
    include_raw: bool,
    strict: bool | None,
    **kwargs: Any,
) -> Runnable[LanguageModelInput, Any]:
    if kwargs:
        msg = f"unsupported arguments for with_structured_output: {sorted(kwargs)}"
        raise ValueError(msg)
    effective = effective_method(model, schema, method)
    is_pydantic = isinstance(schema, type) and is_basemodel_subclass(schema)
    pydantic_schema = schema if is_pydantic else None
    trace: dict[str, Any] = {"kwargs": {"method": method, "strict": strict}, "schema": None}
    llm: Runnable[LanguageModelInput, Any]
    parser: Runnable[Any, Any]
    if schema is None:
        llm = model.bind(response_format={"type": "json_object"}, ls_structured_output_format=trace)
        return _finish(llm, KimiJsonAnswerParser(), include_raw)
    name, description, json_schema = schema_parts(schema)
    trace["schema"] = _traceable(schema, name, description, json_schema)
    if effective == "function_calling":
        tool = {
            "type": "function",
            "function": {"name": name, "description": description, "parameters": json_schema},
        }
        llm = model.bind_tools(
            [schema if is_pydantic else tool],
            tool_choice=name,
            strict=strict,
            ls_structured_output_format=trace,
        )
        parser = (
            _ToolsParser(tools=[schema], first_tool_only=True)  # type: ignore[list-item]
            if is_pydantic
            else _KeyParser(key_name=name, first_tool_only=True)
        )
    elif effective == "json_mode":
        llm = model.bind(response_format={"type": "json_object"}, ls_structured_output_format=trace)
        parser = KimiJsonAnswerParser(pydantic_schema=pydantic_schema)
    else:
        spec: dict[str, Any] = {"name": name, "schema": json_schema}
        strict_source = None
        if model.protocol == "openai":
            # `strict` defaults to true on the service: say so, and send a schema strict mode takes.
            spec["strict"] = True if strict is None else strict
            if spec["strict"]:
                spec["schema"] = make_strict(json_schema)
                strict_source = json_schema
        llm = model.bind(
            response_format={"type": "json_schema", "json_schema": spec},
            ls_structured_output_format=trace,
        )
        parser = KimiJsonAnswerParser(pydantic_schema=pydantic_schema, strict_source=strict_source)
    return _finish(llm, parser, include_raw)


def _traceable(schema: object, name: str, description: str, json_schema: dict[str, Any]) -> Any:
    """What `BaseChatModel` hands to `convert_to_json_schema` for `ls_structured_output_format`
    (tracing metadata): classes as they are, dicts as an OpenAI tool it can always convert."""
    if isinstance(schema, type) and not is_typeddict(schema):
        return schema
    function = {"name": name, "description": description, "parameters": json_schema}
    return {"type": "function", "function": function}


def _finish(
    llm: Runnable[LanguageModelInput, Any], parser: Runnable[Any, Any], include_raw: bool
) -> Runnable[LanguageModelInput, Any]:
    if not include_raw:
        return llm | parser

    def parse_or_capture(inputs: dict[str, Any]) -> dict[str, Any]:
        # One parse of the complete reply, errors captured: `include_raw=True` never raises,
        # streamed or not (a fallback chain cannot catch an error after it yielded a chunk).
        raw = inputs["raw"]
        try:
            return {"raw": raw, "parsed": parser.invoke(raw), "parsing_error": None}
        except Exception as error:
            return {"raw": raw, "parsed": None, "parsing_error": error}

    return RunnableMap(raw=llm) | RunnableLambda(parse_or_capture)


__all__ = [
    "KimiJsonAnswerParser",
    "build",
    "drop_optional_nulls",
    "effective_method",
    "make_strict",
    "raise_on_refusal",
]
