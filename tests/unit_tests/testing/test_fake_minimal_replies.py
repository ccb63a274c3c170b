"""Issue 31 (fidelity): `assume={"reply-optional-fields": "strict"}` serves replies holding only
what the response schemas require, plus the optional keys that say something.

The default replies carry every documented key (`cache_write_tokens: 0`, `stop_sequence: null`),
so a parser reading an optional key unguarded passes on them; on the cut replies it fails. The
cut replies stay valid against the documents, streamed (reassembled) and not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langchain_core.tools import tool

from langchain_kimi import KimiAPIError
from langchain_kimi.protocols.openai_chat import response as openai_response
from langchain_kimi.protocols.openai_chat import stream as openai_stream
from langchain_kimi.testing import FakeKimiGateway
from langchain_kimi.testing.documents import response_components, response_problems
from tests.unit_tests.testing.raw import MESSAGES_HEADERS, post, user

STRICT = {"reply-optional-fields": "strict"}
FORMS = {"full": {}, "cut": STRICT}
CALL = [{"name": "get_weather", "args": {"city": "Oslo"}}]
TOOLS = {
    "anthropic": [{"name": "get_weather", "input_schema": {"type": "object"}}],
    "openai": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
}
STEPS: dict[str, dict[str, Any]] = {
    "text": {"text": "Paris is the capital.", "reasoning": ""},
    "reasoning": {"text": "Paris.", "reasoning": "The capital of France is Paris."},
    "tool calls": {"tool_calls": CALL},
    "usage": {
        "text": "ok",
        "usage": {"input_tokens": 100, "output_tokens": 9, "reasoning_tokens": 4, "cache_read": 60},
    },
}


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return "18°C"


# --- reassembling a stream, independently of ChatKimi's decoders --------------------------------


def _payloads(text: str) -> Iterator[Any]:
    for line in text.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            yield json.loads(line.removeprefix("data: "))


def _anthropic_whole(text: str) -> dict[str, Any]:
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for event in _payloads(text):
        kind = event["type"]
        if kind == "message_start":
            message = dict(event["message"])
        elif kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            if delta["type"] == "input_json_delta":
                partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
            else:
                key = delta["type"].removesuffix("_delta")
                block[key] = block.get(key, "") + delta[key]
        elif kind == "message_delta":
            message.update(event["delta"])
            message["usage"] = {**message.get("usage", {}), **event["usage"]}
    for index, raw in partial.items():
        blocks[index]["input"] = json.loads(raw)
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _openai_whole(text: str) -> dict[str, Any]:
    whole: dict[str, Any] = {}
    message: dict[str, Any] = {}
    calls: dict[int, dict[str, Any]] = {}
    choice: dict[str, Any] = {}
    for chunk in _payloads(text):
        whole.update({k: v for k, v in chunk.items() if k not in ("choices", "usage")})
        if "usage" in chunk:
            whole["usage"] = chunk["usage"]
        for part in chunk.get("choices", []):
            if "finish_reason" in part and part["finish_reason"] is not None:
                choice["finish_reason"] = part["finish_reason"]
            for key, value in part.get("delta", {}).items():
                if key == "tool_calls":
                    for delta in value:
                        call = calls.setdefault(delta["index"], {"function": {}})
                        call.update({k: delta[k] for k in ("id", "type") if k in delta})
                        for name, piece in delta.get("function", {}).items():
                            fn = call["function"]
                            fn[name] = fn.get(name, "") + piece
                elif key == "role":
                    message["role"] = value
                elif value is not None:
                    message[key] = message.get(key, "") + value
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    whole["object"] = "chat.completion"
    whole["choices"] = [{**choice, "message": message}]
    return whole


def _served(protocol: str, model: str, step: dict[str, Any], stream: bool, **assume: Any) -> Any:
    gw = FakeKimiGateway(assume=assume).add_reply(**step)
    body: dict[str, Any] = {**user("Capital of France?", model=model, protocol=protocol)}
    if step.get("tool_calls"):
        body["tools"] = TOOLS[protocol]
    if stream:
        body["stream"] = True
    headers = MESSAGES_HEADERS if protocol == "anthropic" else None
    response = post(gw, protocol, body, headers)
    assert response.status_code == 200, response.text
    if not stream:
        return response.json()
    whole = _anthropic_whole if protocol == "anthropic" else _openai_whole
    return response.text, whole(response.text)


def _required_names(protocol: str, model: str) -> set[str]:
    """Every key name some response schema of the document requires."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            names.update(node.get("required", ()))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(response_components(protocol, model))
    return names


