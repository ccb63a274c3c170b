"""Write cassettes/agents/*.yaml: `python -m tools.authoring.agents`.

create_agent on each protocol: one thread, two user turns, four model calls, first invoked and
then streamed. Every request and response body is written out by hand from spec/*.yaml; each
request extends the hand-written history of the previous one. The tools are those of `tools`.
"""

from __future__ import annotations

import copy

from langchain_kimi.testing.frames import Json
from tools.authoring import _kit
from tools.authoring._kit import Cassettes, render
from tools.authoring.tools import (
    K31,
    OSLO,
    ROME,
    WEATHER_A,
    WEATHER_O,
    a_msg,
    a_usage,
    o_resp,
    o_usage,
    pair,
    sig,
)

T = [
    "The user asks for the Oslo weather; I call get_weather.",
    "The tool says -3°C with light snow; I answer.",
    "Now Rome; I call get_weather again.",
    "Rome is 14°C and sunny; I answer.",
]
ANSWERS = ["It is -3°C with light snow in Oslo.", "Rome: 14°C and sunny."]
QUESTIONS = ["What is the weather in Oslo?", "And in Rome?"]


def agent_anthropic() -> list[tuple[Json, Json]]:
    ids = ["toolu_01AgentOslo4Hn6", "toolu_01AgentRome8Jw2"]
    results = [OSLO, ROME]
    history: list[Json] = []
    out: list[tuple[Json, Json]] = []
    for turn in range(2):
        history.append({"role": "user", "content": QUESTIONS[turn]})
        call: list[Json] = [
            {"type": "thinking", "thinking": T[2 * turn], "signature": sig(f"G{turn}a")},
            {
                "type": "tool_use",
                "id": ids[turn],
                "name": "get_weather",
                "input": {"city": ["Oslo", "Rome"][turn]},
            },
        ]
        req = {
            "model": K31,
            "max_tokens": 131072,
            "messages": copy.deepcopy(history),
            "tools": [WEATHER_A],
        }
        out.append(
            (
                req,
                a_msg(
                    f"msg_01KimiAgent{turn}a",
                    K31,
                    call,
                    "tool_use",
                    a_usage(120 + 200 * turn, 40, 25),
                ),
            )
        )
        history += [
            {"role": "assistant", "content": call},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": ids[turn], "content": results[turn]}
                ],
            },
        ]
        answer = [
            {"type": "thinking", "thinking": T[2 * turn + 1], "signature": sig(f"G{turn}b")},
            {"type": "text", "text": ANSWERS[turn]},
        ]
        req = {
            "model": K31,
            "max_tokens": 131072,
            "messages": copy.deepcopy(history),
            "tools": [WEATHER_A],
        }
        out.append(
            (
                req,
                a_msg(
                    f"msg_01KimiAgent{turn}b",
                    K31,
                    answer,
                    "end_turn",
                    a_usage(40, 30, 15, read=120 + 200 * turn),
                ),
            )
        )
        history.append({"role": "assistant", "content": answer})
    return out


def agent_openai() -> list[tuple[Json, Json]]:
    ids = ["functions.get_weather:0", "functions.get_weather:1"]
    arguments = ['{"city":"Oslo"}', '{"city":"Rome"}']
    results = [OSLO, ROME]
    history: list[Json] = []
    out: list[tuple[Json, Json]] = []
    for turn in range(2):
        history.append({"role": "user", "content": QUESTIONS[turn]})
        call = {
            "role": "assistant",
            "content": None,
            "reasoning_content": T[2 * turn],
            "tool_calls": [
                {
                    "id": ids[turn],
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": arguments[turn]},
                }
            ],
        }
        req = {"model": K31, "messages": copy.deepcopy(history), "tools": [WEATHER_O]}
        out.append(
            (
                req,
                o_resp(
                    f"chatcmpl-kimiAgent{turn}a",
                    K31,
                    call,
                    "tool_calls",
                    o_usage(120 + 200 * turn, 40, 25),
                ),
            )
        )
        history += [call, {"role": "tool", "tool_call_id": ids[turn], "content": results[turn]}]
        answer = {
            "role": "assistant",
            "content": ANSWERS[turn],
            "reasoning_content": T[2 * turn + 1],
        }
        req = {"model": K31, "messages": copy.deepcopy(history), "tools": [WEATHER_O]}
        out.append(
            (
                req,
                o_resp(
                    f"chatcmpl-kimiAgent{turn}b",
                    K31,
                    answer,
                    "stop",
                    o_usage(160 + 200 * turn, 30, 15, cached=120),
                ),
            )
        )
        history.append(answer)
    return out


def cassettes() -> Cassettes:
    files: Cassettes = {}
    for proto, steps in (("anthropic", agent_anthropic()), ("openai", agent_openai())):
        files[f"agents/{proto}_weather_thread.yaml"] = render(
            [pair(proto, r, p, stream=False) for r, p in steps]
            + [pair(proto, r, p, stream=True) for r, p in steps],
            f"create_agent on the {proto} protocol, one thread, two user turns (4 model calls):\n"
            "question -> reasoning + get_weather call -> tool result -> answer; the second question\n"
            "carries the whole first exchange back unchanged, each reasoning exactly once.\n"
            "Interactions 1-4 non-streaming (invoke), 5-8 streaming (stream_mode=messages).",
        )
    return files


if __name__ == "__main__":
    _kit.main(cassettes())
