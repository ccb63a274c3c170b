"""`with_structured_output` for ChatKimi: native where documented, graceful elsewhere.

| model x protocol | `json_schema` (default) | `function_calling` | `json_mode` |
|---|---|---|---|
| all models, openai | `response_format` json_schema | one forced function tool | `response_format` json_object |
| K3.1, anthropic | `output_config.format` json_schema | forced tool (only that tool + `any`) | native json_schema (schema required) |
| kimi-k3, anthropic | falls back to a forced tool (`{"type":"tool"}`) | forced tool | refused (no JSON mode, no native schema) |
"""  # noqa: E501

from __future__ import annotations

import copy
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.exceptions import ModelRefusalError, OutputParserException
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import (
    JsonOutputKeyToolsParser,
    JsonOutputParser,
    PydanticToolsParser,
)
from langchain_core.outputs import ChatGeneration, Generation
from langchain_core.runnables import Runnable, RunnableMap, RunnablePassthrough
from langchain_core.utils.pydantic import is_basemodel_subclass
from pydantic import ValidationError

from langchain_kimi._profiles import capabilities
from langchain_kimi._tools import schema_name_and_json

if TYPE_CHECKING:
    from langchain_core.language_models import LanguageModelInput

    from langchain_kimi.chat_models import ChatKimi

Method = Literal["json_schema", "function_calling", "json_mode"]


def make_strict(schema: dict[str, Any]) -> dict[str, Any]:
    """A strict-mode-compatible copy: every object closed (`additionalProperties: false`), every
    property required, and the ones that were optional made nullable (the parser drops those
    nulls again, so the caller's schema accepts exactly what it accepted before)."""
    strict = copy.deepcopy(schema)
    _close_objects(strict)
    return strict


