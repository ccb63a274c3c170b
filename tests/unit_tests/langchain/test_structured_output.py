"""with_structured_output: pure schema helpers, method choice per model x protocol, the request
bodies it produces (captured by the fake gateway, validated against spec/), parsing, errors
and tracing."""

from __future__ import annotations

import json
import warnings
from typing import Any, NotRequired
from uuid import UUID

import httpx
import pytest
from langchain.agents.factory import _supports_provider_strategy
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.exceptions import ModelRefusalError, OutputParserException
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ChatMessage
from langchain_core.outputs import ChatGeneration, Generation
from langchain_core.utils.function_calling import convert_to_json_schema, convert_to_openai_tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field
from pydantic import v1 as pydantic_v1
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from langchain_kimi import ChatKimi
from langchain_kimi._langchain.structured import (
    KimiJsonAnswerParser,
    drop_optional_nulls,
    effective_method,
    make_strict,
)
from langchain_kimi._request.profiles import all_rows
from langchain_kimi._request.tools import schema_parts
from langchain_kimi.testing import FakeKimiGateway, frames
from tools.schema_validation import validate_request

# Issue 31: each test also runs on replies without the optional keys that say nothing.
pytestmark = pytest.mark.usefixtures("both_reply_forms")

MODELS = ("kimi-k3.1-pro", "kimi-k3.1-pro-highspeed", "kimi-k3")
PROTOCOLS = ("openai", "anthropic")
ANSWER = {"city": "Paris", "temperature_c": 21.5}
STRICT_ANSWER = json.dumps({**ANSWER, "summary": None})
"""Under a strict schema every key is required, an optional one nullable (`make_strict`): the
service's answer has them all (the fake refuses a reply the schema refuses)."""


class Weather(BaseModel):
    """Current weather in a city."""

    city: str
    temperature_c: float
    summary: str | None = None


class WeatherDict(TypedDict):
    """Current weather in a city."""

    city: str
    temperature_c: float
    summary: NotRequired[str]


class WeatherV1(pydantic_v1.BaseModel):
    city: str
    temperature_c: float


_TOOL_FORM: dict[str, Any] = {
    "description": "An answer.",
    "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
}

WEATHER_JSON: dict[str, Any] = {
    "title": "weather",
    "description": "Current weather in a city.",
    "type": "object",
    "properties": {"city": {"type": "string"}, "temperature_c": {"type": "number"}},
    "required": ["city", "temperature_c"],
}


# --- fake service ------------------------------------------------------------------------------


def _script(
    gateway: FakeKimiGateway, request: httpx.Request, text: str, how: str | None
) -> dict[str, Any]:
    """The reply to `request`, scripted on the fake gateway as it arrives: the forced tool's
    call when tools were sent (its name is the schema's), else `text`. `how`: "refusal",
    "max_tokens" (the reply was cut), "cut_call" (the forced call cut at max_tokens:
    `{"city": "Pa` on Chat Completions, `{"city": "Pa"}` on Messages, whose input is an object)
    or "unchecked" (a raw answer the documents rule out: text that is not the schema's JSON
    under a JSON schema). Returns the request body."""
    body: dict[str, Any] = json.loads(request.content)
    tools = body.get("tools") or []
    name = (tools[0].get("name") or tools[0]["function"]["name"]) if tools else ""
    messages = request.url.path.endswith("/messages")
    if how == "unchecked":
        gateway.add_raw(_unchecked(body["model"], text, messages))
    elif how == "cut_call":
        cut = {"args": {"city": "Pa"}} if messages else {"arguments": '{"city": "Pa'}
        gateway.add_reply(tool_calls=[{"name": name, **cut}], truncated=True)
    elif tools and how is None:
        gateway.add_reply(tool_calls=[{"name": name, "args": ANSWER}])
    else:
        gateway.add_reply(text=text, refusal=how == "refusal", truncated=how == "max_tokens")
    return body


def _unchecked(model: str, text: str, messages: bool) -> dict[str, Any]:
    if messages:
        content = [{"type": "thinking", "thinking": "t", "signature": "s"}]
        content.append({"type": "text", "text": text})
        usage = {"input_tokens": 5, "output_tokens": 7}
        return frames.anthropic_message("msg_1", model, content, "end_turn", usage)
    message = {"role": "assistant", "content": text, "reasoning_content": "t"}
    usage = {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}
    return frames.openai_completion("chatcmpl-1", model, message, "stop", usage)


