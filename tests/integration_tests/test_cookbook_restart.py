"""The cookbook's SQLite recipe across a real process restart.

docs/cookbook.md keeps an agent's thread in a `SqliteSaver` file; its sample asks two questions
from two fresh checkpointers in one process. Here each question runs in its own Python process
that shares nothing with the other but the database file. Both replay the authored cassette
`agents/anthropic_weather_thread.yaml` (record mode none, JSON bodies matched), so the second
process passes only if the first exchange it reloads from the file goes back on the wire exactly:
thinking block with its signature, `tool_use`, `tool_result`, answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tools.paths import ROOT

_ONE_RUN = """
import json, sys
import pytest_socket
pytest_socket.disable_socket(allow_unix_socket=True)  # the replay must not need a network
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langchain_kimi import ChatKimi
from tools.cassette_format import replay_vcr

database, question = sys.argv[1], sys.argv[2]

@tool
def get_weather(city: str) -> str:
    '''Get the current weather for a city.'''
    return {"Oslo": "Oslo: -3°C, light snow", "Rome": "Rome: 14°C, sunny"}[city]

cassette = "cassettes/agents/anthropic_weather_thread.yaml"
with replay_vcr().use_cassette(cassette, allow_playback_repeats=True):
    with SqliteSaver.from_conn_string(database) as checkpointer:
        model = ChatKimi(protocol="anthropic", max_retries=0)
        agent = create_agent(model, tools=[get_weather], checkpointer=checkpointer)
        result = agent.invoke(
            {"messages": [("human", question)]}, {"configurable": {"thread_id": "demo"}}
        )
first_answer = result["messages"][1]
print(json.dumps({
    "types": [m.type for m in result["messages"]],
    "answer": result["messages"][-1].content,
    "signature": first_answer.additional_kwargs["thinking_blocks"][0]["signature"],
}))
"""


def _run(database: Path, question: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVOLINK_")}
    env["EVOLINK_API_KEY"] = "test-key-not-real"
    env["PYTHONPATH"] = str(ROOT)
    # stderr is not captured here: pytest shows it (the child's traceback) when this fails.
    out = subprocess.check_output(
        [sys.executable, "-c", _ONE_RUN, str(database), question],
        cwd=ROOT,
        env=env,
        text=True,
        timeout=180,
    )
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


def test_a_thread_in_sqlite_survives_a_process_restart(tmp_path: Path) -> None:
    database = tmp_path / "threads.sqlite"
    first = _run(database, "What is the weather in Oslo?")
    assert first["types"] == ["human", "ai", "tool", "ai"]
    assert first["answer"] == "It is -3°C with light snow in Oslo."

    second = _run(database, "And in Rome?")
    assert second["types"] == ["human", "ai", "tool", "ai"] * 2
    assert second["answer"] == "Rome: 14°C and sunny."
    # The first process's signed thinking block came back from the file unchanged.
    assert second["signature"] == first["signature"]
    assert str(first["signature"]).startswith("Eq")
