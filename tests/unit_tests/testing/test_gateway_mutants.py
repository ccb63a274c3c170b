"""What a user of `FakeKimiGateway` relies on that no other test pinned: found by mutating
`gateway.py` with mutmut (issue 31; the record is tests/mutation/langchain_kimi.testing.gateway.md).
Each test is named by the behaviour, not by the mutant it kills."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from langchain_core.callbacks import BaseCallbackHandler

from langchain_kimi.testing import AmbiguousStepError, FakeKimiGateway, ScriptError
from tests.unit_tests.testing.raw import post, user

SEARCH_MESSAGES = [{"type": "web_search_20250305", "name": "web_search"}]
SEARCH_CHAT = [{"type": "web_search"}]


# -- web searches -----------------------------------------------------------------------------


def test_two_searches_in_a_row_are_two_chat_completions_rounds() -> None:
    gw = FakeKimiGateway().add_web_search("first").add_web_search("second").add_reply(text="ok")
    model = gw.chat_model(protocol="openai").bind_tools(["web_search"])
    assert model.invoke("Search twice").content == "ok"
    rounds = [m for m in gw.requests[-1]["messages"] if m.get("tool_calls")]
    assert [[c["function"]["name"] for c in r["tool_calls"]] for r in rounds] == [
        ["$web_search"],
        ["$web_search"],
    ]
    assert len(gw.requests) == 3


def test_a_search_round_calls_web_search_with_the_scripted_query() -> None:
    gw = FakeKimiGateway().add_web_search("kimi k3 release")
    reply = post(gw, "openai", {**user("Q"), "tools": SEARCH_CHAT}).json()
    (call,) = reply["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"])["query"] == "kimi k3 release"


def test_a_messages_search_carries_the_scripted_query_and_results() -> None:
    pages = [{"title": "Kimi K3", "url": "https://kimi.example/k3"}]
    gw = FakeKimiGateway().add_web_search("kimi k3", results=pages).add_reply(text="Found.")
    body = {**user("Q", protocol="anthropic"), "tools": SEARCH_MESSAGES}
    content = post(gw, "anthropic", body).json()["content"]
    use = next(b for b in content if b["type"] == "server_tool_use")
    result = next(b for b in content if b["type"] == "web_search_tool_result")
    assert use["input"] == {"query": "kimi k3"}
    assert [(r["title"], r["url"]) for r in result["content"]] == [
        ("Kimi K3", "https://kimi.example/k3")
    ]


def test_a_bound_search_answers_its_own_request_out_of_order() -> None:
    gw = FakeKimiGateway().add_reply(text="plain")
    gw.add_web_search("kimi", when="Search it").add_reply(text="found", when="Search it")
    body = {**user("Search it", protocol="anthropic"), "tools": SEARCH_MESSAGES}
    kinds = [b["type"] for b in post(gw, "anthropic", body).json()["content"]]
    assert kinds == ["thinking", "server_tool_use", "web_search_tool_result", "text"]
    assert gw.remaining == 1  # "plain" still waits for its request


@pytest.mark.parametrize("after", ["error", "raw"])
def test_a_chat_completions_search_round_may_be_followed_by_an_error_or_a_raw_answer(
    after: str,
) -> None:
    gw = FakeKimiGateway().add_web_search("kimi")
    if after == "error":
        gw.add_error(503)
    else:
        gw.add_raw({"odd": 1})
    body = {**user("Q"), "tools": SEARCH_CHAT}
    assert post(gw, "openai", body).json()["choices"][0]["finish_reason"] == "tool_calls"
    assert post(gw, "openai", body).status_code == (503 if after == "error" else 200)
    assert gw.remaining == 0


# -- raw steps ----------------------------------------------------------------------------------


def test_a_raw_step_is_used_once_unless_it_repeats() -> None:
    gw = FakeKimiGateway().add_raw({"odd": 1}).add_reply(text="after")
    assert post(gw, "openai", user("a")).json() == {"odd": 1}
    assert post(gw, "openai", user("b")).json()["choices"][0]["message"]["content"] == "after"


def test_a_bound_raw_step_answers_its_own_request_out_of_order() -> None:
    gw = FakeKimiGateway().add_reply(text="plain").add_raw({"odd": 1}, when="odd one")
    assert post(gw, "openai", user("odd one")).json() == {"odd": 1}
    assert gw.remaining == 1


# -- models -----------------------------------------------------------------------------------


def test_a_models_own_callbacks_still_run() -> None:
    class Starts(BaseCallbackHandler):
        def __init__(self) -> None:
            self.count = 0

        def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
            self.count += 1

    starts = Starts()
    gw = FakeKimiGateway().add_reply(text="hi")
    assert gw.chat_model(callbacks=[starts]).invoke("Hi").content == "hi"
    assert starts.count == 1


# -- replies ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "reply_id", "call_id"),
    [
        ("anthropic", "msg_fake_0001", "toolu_fake_0001"),
        ("openai", "chatcmpl_fake_0001", "call_fake_0001"),
    ],
)
def test_reply_and_tool_call_ids_carry_each_protocols_prefix_and_count_from_one(
    protocol: str, reply_id: str, call_id: str
) -> None:
    gw = FakeKimiGateway().add_reply(tool_calls=[{"name": "lookup", "args": {"q": "x"}}])
    tools: Any
    if protocol == "anthropic":
        tools = [{"name": "lookup", "input_schema": {"type": "object"}}]
    else:
        tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    reply = post(gw, protocol, {**user("Q", protocol=protocol), "tools": tools}).json()
    assert reply["id"] == reply_id
    if protocol == "anthropic":
        ids = [b["id"] for b in reply["content"] if b["type"] == "tool_use"]
    else:
        ids = [c["id"] for c in reply["choices"][0]["message"]["tool_calls"]]
    assert ids == [call_id]  # numbered from 1


def test_a_cut_reply_is_recorded_with_its_request_and_what_was_left_out() -> None:
    gw = FakeKimiGateway(assume={"reply-optional-fields": "strict"}).add_reply(text="a")
    gw.add_reply(text="b")
    model = gw.chat_model()
    model.invoke("one")
    model.invoke("two")
    assert [(u.request, u.outcome, u.detail) for u in gw.assumed] == [
        (n, "served", "a reply without the optional keys that say nothing") for n in (1, 2)
    ]


# -- scripted usage ---------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_usage_is_checked_when_scripted_against_the_default_reasoning_it_is_served_with(
    protocol: str,
) -> None:
    """With `reasoning=None` the step is served with a default reasoning text, so its estimated
    output counts those tokens: a usage naming fewer reasoning tokens than that is servable and
    accepted; one naming more than the reply's whole output is refused as it is scripted."""
    gw = FakeKimiGateway()
    if protocol == "openai":
        gw.add_web_search("kimi", usage={"input_tokens": 50, "reasoning_tokens": 1})
        body: dict[str, Any] = {**user("Q"), "tools": SEARCH_CHAT}
    else:
        gw.add_reply(usage={"input_tokens": 50, "reasoning_tokens": 1})
        body = user("Q", protocol=protocol)
    served = post(gw, protocol, body).json()["usage"]
    output = served["completion_tokens" if protocol == "openai" else "output_tokens"]
    assert output > 1  # the default reasoning's estimate
    too_many = {"input_tokens": 50, "reasoning_tokens": output + 1}

    def script(usage: dict[str, int]) -> FakeKimiGateway:
        if protocol == "openai":
            return gw.add_web_search("kimi", usage=usage)
        return gw.add_reply(usage=usage)

    with pytest.raises(ValueError, match="reasoning_tokens must not exceed output_tokens"):
        script(too_many)
    assert gw.remaining == 0