def _model(
    model: str,
    protocol: str,
    sent: list[dict[str, Any]],
    text: str = json.dumps(ANSWER),
    *,
    how: str | None = None,
) -> ChatKimi:
    """A ChatKimi on the fake gateway answering `text` (or the forced tool's call, see
    `_script`); the bodies sent are appended to `sent`."""
    gateway = FakeKimiGateway()

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(_script(gateway, request, text, how))
        return gateway.transport.handle_request(request)

    mock = httpx.MockTransport(handle)
    return gateway.chat_model(
        protocol=protocol,
        model=model,
        http_client=httpx.Client(transport=mock),
        http_async_client=httpx.AsyncClient(transport=mock),
    )


# --- make_strict / drop_optional_nulls ----------------------------------------------------------


def test_make_strict_closes_requires_and_nulls_optionals_without_mutating() -> None:
    source: dict[str, Any] = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "default": 3},
            "kind": {"enum": ["a", "b"]},
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "zip": {"type": "string"}},
                "required": ["street"],
            },
            "tags": {"type": "array", "items": {"type": "object", "properties": {"x": {}}}},
            "extra": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        "required": ["name", "address"],
    }
    before = json.dumps(source)
    strict = make_strict(source)
    assert json.dumps(source) == before, "the caller's schema is not modified"
    assert strict["additionalProperties"] is False
    assert strict["required"] == ["name", "age", "kind", "address", "tags", "extra"]
    assert strict["properties"]["name"] == {"type": "string"}
    assert strict["properties"]["age"] == {"type": ["integer", "null"]}  # default dropped
    assert strict["properties"]["kind"] == {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]}
    address = strict["properties"]["address"]
    assert address["required"] == ["street", "zip"]
    assert address["properties"]["zip"] == {"type": ["string", "null"]}
    assert address["additionalProperties"] is False
    assert strict["properties"]["tags"]["type"] == ["array", "null"]
    item = strict["properties"]["tags"]["items"]
    assert item["additionalProperties"] is False
    assert item["required"] == ["x"]
    # A free-form map cannot be expressed in strict mode: left as the caller wrote it.
    assert strict["properties"]["extra"]["additionalProperties"] == {"type": "integer"}


def test_make_strict_keeps_already_nullable_and_property_named_default() -> None:
    source = {
        "type": "object",
        "properties": {
            "default": {"type": "string"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
    }
    strict = make_strict(source)
    assert set(strict["properties"]) == {"default", "note"}
    assert strict["properties"]["default"] == {"type": ["string", "null"]}
    assert strict["properties"]["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}


def test_drop_optional_nulls_only_where_strict_added_them() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string"},
            "c": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"z": {"type": "integer"}}},
            },
        },
        "required": ["a"],
    }
    value = {"a": None, "b": None, "c": None, "items": [{"z": None}, {"z": 1}]}
    assert drop_optional_nulls(value, schema) == {
        "a": None,  # required: a null is the model's answer, the validator decides
        "c": None,  # the caller's schema accepts null
        "items": [{}, {"z": 1}],
    }


# --- schema forms and method choice ------------------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        Weather,
        WeatherDict,
        WEATHER_JSON,
        {"type": "function", "function": {"name": "weather", "parameters": WEATHER_JSON}},
        {"name": "weather", "schema": WEATHER_JSON},
        {"type": "json_schema", "json_schema": {"name": "weather", "schema": WEATHER_JSON}},
    ],
    ids=["pydantic", "typeddict", "json-schema", "openai-tool", "rf-inner", "response-format"],
)
def test_schema_parts_accepts_every_form(schema: Any) -> None:
    name, _, body = schema_parts(schema)
    assert name.lower().startswith("weather")
    assert body["type"] == "object"
    assert {"city", "temperature_c"} <= set(body["properties"])
    assert "description" not in body or body["description"]


