"""`langchain.agents.create_agent` with ChatKimi, replayed from cassettes/agents/ (authored).

One thread (InMemorySaver), two user turns, four model calls per run. vcr matches each request
body against the hand-written cassette; on top of that the bodies ChatKimi sent are captured
with an httpx event hook to assert that every assistant turn carries its reasoning EXACTLY ONCE
(LangChain concatenates string deltas when merging chunks: a decoder that emitted totals would
double it) and its tool calls unchanged.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langchain_kimi.testing import FakeKimiGateway
from tests.support.recording import ReplayModel
from tools.paths import ROOT

OSLO = "Oslo: -3°C, light snow"
ROME = "Rome: 14°C, sunny"
QUESTIONS = ["What is the weather in Oslo?", "And in Rome?"]
ANSWERS = ["It is -3°C with light snow in Oslo.", "Rome: 14°C and sunny."]
REASONING = [
    "The user asks for the Oslo weather; I call get_weather.",
    "The tool says -3°C with light snow; I answer.",
    "Now Rome; I call get_weather again.",
    "Rome is 14°C and sunny; I answer.",
]
CALL_IDS = {
    "anthropic": ["toolu_01AgentOslo4Hn6", "toolu_01AgentRome8Jw2"],
    "openai": ["functions.get_weather:0", "functions.get_weather:1"],
}


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return {"Oslo": OSLO, "Rome": ROME}[city]


class Capture:
    """Request bodies as sent, via an httpx request event hook (vcr answers the requests)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> None:
        request.read()
        self.bodies.append(json.loads(request.content))


def _capturing_client(capture: Capture) -> httpx.Client:
    return httpx.Client(event_hooks={"request": [capture]}, timeout=900)


def _reasoning_of_assistant_turns(protocol: str, body: dict[str, Any]) -> list[list[str]]:
    """Per assistant turn in a request body: every reasoning text it carries."""
    turns = []
    for message in body["messages"]:
        if message["role"] != "assistant":
            continue
        if protocol == "openai":
            turns.append([message["reasoning_content"]] if "reasoning_content" in message else [])
        else:
            turns.append([b["thinking"] for b in message["content"] if b["type"] == "thinking"])
    return turns


def _check_sent(protocol: str, capture: Capture, *, stream: bool) -> None:
    assert len(capture.bodies) == 4
    for n, body in enumerate(capture.bodies):
        assert body.get("stream", False) is stream
        # Request n replays the n previous assistant turns, each with its own reasoning once.
        assert _reasoning_of_assistant_turns(protocol, body) == [[r] for r in REASONING[:n]]
    last = capture.bodies[-1]["messages"]
    if protocol == "openai":
        calls = [m["tool_calls"] for m in last if m.get("tool_calls")]
        assert [c[0]["id"] for c in calls] == CALL_IDS["openai"]
        assert [c[0]["function"]["arguments"] for c in calls] == [
            '{"city":"Oslo"}',
            '{"city":"Rome"}',
        ]
    else:
        uses = [b for m in last if m["role"] == "assistant" for b in m["content"]]
        assert [b["id"] for b in uses if b["type"] == "tool_use"] == CALL_IDS["anthropic"]
        assert all(len(b["signature"]) > 100 for b in uses if b["type"] == "thinking")


def _check_thread(protocol: str, messages: list[Any]) -> None:
    kinds = [type(m).__name__ for m in messages]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"] * 2
    tool_results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [m.content for m in tool_results] == [OSLO, ROME]
    assert [m.tool_call_id for m in tool_results] == CALL_IDS[protocol]
    answers = [m for m in messages if isinstance(m, AIMessage) and not m.tool_calls]
    assert [m.text for m in answers] == ANSWERS


def _cases(*modes: str) -> list[Any]:
    return [
        pytest.param(
            protocol,
            mode,
            id=f"{protocol}-{mode}",
            marks=[pytest.mark.vcr, pytest.mark.default_cassette(f"{protocol}_weather_thread")],
        )
        for protocol in ("anthropic", "openai")
        for mode in modes
    ]


