"""What ChatOpenAI and ChatAnthropic do when pointed at the gateway, reproduced offline.

docs/migrating.md ("Why switch") lists what a side-by-side measurement against the gateway
found. The ones that show in what a peer sends or reads are
reproduced here against a loopback gateway serving authored replies from `cassettes/`: each test
asserts the peer's behaviour as the page describes it, so a peer release that changes it fails
here and the page gets corrected. What the live gateway answers to those requests (its 400s) is
the measurement's, not reproduced here.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from openai import NotFoundError
from pydantic import BaseModel

from langchain_kimi import ChatKimi
from langchain_kimi.testing import FakeKimiGateway
from tests.support.loopback import LoopbackServer, QuietHandler, running
from tools.cassette_format import load_interactions
from tools.paths import CASSETTE_ROOT
from tools.schema_validation import validate_request

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

KEY = "test-key-not-real"
MODEL = "kimi-k3.1-pro"
GATEWAY = "https://direct.evolink.ai/v1"
_PLAIN = load_interactions(str(CASSETTE_ROOT / "core_cassettes" / "anthropic_plain.yaml"))
"""Messages: a reply (thinking + "OK"), then the same reply streamed (usage in message_start)."""
_TOOL_CALL = load_interactions(str(CASSETTE_ROOT / "agents" / "openai_weather_thread.yaml"))[0]
"""Chat Completions: reasoning_content and a get_weather call with Kimi's id style."""