_EXPECTED_METHOD = {
    ("openai", "json_schema"): "json_schema",
    ("openai", "function_calling"): "function_calling",
    ("openai", "json_mode"): "json_mode",
    ("anthropic-k31", "json_schema"): "json_schema",
    ("anthropic-k31", "function_calling"): "function_calling",
    ("anthropic-k31", "json_mode"): "json_schema",
    ("anthropic-k3", "json_schema"): "function_calling",
    ("anthropic-k3", "function_calling"): "function_calling",
    ("anthropic-k3", "json_mode"): "function_calling",
}


@pytest.mark.parametrize("row", all_rows(), ids=lambda r: f"{r.protocol}-{r.model}")
@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode"])
def test_effective_method_per_model_and_protocol(row: Any, method: str) -> None:
    model = ChatKimi(model_name=row.model, protocol=row.protocol, api_key="k")  # type: ignore[arg-type]
    family = row.protocol
    if row.protocol == "anthropic":
        family += "-k3" if row.model == "kimi-k3" else "-k31"
    assert effective_method(model, Weather, method) == _EXPECTED_METHOD[(family, method)]
    if row.protocol == "anthropic":
        with pytest.raises(ValueError, match="JSON mode without a schema"):
            effective_method(model, None, "json_mode")
    else:
        assert effective_method(model, None, "json_mode") == "json_mode"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"schema": None}, "needs a schema"),
        ({"schema": None, "method": "function_calling"}, "needs a schema"),
        ({"schema": Weather, "method": "tools"}, "method must be one of"),
        ({"schema": Weather, "bogus": 1}, "unsupported arguments"),
    ],
)
def test_bad_arguments_fail_before_any_call(kwargs: dict[str, Any], message: str) -> None:
    sent: list[dict[str, Any]] = []
    with pytest.raises(ValueError, match=message):
        _model("kimi-k3.1-pro", "openai", sent).with_structured_output(**kwargs)
    assert sent == []


# --- request bodies ------------------------------------------------------------------------------


