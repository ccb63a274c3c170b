"""What code written for ChatOpenAI / ChatAnthropic reads, read from ChatKimi (issue 21 items 10
and 11), with the peers themselves as oracles.

- `model.model_name`: the model id (ChatOpenAI has it; ChatKimi accepts `model_name=` too).
- `llm_output` (what `on_llm_end` callbacks and `generate()` return): `token_usage` and
  `model_name`, as ChatOpenAI fills it (tracing and cost callbacks read it); summed over the
  `$web_search` rounds of one call, and over the calls of one `generate()`.
"""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage
from langchain_core.outputs import LLMResult
from langchain_openai import ChatOpenAI

from langchain_kimi import ChatKimi
from langchain_kimi.testing import FakeKimiGateway
from tests.unit_tests.testing.raw import post

# Issue 31: each test also runs on replies without the optional keys that say nothing.
pytestmark = pytest.mark.usefixtures("both_reply_forms")

K3 = "kimi-k3"
USAGE = {"input_tokens": 15, "output_tokens": 7, "reasoning_tokens": 4, "cache_read": 5}
"""As the fake gateway is scripted (LangChain's terms); on Chat Completions: prompt 15,
completion 7, total 22, 5 cached, 4 reasoning."""
TOKENS = {"prompt_tokens": 15, "completion_tokens": 7, "total_tokens": 22}


class LLMEnds(BaseCallbackHandler):
    def __init__(self) -> None:
        self.outputs: list[dict[str, Any] | None] = []

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        self.outputs.append(response.llm_output)


def _gateway() -> FakeKimiGateway:
    return FakeKimiGateway().add_reply(text="ok", usage=USAGE, repeat=True)


def _chat_openai() -> ChatOpenAI:
    """ChatOpenAI on the same fake gateway (the same replies as ours get)."""
    peer = ChatOpenAI(model=K3, api_key="k", base_url="http://127.0.0.1:1/v1")  # type: ignore[arg-type]
    client = httpx.Client(transport=_gateway().transport)
    peer.client = openai.OpenAI(api_key="k", http_client=client).chat.completions
    return peer


def _tokens(usage: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in usage.items() if k.endswith("_tokens")}


# --- model_name ---------------------------------------------------------------------------


@pytest.mark.parametrize("argument", ["model", "model_name"])
def test_model_name_reads_the_model_id_as_on_chat_openai(argument: str) -> None:
    ours = ChatKimi(**{argument: K3}, api_key="k")
    theirs = ChatOpenAI(**{argument: "gpt-x"}, api_key="k")  # type: ignore[arg-type]
    assert (theirs.model_name, ours.model_name) == ("gpt-x", K3)
    assert ours.model == ours.model_name
    assert ours.model_copy(update={"model": "kimi-k3.1-pro"}).model_name == "kimi-k3.1-pro"


# --- llm_output ---------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_on_llm_end_carries_token_usage_and_model_name_as_chat_openai(protocol: str) -> None:
    ours, theirs = LLMEnds(), LLMEnds()
    gateway = _gateway()
    gateway.chat_model(protocol=protocol, model=K3).invoke("hi", config={"callbacks": [ours]})
    _chat_openai().invoke("hi", config={"callbacks": [theirs]})
    (mine,), (peer,) = ours.outputs, theirs.outputs
    assert mine is not None
    assert peer is not None
    assert {"token_usage", "model_name"} <= set(peer)
    assert {"token_usage", "model_name"} <= set(mine)
    assert mine["model_name"] == K3
    if protocol == "openai":
        # The same body gives ChatOpenAI's figures (its SDK adds the fields it knows as None).
        assert _tokens(mine["token_usage"]) == _tokens(peer["token_usage"]) == TOKENS
    else:  # the Messages usage object, as the service sent it
        sent = post(_gateway(), protocol, gateway.requests[0]).json()["usage"]
        assert mine["token_usage"] == sent
        assert sent["output_tokens"] == 7


def test_generate_sums_token_usage_over_calls_as_chat_openai() -> None:
    ours = _gateway().chat_model(model=K3).generate([[HumanMessage("a")], [HumanMessage("b")]])
    theirs = _chat_openai().generate([[HumanMessage("a")], [HumanMessage("b")]])
    assert ours.llm_output is not None
    assert theirs.llm_output is not None
    doubled = {k: 2 * v for k, v in TOKENS.items()}
    assert _tokens(theirs.llm_output["token_usage"]) == doubled
    assert _tokens(ours.llm_output["token_usage"]) == doubled
    assert ours.llm_output["token_usage"]["prompt_tokens_details"]["cached_tokens"] == 10
    assert ours.llm_output["model_name"] == theirs.llm_output["model_name"] == K3


def test_llm_output_sums_the_web_search_rounds() -> None:
    rounds = [
        {"input_tokens": 100 * (n + 1), "output_tokens": 20, "reasoning_tokens": 15}
        for n in range(3)
    ]
    gateway = FakeKimiGateway()
    gateway.add_web_search("kimi", usage=rounds[0]).add_web_search("homepage", usage=rounds[1])
    gateway.add_reply(text="https://www.kimi.com", usage=rounds[2])
    ends = LLMEnds()
    model = gateway.chat_model().bind_tools(["web_search"])
    reply = model.invoke("Find Kimi's homepage", config={"callbacks": [ends]})
    (output,) = ends.outputs
    assert output is not None
    assert len(gateway.requests) == 3
    prompt, completion = 100 + 200 + 300, 3 * 20
    expected = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    assert _tokens(output["token_usage"]) == expected
    assert output["token_usage"] == reply.response_metadata["token_usage"]