class _Gateway(QuietHandler):
    """Answers /v1/messages and /v1/chat/completions with the authored replies; 404 otherwise."""

    sent: list[tuple[str, dict[str, Any]]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.sent.append((self.path, body))
        status, reply = 200, {"json": {}}
        if self.path == "/v1/messages":
            reply = _PLAIN[1 if body.get("stream") else 0]["response"]["body"]
        elif self.path == "/v1/chat/completions":
            reply = _TOOL_CALL["response"]["body"]
        else:
            status = 404
            reply = {"json": {"error": {"type": "not_found_error", "message": "no such path"}}}
        if "sse" in reply:
            data, content_type = reply["sse"].encode(), "text/event-stream"
        else:
            data, content_type = json.dumps(reply["json"]).encode(), "application/json"
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def gateway() -> Iterator[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    sent: list[tuple[str, dict[str, Any]]] = []
    handler = type("Gateway", (_Gateway,), {"sent": sent})
    with running(LoopbackServer(handler)) as server:
        yield server.url, sent


def _anthropic(url: str) -> ChatAnthropic:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ChatAnthropic(model=MODEL, base_url=url, api_key=KEY, max_retries=0)  # type: ignore[call-arg]


def _openai(url: str) -> ChatOpenAI:
    return ChatOpenAI(model=MODEL, base_url=url + "/v1", api_key=KEY, max_retries=0)  # type: ignore[arg-type]


def _oslo_turns(reply: AIMessage) -> list[BaseMessage]:
    call_id = reply.tool_calls[0]["id"]
    return [
        HumanMessage("What is the weather in Oslo?"),
        reply,
        ToolMessage("-3°C", tool_call_id=call_id),
    ]


def test_chat_openai_drops_the_reasoning_and_sends_tool_call_turns_without_it(gateway: Any) -> None:
    url, sent = gateway
    model = _openai(url)
    reply = model.invoke("What is the weather in Oslo?")
    assert _TOOL_CALL["response"]["body"]["json"]["choices"][0]["message"]["reasoning_content"]
    assert "reasoning_content" not in reply.additional_kwargs  # nothing to persist either
    model.invoke(_oslo_turns(reply))
    assistant = sent[-1][1]["messages"][1]
    assert assistant["tool_calls"]
    assert "reasoning_content" not in assistant  # the turn Kimi refuses from the second step on


def test_chat_anthropic_structured_output_sends_a_tool_choice_k31_does_not_document(
    gateway: Any,
) -> None:
    url, sent = gateway

    class Answer(BaseModel):
        word: str

    _anthropic(url).with_structured_output(Answer, include_raw=True).invoke("Reply with OK.")
    body = sent[-1][1]
    assert body["tool_choice"] == {"type": "tool", "name": "Answer"}
    with pytest.raises(jsonschema.ValidationError, match="'tool' is not one of"):
        validate_request(body, "anthropic", MODEL)
    # What the page advises ChatAnthropic users: method="json_schema", a documented request.
    answer = _anthropic(url).with_structured_output(Answer, method="json_schema", include_raw=True)
    answer.invoke("Reply with OK.")
    body = sent[-1][1]
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert "tool_choice" not in body
    validate_request(body, "anthropic", MODEL)


def test_chat_anthropic_streamed_input_tokens_and_callback_tokens(gateway: Any) -> None:
    url, _ = gateway
    tokens: list[Any] = []

    class Collect(BaseCallbackHandler):
        def on_llm_new_token(self, token: Any, **kwargs: Any) -> None:
            tokens.append(token)

    chunks = list(_anthropic(url).stream("Reply with OK.", config={"callbacks": [Collect()]}))
    usage = sum(chunks[1:], chunks[0]).usage_metadata
    assert usage is not None
    assert usage["input_tokens"] == 0  # message_start said 12 plain + 2 written + 4 read
    assert any(isinstance(token, list) for token in tokens)  # blocks, not text, as "tokens"
    kimi = ChatKimi(protocol="anthropic", base_url=url, api_key=KEY, max_retries=0)
    kimi_chunks = list(kimi.stream("Reply with OK."))
    kimi_usage = sum(kimi_chunks[1:], kimi_chunks[0]).usage_metadata
    assert kimi_usage is not None
    assert kimi_usage["input_tokens"] == 18  # the same stream, read by ChatKimi


def test_chat_anthropic_defaults_and_token_counting(gateway: Any) -> None:
    url, sent = gateway
    model = _anthropic(url)
    model.invoke("Reply with OK.")
    assert sent[-1][1]["max_tokens"] == 4096  # reasoning at effort max shares this cap
    with pytest.raises(Exception, match="404"):
        model.get_num_tokens_from_messages([HumanMessage("hi")])
    assert sent[-1][0] == "/v1/messages/count_tokens"  # no such path in the documents


def test_a_protocol_switch_loses_the_reasoning_with_either_peer(gateway: Any) -> None:
    url, sent = gateway
    # Chat Completions reply, continued on Messages: no thinking block, the tool id rewritten.
    reply = _openai(url).invoke("What is the weather in Oslo?")
    _anthropic(url).invoke(_oslo_turns(reply))
    assistant = sent[-1][1]["messages"][1]
    assert [block["type"] for block in assistant["content"]] == ["tool_use"]
    assert assistant["content"][0]["id"] != "functions.get_weather:0"
    # Messages reply (signed thinking), continued on Chat Completions: only the text goes.
    answer = _anthropic(url).invoke("Reply with OK.")
    assert answer.content[0]["type"] == "thinking"  # type: ignore[index]
    _openai(url).invoke([HumanMessage("Reply with OK."), answer, HumanMessage("Again.")])
    assert sent[-1][1]["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "OK"}],
    }


def test_chat_openai_never_runs_the_built_in_web_search() -> None:
    """Declared as the gateway documents it, `{"type": "web_search"}`: ChatOpenAI sends it to the
    Responses API, which the gateway does not have; made to use Chat Completions, it returns the
    gateway's `$web_search` call as a client tool call, for the agent to run (it cannot)."""
    gateway = FakeKimiGateway(key=KEY)
    gateway.add_web_search("latest Python release").add_reply(text="Python 3.14.")
    client = httpx.Client(transport=gateway.transport)
    peer = ChatOpenAI(model=MODEL, base_url=GATEWAY, api_key=KEY, max_retries=0, http_client=client)  # type: ignore[arg-type]
    with pytest.raises(NotFoundError):
        peer.bind_tools([{"type": "web_search"}]).invoke("The latest Python release?")
    assert gateway.paths[-1] == "/v1/responses"
    chat = peer.model_copy(update={"use_responses_api": False})
    reply = chat.bind_tools([{"type": "web_search"}]).invoke("The latest Python release?")
    assert [call["name"] for call in reply.tool_calls] == ["$web_search"]
    assert reply.content == ""
    kimi = FakeKimiGateway().add_web_search("latest Python release").add_reply(text="Python 3.14.")
    answer = kimi.chat_model().bind_tools([{"type": "web_search"}]).invoke("The latest release?")
    assert (answer.content, answer.tool_calls) == ("Python 3.14.", [])