def _invoke(
    model: str, protocol: str, schema: Any, text: str = json.dumps(ANSWER), **kwargs: Any
) -> tuple[Any, dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    runnable = _model(model, protocol, sent, text).with_structured_output(schema, **kwargs)
    result = runnable.invoke("hi")
    assert len(sent) == 1
    validate_request(sent[0], protocol, model)
    return result, sent[0]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("schema", [Weather, WeatherDict, WEATHER_JSON], ids=["pd", "td", "js"])
def test_openai_json_schema_is_strict_and_sends_no_tools(model: str, schema: Any) -> None:
    text = json.dumps(ANSWER) if schema is WEATHER_JSON else STRICT_ANSWER  # no summary there
    result, body = _invoke(model, "openai", schema, text)
    assert set(body) == {"model", "messages", "response_format"}
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    spec = response_format["json_schema"]
    assert spec["strict"] is True
    assert spec["schema"]["additionalProperties"] is False
    assert set(spec["schema"]["required"]) == set(spec["schema"]["properties"])
    if schema is Weather:
        assert result == Weather(city="Paris", temperature_c=21.5)
        assert spec["schema"]["properties"]["summary"] == {
            "anyOf": [{"type": "string"}, {"type": "null"}]
        }
    else:
        assert result == ANSWER


def test_openai_strict_false_sends_the_schema_unchanged() -> None:
    _, body = _invoke("kimi-k3.1-pro", "openai", WEATHER_JSON, strict=False)
    spec = body["response_format"]["json_schema"]
    assert spec == {"name": "weather", "strict": False, "schema": WEATHER_JSON}


def test_openai_response_format_matches_chat_openai_oracle() -> None:
    closed = {**WEATHER_JSON, "additionalProperties": False}
    captured: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        captured.append(json.loads(request.content))
        return httpx.Response(400, json={"error": {"message": "stop", "type": "x"}})

    oracle = ChatOpenAI(
        model="kimi-k3.1-pro",
        api_key="test-key-not-real",  # type: ignore[arg-type]
        max_retries=0,
        http_socket_options=(),  # otherwise ChatOpenAI probes a local socket at construction
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
    with pytest.raises(Exception):  # noqa: B017 - only the request matters
        oracle.with_structured_output(closed, method="json_schema", strict=True).invoke("hi")
    theirs = captured[0]["response_format"]
    _, body = _invoke("kimi-k3.1-pro", "openai", closed, strict=True)
    ours = body["response_format"]
    assert ours["type"] == theirs["type"] == "json_schema"
    assert ours["json_schema"]["name"] == theirs["json_schema"]["name"]
    assert ours["json_schema"]["strict"] is theirs["json_schema"]["strict"] is True
    strip = {"title", "description"}
    assert {k: v for k, v in ours["json_schema"]["schema"].items() if k not in strip} == {
        k: v for k, v in theirs["json_schema"]["schema"].items() if k not in strip
    }


@pytest.mark.parametrize("model", ["kimi-k3.1-pro", "kimi-k3.1-pro-highspeed"])
@pytest.mark.parametrize("method", ["json_schema", "json_mode"])
def test_anthropic_k31_uses_output_config_format(model: str, method: str) -> None:
    result, body = _invoke(model, "anthropic", Weather, method=method)
    assert set(body) == {"model", "max_tokens", "messages", "output_config"}
    assert set(body["output_config"]) == {"format"}
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    assert fmt["schema"]["required"] == ["city", "temperature_c"]
    assert result == Weather(city="Paris", temperature_c=21.5)


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode"])
def test_anthropic_k3_falls_back_to_a_named_forced_tool(method: str) -> None:
    result, body = _invoke("kimi-k3", "anthropic", WeatherDict, method=method)
    assert set(body) == {"model", "max_tokens", "messages", "tools", "tool_choice"}
    assert body["tool_choice"] == {"type": "tool", "name": "WeatherDict"}
    assert [t["name"] for t in body["tools"]] == ["WeatherDict"]
    assert result == ANSWER


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_function_calling_forces_one_tool_in_the_documented_form(model: str, protocol: str) -> None:
    result, body = _invoke(model, protocol, Weather, method="function_calling")
    assert result == Weather(city="Paris", temperature_c=21.5)
    assert set(body) == (
        {"model", "messages", "tools", "tool_choice"}
        if protocol == "openai"
        else {"model", "max_tokens", "messages", "tools", "tool_choice"}
    )
    if protocol == "openai":
        assert body["tool_choice"] == {"type": "function", "function": {"name": "Weather"}}
        assert [t["function"]["name"] for t in body["tools"]] == ["Weather"]
    elif model == "kimi-k3":
        assert body["tool_choice"] == {"type": "tool", "name": "Weather"}
    else:
        assert body["tool_choice"] == {"type": "any"}
        assert [t["name"] for t in body["tools"]] == ["Weather"]


@pytest.mark.parametrize("model", MODELS)
def test_openai_json_mode_without_schema_returns_a_dict(model: str) -> None:
    result, body = _invoke(model, "openai", None, method="json_mode")
    assert body["response_format"] == {"type": "json_object"}
    assert result == ANSWER


def test_pydantic_v1_schema() -> None:
    result, body = _invoke("kimi-k3.1-pro", "openai", WeatherV1)
    assert body["response_format"]["json_schema"]["name"] == "WeatherV1"
    assert isinstance(result, WeatherV1)
    assert result.city == "Paris"


def test_field_descriptions_reach_the_schema() -> None:
    class Described(BaseModel):
        """A described answer."""

        value: int = Field(description="the number")

    sent: list[dict[str, Any]] = []
    model = _model("kimi-k3.1-pro", "anthropic", sent, text='{"value": 4}')
    assert model.with_structured_output(Described).invoke("hi") == Described(value=4)
    schema = sent[0]["output_config"]["format"]["schema"]
    assert schema["properties"]["value"]["description"] == "the number"
    assert schema["description"] == "A described answer."


# --- parsing, include_raw, refusal -------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_invalid_json_raises_with_the_raw_text(protocol: str) -> None:
    model = _model("kimi-k3.1-pro", protocol, [], text='{"city": "Par', how="max_tokens")
    with pytest.raises(OutputParserException) as caught:
        model.with_structured_output(WEATHER_JSON).invoke("hi")
    assert caught.value.llm_output == '{"city": "Par'


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("schema", [Weather, WEATHER_JSON], ids=["pd", "js"])
def test_include_raw_never_raises_for_bad_json(protocol: str, schema: Any) -> None:
    model = _model("kimi-k3.1-pro", protocol, [], text="not json at all", how="unchecked")
    out = model.with_structured_output(schema, include_raw=True).invoke("hi")
    assert out["parsed"] is None
    assert isinstance(out["parsing_error"], OutputParserException)
    assert out["raw"].content == "not json at all"


def test_include_raw_success() -> None:
    model = _model("kimi-k3.1-pro", "anthropic", [])
    out = model.with_structured_output(Weather, include_raw=True).invoke("hi")
    assert out["parsed"] == Weather(city="Paris", temperature_c=21.5)
    assert out["parsing_error"] is None
    assert out["raw"].response_metadata["finish_reason"] == "stop"


def test_pydantic_mismatch_is_an_output_parser_error() -> None:
    model = _model("kimi-k3.1-pro", "openai", [], text='{"city": "Paris"}', how="unchecked")
    with pytest.raises(OutputParserException, match="does not match Weather") as caught:
        model.with_structured_output(Weather).invoke("hi")
    assert caught.value.llm_output == '{"city": "Paris"}'


def test_refusal_stop_reason_raises_model_refusal_error() -> None:
    model = _model("kimi-k3.1-pro", "anthropic", [], text="I can't help.", how="refusal")
    with pytest.raises(ModelRefusalError) as caught:
        model.with_structured_output(Weather).invoke("hi")
    assert caught.value.raw_message is not None
    assert caught.value.raw_message.response_metadata["raw_finish_reason"] == "refusal"


# --- function_calling: a refusal or a reply cut at max_tokens is an error, never None or a part ---
# 000: `stop_reason` "refusal" and "max_tokens" ("se alcanzó max_tokens": max_tokens was reached).
# The peers differ: ChatOpenAI returns None for tool arguments that are not JSON; ChatAnthropic and
# langchain-core's parsers return the partial dict (a pydantic schema fails validation, with a log
# line about `max_tokens`). ChatKimi raises: a cut-off tool call is not the requested output.


@pytest.mark.parametrize("schema", [Weather, WEATHER_JSON])
@pytest.mark.parametrize(
    ("protocol", "streamed"), [("openai", False), ("openai", True), ("anthropic", False)]
)
def test_function_calling_cut_at_max_tokens_raises(
    schema: Any, protocol: str, streamed: bool
) -> None:
    model = _model("kimi-k3.1-pro", protocol, [], how="cut_call")
    structured = model.with_structured_output(schema, method="function_calling")
    with pytest.raises(OutputParserException) as caught:
        list(structured.stream("hi")) if streamed else structured.invoke("hi")
    assert str(caught.value).startswith(
        "the reply was cut at max_tokens (finish_reason=length) before its tool call was"
        " complete; raise max_tokens or shorten the request"
    )
    assert caught.value.llm_output is not None
    assert "city" in caught.value.llm_output, "the partial arguments are kept for the reader"
    assert "Pa" in caught.value.llm_output


@pytest.mark.parametrize("schema", [Weather, WEATHER_JSON])
def test_function_calling_refusal_raises_model_refusal_error(schema: Any) -> None:
    model = _model("kimi-k3.1-pro", "anthropic", [], text="I can't help.", how="refusal")
    structured = model.with_structured_output(schema, method="function_calling")
    with pytest.raises(ModelRefusalError):
        structured.invoke("hi")
    refused = AIMessageChunk(content="no", response_metadata={"finish_reason": "refusal"})
    with pytest.raises(ModelRefusalError):
        list(structured.last.transform(iter([refused])))  # type: ignore[attr-defined]


def test_stream_parser_ends_with_full_object_and_raises_on_bad_json() -> None:
    parser = KimiJsonAnswerParser()
    pieces = ['{"city": "Pa', 'ris", "tempera', 'ture_c": 21.5}']
    out = list(parser.transform(iter(AIMessageChunk(content=p) for p in pieces)))
    assert out[0] == {"city": "Pa"}
    assert out[-1] == ANSWER
    with pytest.raises(OutputParserException):
        list(parser.transform(iter([AIMessageChunk(content="{oops")])))
    refused = AIMessageChunk(content="no", response_metadata={"finish_reason": "refusal"})
    with pytest.raises(ModelRefusalError):
        list(parser.transform(iter([refused])))


# --- tracing and profile -----------------------------------------------------------------------


class _Options(BaseCallbackHandler):
    def __init__(self) -> None:
        self.options: list[dict[str, Any]] = []

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        self.options.append(kwargs.get("options") or {})


@pytest.mark.parametrize(
    ("protocol", "model", "method", "schema"),
    [
        ("openai", "kimi-k3.1-pro", "json_schema", Weather),
        ("openai", "kimi-k3.1-pro", "function_calling", WEATHER_JSON),
        ("anthropic", "kimi-k3", "json_schema", WeatherDict),
    ],
)
def test_ls_structured_output_format_reaches_tracing(
    protocol: str, model: str, method: str, schema: Any
) -> None:
    handler = _Options()
    text = STRICT_ANSWER if method == "json_schema" else json.dumps(ANSWER)
    runnable = _model(model, protocol, [], text).with_structured_output(
        schema,
        method=method,  # type: ignore[arg-type]
    )
    runnable.invoke("hi", config={"callbacks": [handler]})
    (options,) = handler.options
    traced = options["ls_structured_output_format"]
    assert traced["kwargs"] == {"method": method, "strict": None}
    assert set(traced["schema"]["properties"]) >= {"city", "temperature_c"}


@pytest.mark.parametrize("row", all_rows(), ids=lambda r: f"{r.protocol}-{r.model}")
def test_profile_declares_native_structured_output_for_create_agent(row: Any) -> None:
    model = ChatKimi(model_name=row.model, protocol=row.protocol, api_key="k")  # type: ignore[arg-type]
    native = not (row.protocol == "anthropic" and row.model == "kimi-k3")
    assert model.profile is not None
    assert model.profile["structured_output"] is native
    assert _supports_provider_strategy(model) is native


@pytest.mark.parametrize("streamed", [False, True])
def test_include_raw_never_raises_streamed_or_not(streamed: bool) -> None:
    from langchain_core.exceptions import OutputParserException

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        payload = {
            "id": "chatcmpl-raw",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "kimi-k3.1-pro",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return "data: " + json.dumps(payload) + "\n\n"

    sse = chunk({"content": "not "}) + chunk({"content": "json"}, "stop") + "data: [DONE]\n\n"
    reply = {
        "id": "chatcmpl-raw",
        "object": "chat.completion",
        "created": 1,
        "model": "kimi-k3.1-pro",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "not json"},
                "finish_reason": "stop",
            }
        ],
    }

    model = FakeKimiGateway().add_raw(sse if streamed else reply).chat_model()
    structured = model.with_structured_output(
        {"title": "Answer", "type": "object", "properties": {"a": {"type": "string"}}},
        include_raw=True,
    )
    if streamed:
        outputs = list(structured.stream("hi"))
        result = outputs[-1]
    else:
        result = structured.invoke("hi")
    assert result["parsed"] is None
    assert isinstance(result["parsing_error"], OutputParserException)
    assert result["raw"].content == "not json"


