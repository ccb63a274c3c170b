"""ChatKimi's own estimate, as LangChain's middleware use it (`token_count_method="model"`,
`token_counter=model.get_num_tokens_from_messages`, issue 30 item 1): a reply's reasoning counts
once whatever `output_version` put it in `content` too, and a tool counts as its schema, which is
what a request carries (not the Python object's repr)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from langchain_kimi.testing import FakeKimiGateway

REASONING = "Let me check the figures of each quarter one by one. " * 40


@tool
def read_page(n: int) -> str:
    """Read page n of the report."""
    return str(n)


def _reply(protocol: str, output_version: str | None) -> AIMessage:
    gateway = FakeKimiGateway().add_reply("In line with the plan.", reasoning=REASONING)
    return gateway.chat_model(protocol=protocol, output_version=output_version).invoke("Report?")


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_reasoning_counts_once_in_either_output_version(protocol: str) -> None:
    model = FakeKimiGateway().chat_model(protocol=protocol)
    default = model.get_num_tokens_from_messages([_reply(protocol, None)])
    v1 = model.get_num_tokens_from_messages([_reply(protocol, "v1")])
    assert default > model.get_num_tokens(REASONING)  # the reasoning is in the count
    assert v1 == pytest.approx(default, abs=8)  # once: block framing aside, the same count


def test_reasoning_in_a_content_block_alone_counts_too() -> None:
    model = FakeKimiGateway().chat_model()
    blocks = AIMessage(
        [{"type": "reasoning", "reasoning": REASONING}, {"type": "text", "text": "Hi"}]
    )
    assert model.get_num_tokens_from_messages([blocks]) > model.get_num_tokens(REASONING)


def test_a_tool_counts_as_its_schema() -> None:
    model = FakeKimiGateway().chat_model()
    as_object = model.get_num_tokens_from_messages([HumanMessage("hi")], [read_page])
    as_schema = model.get_num_tokens_from_messages(
        [HumanMessage("hi")], [convert_to_openai_tool(read_page)]
    )
    assert as_object == as_schema
    assert as_schema > model.get_num_tokens_from_messages([HumanMessage("hi")])


def test_the_web_search_tool_and_odd_tools_are_counted_not_refused() -> None:
    model = FakeKimiGateway().chat_model()
    base = model.get_num_tokens_from_messages([HumanMessage("hi")])
    assert model.get_num_tokens_from_messages([HumanMessage("hi")], ["web_search"]) > base
    odd = {"name": "x", "parameters": "not a schema"}
    assert model.get_num_tokens_from_messages([HumanMessage("hi")], [odd]) > base


def test_a_plain_string_part_of_a_content_list_counts() -> None:
    model = FakeKimiGateway().chat_model()
    text = "a string part, as OpenAI-style content lists may hold " * 20
    with_part = model.get_num_tokens_from_messages([HumanMessage([text, "end"])])
    assert with_part >= model.get_num_tokens(text)
