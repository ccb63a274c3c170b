"""Exact where the documents are exact, tolerant where they are silent (issue 11 items 5-7).

- 001 (kimi-k3, Messages) has no `temperature` / `top_p`; the fixed 1 / 0.95 is written only in
  004 (Chat Completions). On Messages kimi-k3 they are treated as on K3.1 Messages: warned, not sent.
- `maxItems: 128` for tools is 004's; 000 / 001 set no limit.
- 000's WebSearchTool: `type` enum `web_search_20250305`, `name` enum `web_search`, `max_uses`
  ("Máximo de búsquedas permitidas en esta respuesta"), nothing else.
- 004's image part: "Contenido de imagen como URL data Base64 (data:image/png;base64,...)";
  `url` is the only documented key.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest
import yaml
from langchain_core.messages import HumanMessage

from langchain_kimi._request.profiles import K3, K31_PRO, capabilities
from tests.support.wire import Wire
from tools.paths import SPEC_DIR
from tools.schema_validation import schema_properties

PNG = "iVBORw0KGgo="


@pytest.mark.parametrize(("name", "value"), [("temperature", 0.2), ("top_p", 0.5)])
@pytest.mark.parametrize("where", ["field", "call"])
def test_kimi_k3_messages_sampling_is_warned_not_refused(
    name: str, value: float, where: str
) -> None:
    wire = Wire("anthropic", K3)

    def construct_and_call() -> None:
        # A field warns once, at construction; a call argument warns at the call.
        if where == "field":
            wire.gateway.chat_model(protocol="anthropic", model=K3, **{name: value}).invoke("hi")
        else:
            wire.model.invoke("hi", **{name: value})

    with pytest.warns(UserWarning, match=name):
        construct_and_call()
    assert name not in wire.body


@pytest.mark.parametrize(("name", "value"), [("temperature", 0.2), ("top_p", 0.5)])
def test_kimi_k3_chat_sampling_stays_refused(name: str, value: float) -> None:
    wire = Wire("openai", K3)
    with pytest.raises(ValueError, match=name):
        wire.model.invoke("hi", **{name: value})
    assert wire.bodies == []


def _schemas(n: int) -> list[dict[str, Any]]:
    return [
        {"name": f"tool_{i}", "description": "d", "parameters": {"type": "object"}}
        for i in range(n)
    ]


@pytest.mark.parametrize("model", [K31_PRO, K3])
def test_messages_has_no_tool_count_limit(model: str) -> None:
    wire = Wire("anthropic", model)
    wire.model.bind_tools(_schemas(129)).invoke("hi")
    assert len(wire.body["tools"]) == 129


def test_chat_completions_keeps_maxitems_128() -> None:
    wire = Wire("openai")
    with pytest.raises(ValueError, match="128"):
        wire.model.bind_tools(_schemas(129)).invoke("hi")
    assert wire.bodies == []


@pytest.mark.parametrize(
    "tool",
    [
        {"type": "web_search_20260101", "name": "web_search"},
        {"type": "web_search_20250305", "name": "search"},
        {"type": "web_search_20250305", "name": "web_search", "allowed_domains": ["a.b"]},
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 0},
        {"type": "web_search_20250305"},
    ],
)
def test_raw_messages_web_search_tool_is_checked_before_sending(tool: dict[str, Any]) -> None:
    wire = Wire("anthropic")
    with pytest.raises(ValueError, match="web_search_20250305") as caught:
        wire.model.bind_tools([tool]).invoke("hi")
    assert "max_uses" in str(caught.value)  # the allowed form is in the message
    assert wire.bodies == []


def test_raw_messages_web_search_tool_in_the_allowed_form_is_sent_verbatim() -> None:
    tool = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
    wire = Wire("anthropic")
    wire.model.bind_tools([tool]).invoke("hi")
    assert wire.body["tools"] == [tool]


def test_chat_capability_row_claims_no_image_urls() -> None:
    for model in (K31_PRO, K3):
        row = capabilities(model, "openai")
        assert row.image_inputs
        assert not row.image_url_inputs
        assert row.profile()["image_url_inputs"] is False


def _image_message(part: dict[str, Any]) -> list[Any]:
    return [HumanMessage([{"type": "text", "text": "What is this?"}, part])]


def test_chat_http_image_url_is_sent_with_one_warning() -> None:
    from langchain_kimi.protocols.openai_chat import content

    content._warned_media_urls.clear()
    part = {
        "type": "image_url",
        "image_url": {"url": "https://example.com/cat.png", "detail": "high"},
    }
    wire = Wire("openai")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wire.model.invoke(_image_message(part))
        wire.model.invoke(_image_message(part))
    assert any("data:image/png;base64" in str(w.message) for w in caught)
    assert len([w for w in caught if "Base64" in str(w.message)]) == 1
    sent = wire.bodies[0]["messages"][0]["content"][1]
    assert sent == {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}


def test_chat_data_url_image_drops_undocumented_keys_without_warning() -> None:
    url = f"data:image/png;base64,{PNG}"
    part = {"type": "image_url", "image_url": {"url": url, "detail": "low"}}
    wire = Wire("openai")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wire.model.invoke(_image_message(part))
    assert wire.body["messages"][0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": url},
    }


def test_chat_v1_url_image_block_warns_too() -> None:
    from langchain_kimi.protocols.openai_chat import content

    content._warned_media_urls.clear()
    part = {"type": "image", "url": "http://example.com/dog.jpg"}
    wire = Wire("openai")
    with pytest.warns(UserWarning, match="Base64"):
        wire.model.invoke(_image_message(part))
    assert wire.body["messages"][0]["content"][1]["image_url"] == {
        "url": "http://example.com/dog.jpg"
    }


def test_kimi_k3_messages_sampling_field_constructs() -> None:
    from langchain_kimi import ChatKimi

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ChatKimi(model=K3, protocol="anthropic", temperature=0.2, top_p=0.5)
    assert model.temperature == 0.2


@pytest.mark.parametrize(
    "tool",
    [
        # pydantic-ai's recorded requests (tests/fixtures/corpus) and Anthropic's SDK types
        # spell every option, unset ones as None.
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": None,
            "allowed_domains": None,
            "blocked_domains": None,
            "user_location": None,
        },
        {"type": "web_search_20250305", "name": "web_search", "allowed_domains": None},
    ],
)
def test_raw_messages_web_search_options_given_as_none_are_absent(tool: dict[str, Any]) -> None:
    wire = Wire("anthropic")
    wire.model.bind_tools([tool]).invoke("hi")
    assert wire.body["tools"] == [{"type": "web_search_20250305", "name": "web_search"}]


def test_raw_messages_web_search_none_options_keep_the_cap() -> None:
    tool = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
    wire = Wire("anthropic")
    wire.model.bind_tools([{**tool, "user_location": None}]).invoke("hi")
    assert wire.body["tools"] == [tool]


@pytest.mark.parametrize(
    ("option", "value"),
    [("allowed_domains", ["a.b"]), ("user_location", {"type": "approximate"})],
)
def test_raw_messages_web_search_undocumented_option_is_refused_by_name(
    option: str, value: Any
) -> None:
    wire = Wire("anthropic")
    tool = {"type": "web_search_20250305", "name": "web_search", "max_uses": None, option: value}
    with pytest.raises(ValueError, match=f"option '{option}' is not documented"):
        wire.model.bind_tools([tool])
    assert wire.bodies == []


def _chat_sampling_doc(name: str) -> str:
    document = yaml.safe_load(
        (SPEC_DIR / "chat-completions.all-models.yaml").read_text(encoding="utf-8")
    )
    text = document["components"]["schemas"]["ChatCompletionRequest"]["properties"][name]
    return " ".join(str(text["description"]).split())


@pytest.mark.parametrize(("model", "protocol"), [(K3, "anthropic"), (K31_PRO, "anthropic")])
@pytest.mark.parametrize(("name", "value"), [("temperature", 0.2), ("top_p", 0.5)])
def test_messages_sampling_warning_says_only_what_the_documents_say(
    model: str, protocol: str, name: str, value: float
) -> None:
    """The Messages documents (000, 001) have no sampling fields; only 004 (Chat Completions)
    speaks of them: "Temperatura de muestreo, fijada por el modelo en `1`; ... `kimi-k3.1-pro` /
    `kimi-k3.1-pro-highspeed` lo ignoran automáticamente; `kimi-k3` devuelve un error para
    valores no admitidos". Nothing says the service fixes them on Messages."""
    assert name not in schema_properties("anthropic", model, "request")
    wire = Wire(protocol, model)
    with pytest.warns(UserWarning, match=name) as caught:
        wire.model.invoke("hi", **{name: value})
    (text,) = [str(w.message) for w in caught if name in str(w.message)]
    assert "by the service" not in text
    assert "not sent" in text
    quotes = re.findall(r'"([^"]+)"', text)
    assert len(quotes) >= 3
    for quote in quotes:
        assert quote in _chat_sampling_doc(name)
    assert name not in wire.body