# --- mutation sample (issue 31): what the survivors of structured.py changed unnoticed -----------


def _stream_parse(parser: Any, pieces: list[Any]) -> list[Any]:
    return list(parser.transform(iter(pieces)))


def test_stream_parser_yields_each_new_value_once() -> None:
    """A piece that adds nothing parseable (`, "tem`) yields nothing, and the complete object is
    not repeated when the last partial value already was it."""
    pieces = ['{"city": "Paris"', ', "tem', 'perature_c": 21.5}']
    out = _stream_parse(KimiJsonAnswerParser(), [AIMessageChunk(content=p) for p in pieces])
    assert out == [{"city": "Paris"}, ANSWER]


def test_stream_parser_yields_the_empty_start_of_a_json_string() -> None:
    out = _stream_parse(KimiJsonAnswerParser(), [AIMessageChunk(content=p) for p in ['"', 'ab"']])
    assert out == ["", "ab"]


def test_stream_parser_waits_through_a_code_fence_then_parses_it() -> None:
    """A fenced answer streamed: its first piece (the fence) is no value yet, not an error."""
    pieces = ["```", 'json\n{"city": "Paris", ', '"temperature_c": 21.5}\n```']
    out = _stream_parse(KimiJsonAnswerParser(), [AIMessageChunk(content=p) for p in pieces])
    assert out == [{"city": "Paris"}, ANSWER]