def _silent_keys(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, key) of every key whose value says nothing: null, 0, "", [] or {}."""
    if isinstance(value, dict):
        for key, item in value.items():
            if item is None or item in ("", [], {}) or (item == 0 and item is not False):
                yield f"{path}{key}", key
            yield from _silent_keys(item, f"{path}{key}.")
    elif isinstance(value, list):
        for item in value:
            yield from _silent_keys(item, path)


CASES = [
    pytest.param(protocol, model, name, id=f"{protocol}-{model}-{name}")
    for protocol in ("anthropic", "openai")
    for model in ("kimi-k3.1-pro", "kimi-k3")
    for name in STEPS
]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize(("protocol", "model", "name"), CASES)
def test_cut_replies_are_valid_and_hold_nothing_silent_but_required_keys(
    protocol: str, model: str, name: str, stream: bool
) -> None:
    served = _served(protocol, model, STEPS[name], stream, **STRICT)
    whole = served[1] if stream else served
    assert response_problems(whole, protocol, model) == []
    required = _required_names(protocol, model)
    parts = _documented_parts(protocol, served[0]) if stream else [whole]
    silent = [path for part in parts for path, key in _silent_keys(part) if key not in required]
    # A Chat chunk's `delta` (`{}` on the finish chunk) is no documented object as a whole, and
    # a streamed tool call's `index` is OpenAI's stream format, outside `ToolCall`.
    # The trailing usage chunk's `choices: []` is the `chat-stream-usage` row's shape.
    envelope = ("choices.delta", "choices.delta.tool_calls.index", "choices")
    assert [p for p in silent if p not in envelope] == []


def _documented_parts(protocol: str, text: str) -> list[Any]:
    """The parts of a stream that are documented objects (the event envelopes, `index`
    included, are Anthropic's stream format, which the documents name without a schema)."""
    if protocol == "openai":
        return list(_payloads(text))
    keys = ("message", "content_block", "usage")
    parts = [e[k] for e in _payloads(text) for k in keys if k in e]
    return parts + [e["delta"] for e in _payloads(text) if e["type"] == "message_delta"]


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], Any]:
    if isinstance(value, dict) and value:
        return {k: v for key, item in value.items() for k, v in _leaves(item, (*path, key)).items()}
    if isinstance(value, list) and value:
        return {k: v for i, item in enumerate(value) for k, v in _leaves(item, (*path, i)).items()}
    return {path: value}


def _silent(value: Any) -> bool:
    return value is None or value in ("", [], {}) or (value == 0 and value is not False)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize(("protocol", "model", "name"), CASES)
def test_the_cut_keeps_every_value_that_says_something(
    protocol: str, model: str, name: str, stream: bool
) -> None:
    full, cut = (_served(protocol, model, STEPS[name], stream, **f) for f in FORMS.values())
    if stream:
        full, cut = full[1], cut[1]
    full_leaves, cut_leaves = _leaves(full), _leaves(cut)
    ids = {("id",), *(p for p in full_leaves if p[-1] == "id")}  # fresh per request
    assert {p: v for p, v in cut_leaves.items() if p not in ids} == {
        p: full_leaves[p] for p in cut_leaves if p not in ids
    }
    dropped = {p: full_leaves[p] for p in full_leaves.keys() - cut_leaves.keys()}
    constants = {("type",): "message", ("role",): "assistant"}  # MessageResponse's one values
    assert {p: v for p, v in dropped.items() if not _silent(v)} == {
        p: v for p, v in constants.items() if p in dropped and protocol == "anthropic"
    }