@pytest.mark.parametrize(("protocol", "mode"), _cases("invoke", "stream"))
def test_agent_two_turns_on_one_thread(
    protocol: str, mode: str, vcr: Any, replay_model: ReplayModel
) -> None:
    capture = Capture()
    agent = create_agent(
        replay_model(protocol, http_client=_capturing_client(capture)),
        tools=[get_weather],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": f"{protocol}-{mode}"}}
    streamed: list[AIMessageChunk] = []
    for question in QUESTIONS:
        state: Any = {"messages": [{"role": "user", "content": question}]}
        if mode == "invoke":
            agent.invoke(state, config)
        else:
            for message, _meta in agent.stream(state, config, stream_mode="messages"):
                if isinstance(message, AIMessageChunk):
                    streamed.append(message)
    messages = agent.get_state(config).values["messages"]
    _check_thread(protocol, messages)
    _check_sent(protocol, capture, stream=mode == "stream")
    assert vcr.play_count == 4
    if mode == "stream":
        text = "".join(c.text for c in streamed)
        assert text == "".join(ANSWERS), "answer text streamed token by token"
        reasoning = "".join(c.additional_kwargs.get("reasoning_content", "") for c in streamed)
        assert reasoning == "".join(REASONING)


@pytest.mark.parametrize(("protocol", "mode"), _cases("invoke"))
def test_agent_with_v1_output_sends_the_same_bodies(
    protocol: str, mode: str, vcr: Any, replay_model: ReplayModel
) -> None:
    """The thread's history holds v1 standard blocks; the wire bodies are the same as for v0."""
    capture = Capture()
    client = _capturing_client(capture)
    model = replay_model(protocol, http_client=client, output_version="v1")
    agent = create_agent(model, tools=[get_weather], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": f"v1-{protocol}"}}
    for question in QUESTIONS:
        turn: Any = {"messages": [{"role": "user", "content": question}]}
        agent.invoke(turn, config)
    messages = agent.get_state(config).values["messages"]
    first_call = messages[1]
    assert isinstance(first_call.content, list)
    assert first_call.content[0]["type"] == "reasoning"
    _check_thread(protocol, messages)
    _check_sent(protocol, capture, stream=False)
    assert vcr.play_count == 4


# --- the built-in web search in an agent ---------------------------------------------------------


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_create_agent_runs_the_web_search_declared_as_a_dict(protocol: str) -> None:
    """docs/web-search.md: in `create_agent`, declare the search as `{"type": "web_search"}`."""
    gateway = FakeKimiGateway()
    gateway.add_web_search("latest Python release")
    gateway.add_reply(text="Python 3.14.")
    agent = create_agent(gateway.chat_model(protocol=protocol), tools=[{"type": "web_search"}])
    result = agent.invoke({"messages": [("human", "What is the latest Python release?")]})
    *_, answer = result["messages"]
    assert len(result["messages"]) == 2  # the question and the answer: the agent ran no tool
    assert answer.content == "Python 3.14."
    assert answer.response_metadata["server_tool_use"] == {"web_search_requests": 1}
    searched = [b for b in answer.content_blocks if b["type"] == "server_tool_call"]
    assert [b["args"]["query"] for b in searched] == ["latest Python release"]


def test_create_agent_takes_no_web_search_string() -> None:
    """`bind_tools(["web_search"])` works, `create_agent(tools=["web_search"])` does not: the
    agent hands every tool that is not a dict to its tool node, which cannot make a tool of a
    string. The docs say to use the dict there; if LangChain accepts strings one day, say so."""
    model = FakeKimiGateway().chat_model()
    with pytest.raises(AttributeError, match="has no attribute 'name'"):
        create_agent(model, tools=["web_search"])  # type: ignore[list-item]
    page = " ".join((ROOT / "docs" / "web-search.md").read_text(encoding="utf-8").split())
    assert 'create_agent(model, tools=[{"type": "web_search"}])' in page