def test_stream_parser_takes_text_and_whole_messages() -> None:
    """`transform` accepts what a runnable upstream may yield: strings and non-chunk messages."""
    parser = KimiJsonAnswerParser()
    assert _stream_parse(parser, ['{"city": "Paris", ', '"temperature_c": 21.5}']) == [
        {"city": "Paris"},
        ANSWER,
    ]
    assert _stream_parse(parser, [AIMessage(content=json.dumps(ANSWER))]) == [ANSWER]
    refused = AIMessage(content="no", response_metadata={"finish_reason": "refusal"})
    with pytest.raises(ModelRefusalError):
        _stream_parse(parser, [refused])


async def test_async_stream_parser_matches_the_sync_one() -> None:
    pieces = ['{"city": "Paris"', ', "tem', 'perature_c": 21.5}']

    async def chunks() -> Any:
        for piece in pieces:
            yield AIMessageChunk(content=piece)

    out = [value async for value in KimiJsonAnswerParser().atransform(chunks())]
    assert out == [{"city": "Paris"}, ANSWER]


def test_fenced_json_answer_is_parsed() -> None:
    # A fenced answer is not the schema's JSON: the fake refuses to script it, so it is raw.
    text = "```json\n" + json.dumps(ANSWER) + "\n```"
    model = _model("kimi-k3.1-pro", "openai", [], text=text, how="unchecked")
    assert model.with_structured_output(Weather).invoke("hi") == Weather(
        city="Paris", temperature_c=21.5
    )
    bare_fence = "```\n" + json.dumps(ANSWER) + "\n```"
    model = _model("kimi-k3.1-pro", "openai", [], text=bare_fence, how="unchecked")
    assert model.with_structured_output(WEATHER_JSON).invoke("hi") == ANSWER