def test_the_cut_drops_the_silent_optional_keys_the_full_form_sends() -> None:
    full = _served("openai", "kimi-k3.1-pro", STEPS["tool calls"], False)
    cut = _served("openai", "kimi-k3.1-pro", STEPS["tool calls"], False, **STRICT)
    assert full["usage"]["prompt_tokens_details"] == {"cached_tokens": 0, "cache_write_tokens": 0}
    assert "prompt_tokens_details" not in cut["usage"]
    assert full["choices"][0]["message"]["content"] is None
    assert "content" not in cut["choices"][0]["message"]  # optional, null with tool calls
    message = _served("anthropic", "kimi-k3.1-pro", STEPS["text"], False, **STRICT)
    assert not {"type", "role", "stop_sequence"} & set(message)  # constants and a null
    assert set(message["usage"]) == {"input_tokens", "output_tokens"}
    text, _ = _served("anthropic", "kimi-k3.1-pro", STEPS["reasoning"], True, **STRICT)
    starts = [e for e in _payloads(text) if e["type"] == "content_block_start"]
    assert starts[0]["content_block"] == {"type": "thinking", "thinking": ""}  # no signature yet


def test_each_cut_reply_is_recorded_as_resting_on_the_row() -> None:
    gw = FakeKimiGateway(assume=STRICT).add_reply(text="ok")
    gw.chat_model().invoke("hi")
    assert [(u.question, u.outcome) for u in gw.assumed] == [("reply-optional-fields", "served")]
    assert FakeKimiGateway().add_reply(text="ok").assumed == []


# --- the point: a parser needing an optional key is caught ----------------------------------


def _needing_cache_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deliberately broken Chat usage parser: it reads `cache_write_tokens` unguarded."""
    real = openai_response.usage_from_openai

    def broken(usage: dict[str, Any], **kwargs: Any) -> Any:
        usage["prompt_tokens_details"]["cache_write_tokens"]  # the bug: an optional key, unguarded
        return real(usage, **kwargs)

    monkeypatch.setattr(openai_response, "usage_from_openai", broken)
    monkeypatch.setattr(openai_stream, "usage_from_openai", broken)


@pytest.mark.parametrize("streaming", [False, True])
def test_a_parser_needing_an_optional_key_passes_the_full_form_and_fails_the_cut(
    monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    _needing_cache_writes(monkeypatch)
    full = FakeKimiGateway().add_reply(text="ok")
    assert full.chat_model(streaming=streaming).invoke("hi").content == "ok"  # the blind spot
    cut = FakeKimiGateway(assume=STRICT).add_reply(text="ok")
    with pytest.raises(KimiAPIError, match="KeyError 'prompt_tokens_details'"):
        cut.chat_model(streaming=streaming).invoke("hi")


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
@pytest.mark.parametrize("streaming", [False, True])
def test_chat_kimi_reads_the_cut_replies_as_the_full_ones(protocol: str, streaming: bool) -> None:
    """ChatKimi's parsers need no optional key: the same message from both forms (usage details
    a zero stood for aside)."""
    got = []
    for assume in FORMS.values():
        gw = FakeKimiGateway(assume=assume)
        gw.add_reply(tool_calls=CALL, reasoning="Check the weather.")
        gw.add_reply(text="Mild.", usage={"input_tokens": 50, "output_tokens": 5, "cache_read": 8})
        model = gw.chat_model(protocol=protocol, streaming=streaming).bind_tools([get_weather])
        first = model.invoke("Weather in Oslo?")
        tool_message = get_weather.invoke(first.tool_calls[0])
        second = model.invoke(["Weather in Oslo?", first, tool_message])
        got.append(
            [
                (m.content, m.additional_kwargs.get("reasoning_content"), m.tool_calls)
                for m in (first, second)
            ]
            + [(second.usage_metadata or {}).get(k) for k in ("input_tokens", "output_tokens")]
            + [((second.usage_metadata or {}).get("input_token_details") or {}).get("cache_read")]
        )
        assert gw.refusals == []
    assert got[0] == got[1]


def test_the_strict_form_reaches_code_built_on_the_transport() -> None:
    gw = FakeKimiGateway(assume=STRICT).add_reply(text="ok")
    with httpx.Client(transport=gw.transport) as client:
        reply = client.post(
            "https://direct.evolink.ai/v1/chat/completions",
            json=user("hi"),
            headers={"authorization": "Bearer k"},
        ).json()
    assert "index" not in reply["choices"][0]  # 0: says nothing, and the schema needs none
