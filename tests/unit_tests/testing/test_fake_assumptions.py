"""Issue 27 item 10 / Build 1: where 000, 001 and 004 leave behaviour open, the fake says so.

One table (`langchain_kimi.testing.assumptions`), one row per open question of
`tools/live/questions.py` (the same ids: a live answer can flip a row), a per-row choice, and
every acceptance or refusal resting on a row recorded in `gw.assumed`.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from langchain_kimi.testing import FakeKimiGateway
from langchain_kimi.testing.assumptions import ASSUMPTIONS, BY_QUESTION, markdown_table
from tests.unit_tests.testing.raw import MESSAGES_HEADERS, error_message, post, user
from tools.live.questions import QUESTIONS

TOOL_MESSAGES = {"name": "get_weather", "input_schema": {"type": "object"}}
TOOL_CHAT = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}


def test_one_row_per_open_live_question_and_no_other() -> None:
    assert [row.question for row in ASSUMPTIONS] == [q.id for q in QUESTIONS]
    # The 19 of issue 27, three the docs audit added (issue 30), reply-optional-fields (issue 31).
    assert len(ASSUMPTIONS) == 23


def test_every_choosable_row_says_what_each_choice_does() -> None:
    for row in ASSUMPTIONS:
        assert row.default in ("strict", "lenient")
        assert row.open_point
        assert row.strict
        if row.choosable:
            assert row.lenient != "(not a choice)"


def test_a_bad_choice_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="unknown question"):
        FakeKimiGateway(assume={"no-such-question": "strict"})
    with pytest.raises(ValueError, match="'strict' or 'lenient'"):
        FakeKimiGateway(assume={"chat-stop": "maybe"})
    with pytest.raises(ValueError, match="not a choice"):
        FakeKimiGateway(assume={"error-400": "lenient"})


def _k3_tool_history(*, tools: bool) -> dict[str, Any]:
    use = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
    thinking = {"type": "thinking", "thinking": "(reasoning not available)"}
    body: dict[str, Any] = {
        **user("Weather?", model="kimi-k3", protocol="anthropic"),
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": [thinking, use]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18°C"}],
            },
        ],
    }
    if tools:
        body["tools"] = [TOOL_MESSAGES]
    return body


def test_k3_tool_blocks_without_tools_are_refused_as_chatkimi_assumes() -> None:
    """The issue's contradiction: the fake accepted what ChatKimi avoids sending."""
    gw = FakeKimiGateway().add_reply(text="18°C.")
    refused = post(gw, "anthropic", _k3_tool_history(tools=False), MESSAGES_HEADERS)
    assert refused.status_code == 400
    assert "[assumed: k3-tool-blocks-without-tools, strict]" in error_message(refused)
    use = next(u for u in gw.assumed if u.question == "k3-tool-blocks-without-tools")
    assert (use.outcome, use.choice, use.request) == ("refused", "strict", 1)
    assert post(gw, "anthropic", _k3_tool_history(tools=True), MESSAGES_HEADERS).status_code == 200


def test_k3_tool_blocks_without_tools_when_lenient() -> None:
    gw = FakeKimiGateway(assume={"k3-tool-blocks-without-tools": "lenient"}).add_reply(text="ok")
    assert post(gw, "anthropic", _k3_tool_history(tools=False), MESSAGES_HEADERS).status_code == 200
    assert any(
        u.question == "k3-tool-blocks-without-tools" and u.outcome == "accepted" for u in gw.assumed
    )


def test_chatkimi_on_kimi_k3_with_tool_choice_none_agrees_with_the_fake() -> None:
    """ChatKimi keeps the tools for a history with tool blocks: the strict row accepts it."""
    from langchain_core.tools import tool

    @tool
    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return f"{city}: 18°C"

    gw = FakeKimiGateway()
    gw.add_reply(tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}}])
    gw.add_reply(text="18°C.")
    model = gw.chat_model(model="kimi-k3", protocol="anthropic")
    first = model.bind_tools([get_weather]).invoke("Weather?")
    result = get_weather.invoke(first.tool_calls[0])
    with warnings.catch_warnings():  # "cannot forbid tool calls": warned once per process
        warnings.simplefilter("ignore")
        final = model.bind_tools([get_weather], tool_choice="none").invoke(
            ["Weather?", first, result]
        )
    assert final.content == "18°C."
    assert gw.refusals == []


@pytest.mark.parametrize(
    ("question", "protocol", "extra", "headers"),
    [
        ("chat-stop", "openai", {"stop": ["END"]}, None),
        ("anthropic-version", "anthropic", {}, {"authorization": "Bearer k"}),
    ],
)
def test_each_choosable_request_row_refuses_when_strict_and_accepts_when_lenient(
    question: str, protocol: str, extra: dict[str, Any], headers: dict[str, str] | None
) -> None:
    body = {**user("Hi", protocol=protocol), **extra}
    for choice, status in (("strict", 400), ("lenient", 200)):
        gw = FakeKimiGateway(assume={question: choice}).add_reply(text="ok")
        response = post(gw, protocol, body, headers)
        assert response.status_code == status, (choice, response.text)
        assert any(u.question == question and u.choice == choice for u in gw.assumed)
        if status == 400:
            assert f"[assumed: {question}, strict]" in error_message(response)