def test_the_error_messages_say_what_went_wrong() -> None:
    with pytest.raises(OutputParserException) as caught:
        KimiJsonAnswerParser().parse_result([Generation(text="{oops")])
    assert str(caught.value).startswith("the reply is not valid JSON: ")
    with pytest.raises(OutputParserException) as caught:
        KimiJsonAnswerParser().parse_result([])
    assert caught.value.llm_output == ""
    model = _model("kimi-k3.1-pro", "anthropic", [], text="I can't.", how="refusal")
    with pytest.raises(ModelRefusalError) as refused:
        model.with_structured_output(Weather).invoke("hi")
    assert str(refused.value) == (
        "Kimi refused to produce the requested output (stop_reason=refusal)"
    )
    sent: list[dict[str, Any]] = []
    with pytest.raises(ValueError) as bad_method:
        _model("kimi-k3.1-pro", "openai", sent).with_structured_output(Weather, method="tools")  # type: ignore[arg-type]
    assert str(bad_method.value) == (
        "method must be one of json_schema, function_calling, json_mode; got 'tools'"
    )
    with pytest.raises(ValueError) as no_schema:
        _model("kimi-k3.1-pro", "anthropic", sent).with_structured_output(None, method="json_mode")
    assert str(no_schema.value) == (
        "JSON mode without a schema is not documented on the anthropic protocol (only "
        "response_format json_object on Chat Completions); pass a schema or use protocol='openai'"
    )


def test_a_plain_generation_is_parsed_as_text() -> None:
    assert KimiJsonAnswerParser().parse_result([Generation(text=json.dumps(ANSWER))]) == ANSWER


@pytest.mark.parametrize("partial", [False, True])
def test_a_forced_tool_parser_refuses_a_plain_generation(partial: bool) -> None:
    """The tool parsers need a chat message: langchain-core's error, not an AttributeError."""
    parser = (
        _model("kimi-k3.1-pro", "openai", [])
        .with_structured_output(WEATHER_JSON, method="function_calling")
        .last
    )  # type: ignore[attr-defined]
    with pytest.raises(OutputParserException, match="chat generation"):
        parser.parse_result([Generation(text="{}")], partial=partial)


def test_a_cut_reply_in_any_chat_message_class_raises_the_cut_error() -> None:
    parser = (
        _model("kimi-k3.1-pro", "openai", [])
        .with_structured_output(WEATHER_JSON, method="function_calling")
        .last
    )  # type: ignore[attr-defined]
    cut = ChatMessage(role="assistant", content="", response_metadata={"finish_reason": "length"})
    with pytest.raises(OutputParserException, match="cut at max_tokens") as caught:
        parser.parse_result([ChatGeneration(message=cut)])
    assert caught.value.llm_output == "[]"


