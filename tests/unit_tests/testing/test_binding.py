"""Which scripted step answers which request (`langchain_kimi/testing/binding.py`): how a step is
named in the gateway's messages, what `when=` matches (the text of the last user message that
has text), and the script's order."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from langchain_kimi.testing import FakeKimiGateway, ScriptError
from langchain_kimi.testing.binding import Script, Scripted, last_user_text
from langchain_kimi.testing.raw_steps import Raw
from langchain_kimi.testing.script import Error, Reply, ToolCall, WebSearch
from tests.unit_tests.testing.raw import post, user


def _reply(text: str = "", *calls: str) -> Reply:
    return Reply(text, "r", tuple(ToolCall(name, {}) for name in calls), None)


@pytest.mark.parametrize(
    ("scripted", "named"),
    [
        (Scripted(Raw(httpx.Response(200)), 3), "step 3 (raw answer)"),
        (Scripted(Error(503, "m", "api_error", None, None), 1), "step 1 (error 503)"),
        (Scripted(WebSearch("kimi k3", ()), 2), "step 2 (web search 'kimi k3')"),
        (Scripted(_reply("", "f", "g"), 4), "step 4 (reply calling ['f', 'g'])"),
        (Scripted(_reply("x" * 41), 5), f"step 5 (reply {'x' * 40!r})"),
        (Scripted(_reply("Hi"), 6, "Q?", True), "step 6 (reply 'Hi', repeating) (bound)"),
        (Scripted(_reply("Hi"), 7, None, True), "step 7 (reply 'Hi', repeating)"),
    ],
)
def test_a_step_is_named_by_its_place_its_kind_and_how_it_is_bound(
    scripted: Scripted, named: str
) -> None:
    assert scripted.describe() == named


def _user(content: Any, role: str = "user") -> dict[str, Any]:
    return {"role": role, "content": content}


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ({"messages": [_user("  Hi  ")]}, "Hi"),
        ({"messages": [_user("first"), _user("answer", "assistant")]}, "first"),
        ({"messages": [_user("old"), _user("new")]}, "new"),
        (
            {"messages": [_user([{"type": "text", "text": "a"}, {"type": "text", "text": "b "}])]},
            "a\nb",
        ),
        (
            {"messages": [_user("asked"), _user([{"type": "tool_result", "text": "no"}])]},
            "asked",
        ),
        ({"messages": [_user("asked"), _user([{"type": "image", "source": {}}])]}, "asked"),
        ({"messages": [_user("asked"), _user([" text "])]}, "asked"),
        ({"messages": [_user("asked"), _user(None)]}, "asked"),
        ({"messages": [_user("asked"), "a message that is no object"]}, "asked"),
        ({"messages": [_user("only the system", "system")]}, ""),
        ({"messages": "not a list"}, ""),
        ({}, ""),
        ([_user("a body that is no object")], ""),
    ],
)
def test_when_text_is_the_last_user_message_that_has_text(body: Any, text: str) -> None:
    assert last_user_text(body) == text


def test_a_predicate_sees_the_request_body_and_a_text_ignores_surrounding_space() -> None:
    body = {"messages": [_user("Capital of Peru?")], "model": "kimi-k3.1-pro"}
    assert Scripted(_reply(), 1, lambda b: b["model"] == "kimi-k3.1-pro").matches(body)
    assert Scripted(_reply(), 1, "  Capital of Peru?\n").matches(body)
    assert not Scripted(_reply(), 1, "Capital of France?").matches(body)
    assert not Scripted(_reply(), 1).matches(body)


def _never_judged(step: Scripted, body: Any, interchangeable: bool) -> None:
    raise AssertionError("no unbound step here")


def test_a_bound_step_is_taken_before_the_unbound_ones_and_a_repeating_one_stays() -> None:
    script = Script(_never_judged)
    script.add(_reply("bound"), "Q?", repeat=True)
    assert [script.take({"messages": [_user("Q?")]}) for _ in range(2)] == [
        Scripted(_reply("bound"), 1, "Q?", True, used=True)
    ] * 2
    assert len(script) == 0
    assert script.take({"messages": [_user("Other?")]}) is None


def test_the_judge_hears_whether_every_unbound_step_of_the_script_is_the_same_answer() -> None:
    heard: list[tuple[int, bool]] = []
    script = Script(lambda step, body, same: heard.append((step.number, same)))
    body = {"messages": [_user("Q?")]}
    script.add(_reply("a"), None, repeat=False)
    script.add(_reply("a"), None, repeat=False)
    script.take(body)
    script.add(_reply("b"), "bound: not counted", repeat=False)
    script.take(body)
    script.add(_reply("c"), None, repeat=False)
    script.add(_reply("a"), None, repeat=False)
    script.take(body)
    script.take(body)
    assert heard == [(1, True), (2, True), (4, False), (5, False)]


def test_a_step_after_an_unbound_repeating_one_must_be_bound() -> None:
    gw = FakeKimiGateway().add_reply(text="always", repeat=True).add_reply(text="x", when="Q?")
    with pytest.raises(ValueError) as caught:
        gw.add_reply(text="never")
    assert str(caught.value) == (
        "the unbound step 1 (reply 'always', repeating) answers every later request: an unbound "
        "step after it would never be served (script it before, or bind it with when=)"
    )
    assert gw.remaining == 2


def test_a_bound_messages_search_needs_a_bound_reply_after_it() -> None:
    gw = FakeKimiGateway().add_web_search("kimi", when="Q?").add_reply(text="unbound")
    body = {
        **user("Q?", protocol="anthropic"),
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
    }
    with pytest.raises(ScriptError, match="a web search must be followed by a reply"):
        post(gw, "anthropic", body)