def test_a_search_round_answers_a_request_that_caps_its_output() -> None:
    gw = FakeKimiGateway().add_web_search("kimi")
    body = {**user("Q"), "tools": SEARCH_CHAT, "max_completion_tokens": 64}
    reply = post(gw, "openai", body).json()
    assert reply["choices"][0]["finish_reason"] == "tool_calls"


def test_a_reply_cut_at_a_stop_sequence_is_recorded_with_the_match() -> None:
    gw = FakeKimiGateway().add_reply(text="a END b")
    post(gw, "anthropic", {**user("Hi", protocol="anthropic"), "stop_sequences": ["END"]})
    assert [(u.request, u.detail) for u in gw.assumed if u.question == "stop-sequence-reason"] == [
        (1, "a reply cut at the stop sequence 'END'")
    ]


# -- what a script mistake says ---------------------------------------------------------------


def test_a_request_beyond_the_script_names_its_last_user_message() -> None:
    gw = FakeKimiGateway()
    with pytest.raises(ScriptError) as caught:
        gw.chat_model().invoke("Capital of Peru?")
    assert str(caught.value) == (
        "FakeKimiGateway: request #1 (POST /v1/chat/completions) arrived but the script has no "
        "step left for it (last user message 'Capital of Peru?'); add one with gw.add_reply(...)"
    )


