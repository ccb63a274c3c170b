"""LangChain's context middleware with ChatKimi, beside ChatAnthropic (issue 30 item 1).

`ContextEditingMiddleware` and `SummarizationMiddleware` count a history with langchain-core's
`count_tokens_approximately` unless told otherwise. That counter reads `content` (and tool calls),
never `additional_kwargs`: ChatKimi's default `content` is the answer string, its reasoning is in
`additional_kwargs["reasoning_content"]`, and the reasoning goes back to the service every turn.
ChatAnthropic's `content` is a block list with the thinking in it, so the counter sees it.

What these tests pin, on both protocols, with the middlewares' documented arguments
(`ClearToolUsesEdit(trigger=3000)`, `trigger=("tokens", 5000), keep=("tokens", 2000)`):
ChatAnthropic trims; ChatKimi's default messages do not; each documented way docs/usage.md names
does (`output_version="v1"` on the model, `token_count_method="model"`,
`token_counter=model.get_num_tokens_from_messages`). A langchain release that changes how its
counter reads messages fails here, and the page gets corrected.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    SummarizationMiddleware,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from langchain_kimi.testing import FakeKimiGateway
from tests.support.anthropic_peer import chat_anthropic_on

PROTOCOLS = ["anthropic", "openai"]
REASONING = "I weigh what the page says against the question before I read on. " * 100
"""About 6,700 characters (about 1,700 tokens) of reasoning per reply: what the service bills
and what every later request carries."""
PAGES = 5
PLACEHOLDER = "[cleared]"


@tool
def read_page(n: int) -> str:
    """Read page n of the report."""
    return f"Page {n}: the figures for quarter {n} are in line with the plan."


def _script_tool_loop(gateway: FakeKimiGateway) -> None:
    for n in range(PAGES):
        gateway.add_reply(reasoning=REASONING, tool_calls=[{"name": "read_page", "args": {"n": n}}])
    gateway.add_reply("The report is in line with the plan.", reasoning=REASONING)


def _cleared_in_last_request(model: BaseChatModel, gateway: FakeKimiGateway, **edit: Any) -> int:
    """How many tool results the last request carried as the placeholder."""
    _script_tool_loop(gateway)
    middleware = ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=3000)], **edit)
    agent = create_agent(model, [read_page], middleware=[middleware])
    agent.invoke({"messages": [HumanMessage("Read the five pages of the report.")]})
    assert gateway.refusals == []
    assert gateway.remaining == 0
    last = gateway.requests[-1]
    return json.dumps(last["messages"]).count(PLACEHOLDER)


TURNS = ["What is in chapter one?", "And chapter two?", "And three?", "And four?", "And five?"]
SUMMARY = "Summary: chapters one to four were discussed."


def _summary_calls(
    model: BaseChatModel, summarizer: BaseChatModel, summaries: FakeKimiGateway, **counting: Any
) -> int:
    """Five user turns of one thread, each reply with its reasoning; the summaries come from a
    second gateway, so its request count is the number of summaries made."""
    for _ in range(len(TURNS)):
        summaries.add_reply(SUMMARY)
    middleware = SummarizationMiddleware(
        model=summarizer, trigger=("tokens", 5000), keep=("tokens", 2000), **counting
    )
    agent = create_agent(model, [], middleware=[middleware])
    messages: list[Any] = []
    for question in TURNS:
        messages = agent.invoke({"messages": [*messages, HumanMessage(question)]})["messages"]
    return len(summaries.requests)


def _replies(gateway: FakeKimiGateway) -> FakeKimiGateway:
    for n in range(len(TURNS)):
        gateway.add_reply(f"Chapter {n + 1} is about the plan.", reasoning=REASONING)
    return gateway


# -- ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=3000)]) ------------------------


def test_chat_anthropic_oracle_clears_old_tool_results() -> None:
    gateway = FakeKimiGateway()
    assert _cleared_in_last_request(chat_anthropic_on(gateway), gateway) == PAGES - 3


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_default_messages_hide_the_reasoning_from_the_approximate_counter(protocol: str) -> None:
    gateway = FakeKimiGateway()
    assert _cleared_in_last_request(gateway.chat_model(protocol=protocol), gateway) == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_output_version_v1_clears_as_chat_anthropic_does(protocol: str) -> None:
    gateway = FakeKimiGateway()
    model = gateway.chat_model(protocol=protocol, output_version="v1")
    assert _cleared_in_last_request(model, gateway) == PAGES - 3


@pytest.mark.parametrize("output_version", [None, "v1"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_token_count_method_model_clears_as_chat_anthropic_does(
    protocol: str, output_version: str | None
) -> None:
    gateway = FakeKimiGateway()
    model = gateway.chat_model(protocol=protocol, output_version=output_version)
    assert _cleared_in_last_request(model, gateway, token_count_method="model") == PAGES - 3


# -- SummarizationMiddleware(trigger=("tokens", 5000), keep=("tokens", 2000)) -----------------


def test_chat_anthropic_oracle_summarises() -> None:
    gateway, summaries = _replies(FakeKimiGateway()), FakeKimiGateway()
    model, summarizer = chat_anthropic_on(gateway), chat_anthropic_on(summaries)
    assert _summary_calls(model, summarizer, summaries) >= 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_default_messages_never_reach_the_summary_trigger(protocol: str) -> None:
    gateway, summaries = _replies(FakeKimiGateway()), FakeKimiGateway()
    model = gateway.chat_model(protocol=protocol)
    summarizer = summaries.chat_model(protocol=protocol)
    assert _summary_calls(model, summarizer, summaries) == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_output_version_v1_summarises_as_chat_anthropic_does(protocol: str) -> None:
    gateway, summaries = _replies(FakeKimiGateway()), FakeKimiGateway()
    model = gateway.chat_model(protocol=protocol, output_version="v1")
    summarizer = summaries.chat_model(protocol=protocol, output_version="v1")
    assert _summary_calls(model, summarizer, summaries) >= 1
    assert gateway.refusals == []  # the v1 history went back as the documents require


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_models_own_counter_summarises_as_chat_anthropic_does(protocol: str) -> None:
    gateway, summaries = _replies(FakeKimiGateway()), FakeKimiGateway()
    model = gateway.chat_model(protocol=protocol)
    summarizer = summaries.chat_model(protocol=protocol)
    counter = model.get_num_tokens_from_messages
    assert _summary_calls(model, summarizer, summaries, token_counter=counter) >= 1