def _close_objects(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _close_objects(item)
        return
    if not isinstance(node, dict):
        return
    properties = node.get("properties")
    if isinstance(properties, dict) and node.get("type", "object") == "object":
        required = set(node.get("required") or [])
        for name, prop in properties.items():
            if name not in required and isinstance(prop, dict):
                properties[name] = _nullable(prop)
        node["required"] = list(properties)
        node["additionalProperties"] = False
    for value in node.values():
        _close_objects(value)


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    kind = prop.get("type")
    if isinstance(kind, str) and kind != "null":
        return {**prop, "type": [kind, "null"]}
    if isinstance(kind, list):
        return prop if "null" in kind else {**prop, "type": [*kind, "null"]}
    if "anyOf" in prop:
        options = prop["anyOf"]
        if any(isinstance(o, dict) and o.get("type") == "null" for o in options):
            return prop
        return {**prop, "anyOf": [*options, {"type": "null"}]}
    return {"anyOf": [prop, {"type": "null"}]}


def drop_optional_nulls(value: Any, schema: dict[str, Any] | None) -> Any:
    """Remove `null`s that strict mode forced onto properties the caller left optional."""
    if not isinstance(value, dict) or not isinstance(schema, dict):
        return value
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return value
    required = set(schema.get("required") or [])
    cleaned = {}
    for key, item in value.items():
        if item is None and key in properties and key not in required:
            continue
        cleaned[key] = drop_optional_nulls(item, properties.get(key))
    return cleaned


def _raise_on_refusal(message: object) -> None:
    if isinstance(message, AIMessage) and message.response_metadata.get("finish_reason") == (
        "refusal"
    ):
        raise ModelRefusalError(
            "Kimi refused to produce the requested output (stop_reason=refusal)",
            raw_message=message,
        )


class KimiJsonAnswerParser(JsonOutputParser):
    """Parses the answer text as JSON; pydantic schemas give instances, others dicts.

    Streams partial dicts (for dict schemas) as the text arrives.
    """

    pydantic_schema: Any = None
    original_schema: dict[str, Any] | None = None

    def parse_result(self, result: list[Generation], *, partial: bool = False) -> Any:
        if result and isinstance(result[0], ChatGeneration):
            _raise_on_refusal(result[0].message)
        parsed = super().parse_result(result, partial=partial)
        if parsed is None:
            return None
        parsed = drop_optional_nulls(parsed, self.original_schema)
        if self.pydantic_schema is None:
            return parsed
        try:
            return self.pydantic_schema.model_validate(parsed)
        except ValidationError as exc:
            if partial:
                return None
            text = result[0].text if result else ""
            raise OutputParserException(
                f"the reply does not match {self.pydantic_schema.__name__}: {exc}",
                llm_output=text,
            ) from exc
        except AttributeError:  # pydantic v1 model
            return self.pydantic_schema.parse_obj(parsed)


class _RefusalAwareToolsParser(PydanticToolsParser):
    def parse_result(self, result: list[Generation], *, partial: bool = False) -> Any:
        if result and isinstance(result[0], ChatGeneration) and not partial:
            _raise_on_refusal(result[0].message)
        return super().parse_result(result, partial=partial)


class _RefusalAwareKeyParser(JsonOutputKeyToolsParser):
    def parse_result(self, result: list[Generation], *, partial: bool = False) -> Any:
        if result and isinstance(result[0], ChatGeneration) and not partial:
            _raise_on_refusal(result[0].message)
        return super().parse_result(result, partial=partial)


def _effective_method(model: ChatKimi, schema: object, method: Method) -> Method:
    caps = capabilities(model.model, model.protocol)
    if method not in ("json_schema", "function_calling", "json_mode"):
        msg = f"method must be json_schema, function_calling or json_mode; got {method!r}"
        raise ValueError(msg)
    if method == "json_mode" and not caps.json_mode:
        if schema is not None and caps.native_structured_output:
            return "json_schema"  # anthropic K3.1: the native schema path is the JSON mode
        msg = (
            f"json_mode is not available for {caps.model} on the {caps.protocol} protocol "
            "without a schema it can enforce natively; pass a schema (K3.1), use "
            "method='function_calling', or protocol='openai'"
        )
        raise ValueError(msg)
    if method == "json_schema" and not caps.native_structured_output:
        return "function_calling"  # anthropic kimi-k3: no output_config; a forced tool instead
    if method != "json_mode" and schema is None:
        msg = f"method={method!r} needs a schema"
        raise ValueError(msg)
    return method


def build(
    model: ChatKimi,
    schema: dict[str, Any] | type | None,
    *,
    method: Method,
    include_raw: bool,
    strict: bool | None,
    **kwargs: Any,
) -> Runnable[LanguageModelInput, Any]:
    if kwargs:
        msg = f"unsupported arguments for with_structured_output: {sorted(kwargs)}"
        raise ValueError(msg)
    effective = _effective_method(model, schema, method)
    is_pydantic = isinstance(schema, type) and is_basemodel_subclass(schema)
    trace = {"kwargs": {"method": method, "strict": strict}, "schema": schema}
    llm: Runnable[LanguageModelInput, Any]
    parser: Runnable[Any, Any]
    if effective == "function_calling":
        name, _ = schema_name_and_json(schema)  # type: ignore[arg-type]
        llm = model.bind_tools(
            [schema],  # type: ignore[list-item]
            tool_choice=name,
            strict=strict,
            ls_structured_output_format=trace,
        )
        parser = (
            _RefusalAwareToolsParser(tools=[schema], first_tool_only=True)  # type: ignore[list-item]
            if is_pydantic
            else _RefusalAwareKeyParser(key_name=name, first_tool_only=True)
        )
    elif effective == "json_mode":
        llm = model.bind(response_format={"type": "json_object"}, ls_structured_output_format=trace)
        parser = KimiJsonAnswerParser(pydantic_schema=schema if is_pydantic else None)
    else:
        name, json_schema = schema_name_and_json(schema)  # type: ignore[arg-type]
        sent = json_schema
        strict_flag: bool | None = None
        if model.protocol == "openai":
            # The service defaults `strict` to true; say it explicitly and send a schema that
            # strict mode accepts.
            strict_flag = True if strict is None else strict
            if strict_flag:
                sent = make_strict(json_schema)
        spec: dict[str, Any] = {"name": name, "schema": sent}
        if strict_flag is not None:
            spec["strict"] = strict_flag
        llm = model.bind(
            response_format={"type": "json_schema", "json_schema": spec},
            ls_structured_output_format=trace,
        )
        parser = KimiJsonAnswerParser(
            pydantic_schema=schema if is_pydantic else None, original_schema=json_schema
        )
    if not include_raw:
        return llm | parser
    parser_assign = RunnablePassthrough.assign(
        parsed=itemgetter("raw") | parser, parsing_error=lambda _: None
    )
    parser_none = RunnablePassthrough.assign(parsed=lambda _: None)
    with_fallback = parser_assign.with_fallbacks([parser_none], exception_key="parsing_error")
    return RunnableMap(raw=llm) | with_fallback
