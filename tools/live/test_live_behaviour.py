"""The project's own behavioural checks that only the real service can settle, per model x protocol.

Each check states a documented behaviour and asserts it against the live answer; the runner
also validates every exchange against `spec/`. `$web_search` runs only with `--search` (billed).
"""

from __future__ import annotations

import base64

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel

from langchain_kimi import ChatKimi
from langchain_kimi._request.profiles import capabilities
from langchain_kimi.doctor import cheapest_effort
from tools.authoring._shared import CACHE_CONTEXT, CACHE_WRITE_PROMPT, PNG_1X1
from tools.live.rows import models, protocols, search_enabled

pytestmark = pytest.mark.live

ROWS = [(m, p) for m in models() for p in protocols()]


@pytest.fixture(params=ROWS, ids=[f"{m}-{p}" for m, p in ROWS])
def row(request: pytest.FixtureRequest) -> tuple[str, str]:
    model, protocol = request.param
    return model, protocol


def _model(row: tuple[str, str], **extra: object) -> ChatKimi:
    model, protocol = row
    effort = cheapest_effort(model, protocol)  # type: ignore[arg-type]
    return ChatKimi(model=model, protocol=protocol, reasoning_effort=effort, **extra)  # type: ignore[arg-type]


def _add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Answer(BaseModel):
    """A short answer."""

    answer: str


def test_reasoning_present_and_replayed(row: tuple[str, str]) -> None:
    model = _model(row)
    first = model.invoke("Is 221 a prime number? Answer yes or no.")
    assert first.additional_kwargs.get("reasoning_content"), "always-on reasoning came back empty"
    # The second turn replays the first (signed thinking on anthropic): the service must accept it.
    second = model.invoke([HumanMessage("Is 221 prime?"), first, HumanMessage("Why?")])
    assert second.content


def test_streamed_reasoning_and_usage(row: tuple[str, str]) -> None:
    chunks = list(_model(row).stream("Reply with OK."))
    total = chunks[0] + chunks[1:]
    assert total.additional_kwargs.get("reasoning_content")
    assert total.usage_metadata
    assert total.usage_metadata["output_tokens"] > 0


def test_tool_loop(row: tuple[str, str]) -> None:
    model = _model(row).bind_tools([_add])
    messages: list = [HumanMessage("Use the tool to add 19 and 23, then say the sum.")]
    reply = model.invoke(messages)
    assert reply.tool_calls, "the model did not call the tool"
    messages.append(reply)
    for call in reply.tool_calls:
        messages.append(ToolMessage(str(_add(**call["args"])), tool_call_id=call["id"]))
    final = model.invoke(messages)
    assert "42" in str(final.content)


@pytest.mark.parametrize("method", ["json_schema", "function_calling", "json_mode"])
def test_structured_output(row: tuple[str, str], method: str) -> None:
    caps = capabilities(*row)
    if method == "json_mode" and not caps.json_mode:
        pytest.skip("no json mode on this row")
    prompt = "What is the capital of France?"
    if method == "json_mode":
        prompt += ' Reply as JSON: {"answer": "..."}'
    result = _model(row).with_structured_output(Answer, method=method).invoke(prompt)  # type: ignore[arg-type]
    assert isinstance(result, Answer)
    assert "paris" in result.answer.lower()


def test_effort_levels(row: tuple[str, str]) -> None:
    model, protocol = row
    for effort in capabilities(model, protocol).efforts:
        reply = ChatKimi(model=model, protocol=protocol, reasoning_effort=effort).invoke(
            "Reply with OK."
        )  # type: ignore[arg-type]
        assert reply.content, f"effort {effort}: empty answer"


def test_cache_ttl_usage(row: tuple[str, str]) -> None:
    if not capabilities(*row).cache_ttl:
        pytest.skip("no cache TTL on this row")
    model = _model(row, cache_ttl="1h")
    messages = [SystemMessage(CACHE_CONTEXT), HumanMessage(CACHE_WRITE_PROMPT)]
    first, second = model.invoke(messages), model.invoke(messages)
    details = [
        m.usage_metadata.get("input_token_details", {}) for m in (first, second) if m.usage_metadata
    ]
    assert any(d.get("cache_creation") or d.get("cache_read") for d in details), details


def test_base64_image_input(row: tuple[str, str]) -> None:
    if not capabilities(*row).image_inputs:
        pytest.skip("no images on this row")
    png = base64.b64decode(PNG_1X1)
    image = {"type": "image", "base64": base64.b64encode(png).decode(), "mime_type": "image/png"}
    reply = _model(row).invoke(
        [HumanMessage(content=[{"type": "text", "text": "What colour is this pixel?"}, image])]
    )
    assert reply.content


def test_stop_sequence(row: tuple[str, str]) -> None:
    reply = _model(row, stop=["5"]).invoke("Count from 1 to 10, separated by spaces.")
    assert "6" not in str(reply.content), reply.content


@pytest.mark.skipif(not search_enabled(), reason="web search is billed: run ./dev live --search")
def test_web_search_loop(row: tuple[str, str]) -> None:
    if not capabilities(*row).web_search:
        pytest.skip("no web search on this row")
    reply = (
        _model(row)
        .bind_tools(["web_search"])
        .invoke("Search the web: what is the latest Python release?")
    )
    assert isinstance(reply, AIMessage)
    assert reply.content