def test_strict_json_schema_drops_the_nulls_it_added() -> None:
    """On openai the strict copy makes `summary` required-but-nullable; a null the model had to
    send for it is dropped, as the caller's schema has it optional."""
    schema = {
        **WEATHER_JSON,
        "properties": {**WEATHER_JSON["properties"], "summary": {"type": "string"}},
    }
    text = json.dumps({**ANSWER, "summary": None})
    model = _model("kimi-k3.1-pro", "openai", [], text=text)
    assert model.with_structured_output(schema).invoke("hi") == ANSWER
    # Not strict, the schema sent refuses the null: raw, as a service that does not enforce it.
    model = _model("kimi-k3.1-pro", "openai", [], text=text, how="unchecked")
    assert model.with_structured_output(schema, strict=False).invoke("hi") == {
        **ANSWER,
        "summary": None,
    }


def test_pydantic_v2_schema_parses_without_deprecation_warnings() -> None:
    model = _model("kimi-k3.1-pro", "openai", [], text=STRICT_ANSWER)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert model.with_structured_output(Weather).invoke("hi") == Weather(
            city="Paris", temperature_c=21.5
        )


def test_openai_json_mode_with_a_schema_sends_json_object_and_validates() -> None:
    result, body = _invoke("kimi-k3.1-pro", "openai", Weather, method="json_mode")
    assert body["response_format"] == {"type": "json_object"}
    assert "tools" not in body
    assert result == Weather(city="Paris", temperature_c=21.5)


def test_openai_json_mode_without_schema_include_raw() -> None:
    model = _model("kimi-k3.1-pro", "openai", [])
    out = model.with_structured_output(None, method="json_mode", include_raw=True).invoke("hi")
    assert out["parsed"] == ANSWER
    assert out["parsing_error"] is None
    assert out["raw"].content == json.dumps(ANSWER)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_function_calling_with_a_dict_schema_sends_it_as_the_tool(protocol: str) -> None:
    _, body = _invoke("kimi-k3.1-pro", protocol, WEATHER_JSON, method="function_calling")
    description = "Current weather in a city."
    if protocol == "openai":
        assert body["tools"] == [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "description": description,
                    "parameters": WEATHER_JSON,
                },
            }
        ]
    else:
        assert body["tools"] == [
            {"name": "weather", "description": description, "input_schema": WEATHER_JSON}
        ]


def test_function_calling_with_a_pydantic_schema_sends_it_as_langchain_converts_it() -> None:
    _, body = _invoke("kimi-k3.1-pro", "openai", Weather, method="function_calling")
    assert body["tools"] == [convert_to_openai_tool(Weather)]


def test_function_calling_passes_strict_to_the_tool() -> None:
    _, body = _invoke(
        "kimi-k3.1-pro", "openai", WEATHER_JSON, method="function_calling", strict=True
    )
    assert body["tools"][0]["function"]["strict"] is True


@pytest.mark.parametrize(
    ("method", "schema"),
    [
        ("json_mode", Weather),
        ("function_calling", WEATHER_JSON),
        ("json_schema", {"type": "function", "function": {"name": "answer", **_TOOL_FORM}}),
    ],
)
def test_traced_schema_keeps_name_and_description(method: str, schema: Any) -> None:
    handler = _Options()
    text = json.dumps({"a": "x"}) if method == "json_schema" else STRICT_ANSWER
    runnable = _model("kimi-k3.1-pro", "openai", [], text=text).with_structured_output(
        schema,
        method=method,  # type: ignore[arg-type]
    )
    runnable.invoke("hi", config={"callbacks": [handler]})
    (options,) = handler.options
    traced = options["ls_structured_output_format"]
    assert traced["kwargs"] == {"method": method, "strict": None}
    expected = convert_to_json_schema(schema)
    assert traced["schema"] == expected
    assert traced["schema"]["title"] in {"Weather", "weather", "answer"}
    assert traced["schema"]["description"] in {"Current weather in a city.", "An answer."}