def test_a_web_image_url_on_chat() -> None:
    content = [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]
    body = {**user("Hi"), "messages": [{"role": "user", "content": content}]}
    assert post(FakeKimiGateway().add_reply(text="ok"), "openai", body).status_code == 200
    gw = FakeKimiGateway(assume={"chat-image-url": "strict"}).add_reply(text="ok")
    assert post(gw, "openai", body).status_code == 400


def test_a_non_strict_output_schema_on_k3_1_messages() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    body = {
        **user("Hi", protocol="anthropic"),
        "output_config": {"format": {"type": "json_schema", "schema": schema}},
    }
    gw = FakeKimiGateway(assume={"output-format-non-strict": "strict"}).add_reply(
        text='{"city": "P"}'
    )
    assert post(gw, "anthropic", body).status_code == 400
    strict_schema = {**schema, "required": ["city"], "additionalProperties": False}
    body["output_config"]["format"]["schema"] = strict_schema
    assert post(gw, "anthropic", body).status_code == 200


def test_tools_that_omit_a_tool_the_history_called() -> None:
    gw = FakeKimiGateway(assume={"tools-omit-history-tools": "strict"}).add_reply(text="ok")
    assistant = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "(reasoning not available)",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
        ],
    }
    other = {"type": "function", "function": {"name": "get_time", "parameters": {}}}
    body = {
        **user("Hi"),
        "tools": [other],
        "messages": [
            {"role": "user", "content": "Weather?"},
            assistant,
            {"role": "tool", "tool_call_id": "c1", "content": "18°C"},
        ],
    }
    response = post(gw, "openai", body)
    assert response.status_code == 400
    assert "['get_weather']" in error_message(response)
    assert post(gw, "openai", {**body, "tools": [other, TOOL_CHAT]}).status_code == 200


def test_max_tokens_beyond_the_context_window() -> None:
    body = {**user("x" * 400, protocol="anthropic"), "max_tokens": 1_048_576}
    assert post(FakeKimiGateway().add_reply(text="ok"), "anthropic", body).status_code == 200
    gw = FakeKimiGateway(assume={"max-tokens-near-full-context": "strict"}).add_reply(text="ok")
    assert post(gw, "anthropic", body).status_code == 400


def test_the_placeholder_reasoning_of_a_foreign_chat_turn() -> None:
    assistant = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "(reasoning not available)",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
        ],
    }
    body = {
        **user("Hi"),
        "tools": [TOOL_CHAT],
        "messages": [
            {"role": "user", "content": "W?"},
            assistant,
            {"role": "tool", "tool_call_id": "c1", "content": "18"},
        ],
    }
    assert post(FakeKimiGateway().add_reply(text="ok"), "openai", body).status_code == 200
    gw = FakeKimiGateway(assume={"chat-tool-turn-reasoning": "strict"}).add_reply(text="ok")
    response = post(gw, "openai", body)
    assert response.status_code == 400
    assert "chat-tool-turn-reasoning" in error_message(response)


def test_the_placeholder_thinking_of_a_foreign_messages_turn() -> None:
    body = _k3_tool_history(tools=True)
    body["model"] = "kimi-k3.1-pro"
    assert post(FakeKimiGateway().add_reply(text="ok"), "anthropic", body).status_code == 200
    gw = FakeKimiGateway(assume={"messages-tool-turn-thinking": "strict"}).add_reply(text="ok")
    assert post(gw, "anthropic", body).status_code == 400


def test_a_web_search_answered_with_other_text_than_its_arguments() -> None:
    """004: "reenvía function.arguments de cada llamada como contenido de un mensaje tool";
    ChatKimi's stand-in beyond max_uses rests on web-search-limit-answer."""
    call = {
        "id": "c1",
        "type": "builtin_function",
        "function": {"name": "$web_search", "arguments": '{"query":"q"}'},
    }
    assistant = {
        "role": "assistant",
        "content": None,
        "reasoning_content": "search",
        "tool_calls": [call],
    }

    def body(answer: str) -> dict[str, Any]:
        return {
            **user("Hi"),
            "tools": [{"type": "web_search"}],
            "messages": [
                {"role": "user", "content": "Q?"},
                assistant,
                {"role": "tool", "tool_call_id": "c1", "content": answer},
            ],
        }

    strict = FakeKimiGateway(assume={"web-search-limit-answer": "strict"}).add_reply(text="ok")
    assert post(strict, "openai", body('{"query":"q"}')).status_code == 200
    assert post(strict, "openai", body("search limit reached")).status_code == 400
    lenient = FakeKimiGateway().add_reply(text="ok")
    assert post(lenient, "openai", body("search limit reached")).status_code == 200
    assert [u.outcome for u in lenient.assumed if u.question == "web-search-limit-answer"] == [
        "accepted"
    ]


def test_the_table_is_what_the_docs_list() -> None:
    from tools.paths import ROOT

    page = (ROOT / "docs" / "without-a-key.md").read_text(encoding="utf-8")
    assert markdown_table() in page  # the rendered table, row for row
    for row in ASSUMPTIONS:
        assert f"`{row.question}`" in page, row.question
    assert BY_QUESTION["k3-tool-blocks-without-tools"].default == "strict"