def test_an_unbound_step_another_call_in_flight_could_take_says_how_to_bind_it() -> None:
    gw = FakeKimiGateway().add_reply(text="a").add_reply(text="b")
    model = gw.chat_model()
    (tracker,) = [c for c in model.callbacks or [] if isinstance(c, BaseCallbackHandler)]
    tracker.on_chat_model_start({}, [[]], run_id=uuid.uuid4())  # another call, in flight
    with pytest.raises(AmbiguousStepError) as caught:
        model.invoke("Hi")
    assert str(caught.value) == (
        "FakeKimiGateway: request #1 (POST /v1/chat/completions): the unbound step 1 (reply 'a') "
        "answers whichever call asks first, and 2 calls of this gateway's models are in "
        "progress: which call takes it depends on timing; bind each step to the request it "
        "answers with when=, e.g. gw.add_reply(..., when='Hi') (the text of the request's last "
        "user message) or when=lambda body: ... (a predicate on its JSON body)"
    )


def test_scripting_mistakes_say_what_to_give_instead() -> None:
    gw = FakeKimiGateway()
    with pytest.raises(ValueError) as caught:
        gw.add_reply(reasoning="", tool_calls=[{"name": "f", "args": {}}])
    assert str(caught.value) == (
        "add_reply: a tool-call turn carries its reasoning (the service refuses its replay "
        "without: reasoning_content is missing in assistant tool call message); give "
        "reasoning=None (a default) or a text"
    )


def test_a_search_for_a_request_without_the_search_tool_says_how_to_declare_it() -> None:
    gw = FakeKimiGateway().add_web_search("kimi").add_reply(text="found")
    with pytest.raises(ScriptError) as caught:
        gw.chat_model().invoke("Hi")
    assert str(caught.value) == (
        "FakeKimiGateway: request #1 (POST /v1/chat/completions): the script's step 1 (web "
        "search 'kimi') is a web search, but the request declares no web search tool "
        "(bind_tools(['web_search']))"
    )


@pytest.mark.parametrize("after", ["nothing", "an error"])
def test_a_messages_search_followed_by_no_reply_says_it_needs_one(after: str) -> None:
    gw = FakeKimiGateway().add_web_search("kimi")
    if after == "an error":
        gw.add_error(503)
    body = {**user("Q", protocol="anthropic"), "tools": SEARCH_MESSAGES}
    with pytest.raises(ScriptError) as caught:
        post(gw, "anthropic", body)
    assert str(caught.value) == (
        "FakeKimiGateway: request #1 (POST /v1/messages): a web search must be followed by a reply"
    )


def test_a_search_error_on_chat_completions_names_the_step_and_the_request() -> None:
    gw = FakeKimiGateway().add_web_search("kimi", error_code="max_uses_exceeded")
    with pytest.raises(ScriptError) as caught:
        post(gw, "openai", {**user("Q"), "tools": SEARCH_CHAT})
    assert str(caught.value) == (
        "FakeKimiGateway: step 1 (web search 'kimi') answering request #1 (POST "
        "/v1/chat/completions): a web search error: Chat Completions (004) has no search error "
        "object"
    )


def test_a_request_to_the_fallback_host_not_asked_for_says_how_to_allow_it() -> None:
    gw = FakeKimiGateway().add_reply(text="never")
    with pytest.raises(ScriptError) as caught, httpx.Client(transport=gw.transport) as client:
        client.post("https://api.evolink.ai/v1/chat/completions", json=user("Hi"))
    assert str(caught.value) == (
        "FakeKimiGateway: request #1 went to the fallback api.evolink.ai (a 5xx moved the call "
        "there); the fake serves it only when asked: gw.chat_model(fallback=True), or "
        "fallback_base_url=None on your model"
    )
    assert gw.hosts == ["api.evolink.ai"]
