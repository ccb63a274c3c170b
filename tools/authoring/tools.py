"""Write cassettes/tools_cassettes/*.yaml: `python -m tools.authoring.tools`.

Tool loops with parallel calls on both protocols, a named tool_choice on kimi-k3, and histories
mixing turns from both protocols and other providers. Every request and response body is written
out by hand from spec/*.yaml (a follow-up request extends the previous hand-written body with
the hand-written assistant turn and tool results); streams deliver each block in two halves.
"""

from __future__ import annotations

import copy

from langchain_kimi.testing import frames
from tools.authoring import _kit
from tools.authoring import _wire as wire
from tools.authoring._kit import Cassettes, exchange, render


def sig(tag: str) -> str:
    """An authored thinking signature, distinct per tag."""
    return (
        "EqQDCkgIBxABGAIqQKimiToolLoop"
        + tag
        + "Wu1Hq2XoVb7tZpRk3cJf0aLyE9gTiUw4sPnQ2mHvYdCxK6jRbA5oFz1e"
        "IlSuN7gqWy3tVhDp0kZcMxOa8SDBpG2n4rQv7yUeJwLhoMT2xRk9aBcVd3eFgHIjCq5Wm1Ns8Yt0Lr4Kp6Jz2Xv9Ub7"
        "authoredfromspecsignatureAAAAGAE="
    )


def a_msg(
    mid: str, model: str, content: list[frames.Json], stop: str, usage: frames.Json
) -> frames.Json:
    return frames.anthropic_message(mid, model, content, stop, usage)


def a_usage(inp: int, out: int, think: int, read: int = 0) -> frames.Json:
    return frames.anthropic_usage_counts(inp, out, think, read=read)


def o_resp(
    cid: str, model: str, message: frames.Json, finish: str, usage: frames.Json
) -> frames.Json:
    return frames.openai_completion(cid, model, message, finish, usage)


def o_usage(prompt: int, out: int, think: int, cached: int = 0) -> frames.Json:
    return frames.openai_usage_counts(prompt, out, think, cached=cached)


def pair(protocol: str, body: frames.Json, reply: frames.Json, *, stream: bool) -> frames.Json:
    """The hand-written body and reply as they go over the wire, non-streaming or streaming."""
    if not stream:
        return exchange(protocol, body, reply)
    streamed: frames.Json = {**copy.deepcopy(body), "stream": True}
    return exchange(
        protocol,
        streamed,
        wire.stream_message(reply) if protocol == "anthropic" else wire.stream_completion(reply),
    )


K31, K3 = "kimi-k3.1-pro", "kimi-k3"
Q = "What is the weather in Oslo, and what time is it?"
WEATHER_A: frames.Json = {
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "input_schema": {
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "type": "object",
    },
}
TIME_A: frames.Json = {
    "name": "get_time",
    "description": "Get the current UTC time.",
    "input_schema": {"properties": {}, "type": "object"},
}
WEATHER_O: frames.Json = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": WEATHER_A["description"],
        "parameters": WEATHER_A["input_schema"],
    },
}
TIME_O: frames.Json = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": TIME_A["description"],
        "parameters": TIME_A["input_schema"],
    },
}
OSLO = "Oslo: -3°C, light snow"
TIME = "2026-01-15T12:00:00Z"
ROME = "Rome: 14°C, sunny"


# --- anthropic K3.1: parallel calls ----------------------------------------------------------


def anthropic_parallel_loop() -> Cassettes:
    files: Cassettes = {}
    r1 = "The user wants two facts. I will call get_weather for Oslo and get_time in parallel."
    r2 = "Both tools answered; the clock tool failed, so I report the weather only."
    a_turn1: list[frames.Json] = [
        {"type": "thinking", "thinking": r1, "signature": sig("A1")},
        {"type": "text", "text": "Let me check both."},
        {
            "type": "tool_use",
            "id": "toolu_01WeatherOslo7Kq2",
            "name": "get_weather",
            "input": {"city": "Oslo"},
        },
        {"type": "tool_use", "id": "toolu_01ClockUtc3Zp8", "name": "get_time", "input": {}},
    ]
    a_final = "Oslo is at -3°C with light snow. The clock service is unavailable right now."
    a_req1: frames.Json = {
        "model": K31,
        "max_tokens": 131072,
        "messages": [{"role": "user", "content": Q}],
        "tools": [WEATHER_A, TIME_A],
    }
    a_rep1 = a_msg("msg_01KimiToolsA1x", K31, a_turn1, "tool_use", a_usage(180, 96, 40))
    a_req2 = copy.deepcopy(a_req1)
    a_req2["messages"] += [
        {"role": "assistant", "content": a_turn1},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01WeatherOslo7Kq2",
                    "content": [{"type": "text", "text": OSLO}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01ClockUtc3Zp8",
                    "content": "clock service unavailable",
                    "is_error": True,
                },
            ],
        },
    ]
    a_rep2 = a_msg(
        "msg_01KimiToolsA2y",
        K31,
        [
            {"type": "thinking", "thinking": r2, "signature": sig("A2")},
            {"type": "text", "text": a_final},
        ],
        "end_turn",
        a_usage(60, 42, 20, read=180),
    )
    files["tools_cassettes/test_anthropic_k31_parallel_loop.yaml"] = render(
        [
            pair("anthropic", a_req1, a_rep1, stream=False),
            pair("anthropic", a_req2, a_rep2, stream=False),
            pair("anthropic", a_req1, a_rep1, stream=True),
            pair("anthropic", a_req2, a_rep2, stream=True),
        ],
        "kimi-k3.1-pro on Messages: two parallel tool_use blocks (one without input); the second\n"
        "request echoes the assistant turn unchanged (thinking + signature, text, tool_use) and\n"
        "sends both results in ONE user turn (list content; is_error). Non-streaming, then streaming.",
    )
    return files


# --- anthropic kimi-k3: named choice ---------------------------------------------------------


def anthropic_k3_named_choice() -> Cassettes:
    files: Cassettes = {}
    k3_turn1: list[frames.Json] = [
        {
            "type": "thinking",
            "thinking": "I am required to call get_weather.",
            "signature": sig("K3"),
        },
        {
            "type": "tool_use",
            "id": "toolu_01K3Named5Vb",
            "name": "get_weather",
            "input": {"city": "Oslo"},
        },
    ]
    k_req1: frames.Json = {
        "model": K3,
        "max_tokens": 131072,
        "messages": [{"role": "user", "content": "Weather in Oslo?"}],
        "tools": [WEATHER_A, TIME_A],
        "tool_choice": {"type": "tool", "name": "get_weather"},
    }
    k_rep1 = a_msg("msg_01KimiK3Named1", K3, k3_turn1, "tool_use", a_usage(150, 30, 12))
    k_req2 = copy.deepcopy(k_req1)
    k_req2["messages"] += [
        {"role": "assistant", "content": k3_turn1},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01K3Named5Vb", "content": OSLO}
            ],
        },
    ]
    k_req2["tool_choice"] = {"type": "auto"}
    k_rep2 = a_msg(
        "msg_01KimiK3Named2",
        K3,
        [
            {"type": "thinking", "thinking": "Report it.", "signature": sig("K4")},
            {"type": "text", "text": "-3°C and light snow."},
        ],
        "end_turn",
        a_usage(40, 20, 8, read=150),
    )
    files["tools_cassettes/test_anthropic_k3_named_choice.yaml"] = render(
        [
            pair("anthropic", k_req1, k_rep1, stream=False),
            pair("anthropic", k_req2, k_rep2, stream=False),
        ],
        "kimi-k3 on Messages: a named tool_choice is sent as {type: tool, name} with every tool;\n"
        "the tool result goes back as a string (kimi-k3's tool_result content is a string only).",
    )
    return files


# --- openai K3.1: Kimi-style ids -------------------------------------------------------------


def openai_parallel_loop() -> Cassettes:
    files: Cassettes = {}
    or1 = "Two facts needed: call get_weather(Oslo) and get_time together."
    o_calls: list[frames.Json] = [
        # Original argument strings (compact spacing, empty for the no-argument tool) are echoed as is.
        {
            "id": "functions.get_weather:0",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
        },
        {
            "id": "functions.get_time:1",
            "type": "function",
            "function": {"name": "get_time", "arguments": ""},
        },
    ]
    o_msg1: frames.Json = {
        "role": "assistant",
        "content": None,
        "reasoning_content": or1,
        "tool_calls": o_calls,
    }
    o_req1: frames.Json = {
        "model": K31,
        "messages": [{"role": "user", "content": Q}],
        "tools": [WEATHER_O, TIME_O],
        "tool_choice": "required",
    }
    o_rep1 = o_resp("chatcmpl-kimiTools1aB3", K31, o_msg1, "tool_calls", o_usage(190, 70, 50))
    o_req2 = copy.deepcopy(o_req1)
    del o_req2["tool_choice"]  # the follow-up call binds the tools without forcing one
    o_req2["messages"] += [
        o_msg1,
        {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": OSLO},
        {"role": "tool", "tool_call_id": "functions.get_time:1", "content": TIME},
    ]
    o_final = "Oslo: -3°C with light snow; it is 12:00 UTC."
    o_rep2 = o_resp(
        "chatcmpl-kimiTools2cD4",
        K31,
        {"role": "assistant", "content": o_final, "reasoning_content": "Combine both results."},
        "stop",
        o_usage(260, 30, 12, cached=190),
    )
    files["tools_cassettes/test_openai_k31_parallel_loop.yaml"] = render(
        [
            pair("openai", o_req1, o_rep1, stream=False),
            pair("openai", o_req2, o_rep2, stream=False),
            pair("openai", o_req1, o_rep1, stream=True),
            pair("openai", o_req2, o_rep2, stream=True),
        ],
        "kimi-k3.1-pro on Chat Completions: tool_choice required; two calls with Kimi-style ids\n"
        "(functions.<name>:<n>), one with empty arguments. The second request echoes the assistant\n"
        "message unchanged (content null, reasoning_content, ORIGINAL argument strings) and one\n"
        "role=tool message per call. Non-streaming, then streaming (arguments split across chunks).",
    )
    return files


# --- mixed-origin histories ------------------------------------------------------------------


def mixed_histories() -> Cassettes:
    files: Cassettes = {}
    from_anthropic_reasoning = "Need the Oslo weather first."
    from_openai_reasoning = "Call get_weather for Oslo."
    # openai protocol, history: a turn produced on the anthropic protocol (toolu_ id, thinking) and
    # a turn from another provider (call_ id, no reasoning).
    m_o_req: frames.Json = {
        "model": K31,
        "messages": [
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "role": "assistant",
                "content": "Checking.",
                "reasoning_content": from_anthropic_reasoning,
                "tool_calls": [
                    {
                        "id": "toolu_01FromMessagesQ9",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "toolu_01FromMessagesQ9", "content": OSLO},
            {
                "role": "assistant",
                "content": "-3°C, light snow.",
                "reasoning_content": "Report it.",
            },
            {"role": "user", "content": "And Rome?"},
            {
                "role": "assistant",
                "content": None,
                # No reasoning of its own: ChatKimi's placeholder (Kimi rejects it missing).
                "reasoning_content": wire.FOREIGN_REASONING,
                "tool_calls": [
                    {
                        "id": "call_Xk2pL9mQ4rT",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_Xk2pL9mQ4rT", "content": ROME},
        ],
        "tools": [WEATHER_O],
    }
    m_o_rep = o_resp(
        "chatcmpl-kimiMixed9eF5",
        K31,
        {
            "role": "assistant",
            "content": "Rome is 14°C and sunny.",
            "reasoning_content": "Rome result is in.",
        },
        "stop",
        o_usage(240, 25, 10),
    )
    files["tools_cassettes/test_openai_mixed_history.yaml"] = render(
        [pair("openai", m_o_req, m_o_rep, stream=False)],
        "Chat Completions request whose history mixes a turn produced on the Messages protocol\n"
        "(toolu_ id; its thinking sent as reasoning_content, arguments re-serialized) and a turn from\n"
        "another provider (call_ id, no reasoning: the placeholder reasoning_content is sent, its\n"
        "original arguments string kept).",
    )
    # anthropic protocol, history: a turn produced on the openai protocol (Kimi-style id,
    # reasoning_content) and a turn from another provider (call_ id, no reasoning).
    m_a_req: frames.Json = {
        "model": K31,
        "max_tokens": 131072,
        "messages": [
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "role": "assistant",
                "content": [
                    # No signature: the reasoning came from Chat Completions (signature is optional).
                    {"type": "thinking", "thinking": from_openai_reasoning},
                    {
                        "type": "tool_use",
                        "id": "functions.get_weather:0",
                        "name": "get_weather",
                        "input": {"city": "Oslo"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "functions.get_weather:0",
                        "content": OSLO,
                    }
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Report it."},
                    {"type": "text", "text": "-3°C, light snow."},
                ],
            },
            {"role": "user", "content": "And Rome?"},
            {
                "role": "assistant",
                "content": [
                    # No thinking of its own: ChatKimi's unsigned placeholder block.
                    wire.FOREIGN_THINKING,
                    {
                        "type": "tool_use",
                        "id": "call_Xk2pL9mQ4rT",
                        "name": "get_weather",
                        "input": {"city": "Rome"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "call_Xk2pL9mQ4rT", "content": ROME}
                ],
            },
        ],
        "tools": [WEATHER_A],
    }
    m_a_rep = a_msg(
        "msg_01KimiMixedHist",
        K31,
        [
            {"type": "thinking", "thinking": "Rome result is in.", "signature": sig("MX")},
            {"type": "text", "text": "Rome is 14°C and sunny."},
        ],
        "end_turn",
        a_usage(230, 25, 10),
    )
    files["tools_cassettes/test_anthropic_mixed_history.yaml"] = render(
        [pair("anthropic", m_a_req, m_a_rep, stream=False)],
        "Messages request whose history mixes a turn produced on Chat Completions (Kimi-style id\n"
        "functions.get_weather:0; reasoning_content sent as a thinking block without signature) and a\n"
        "turn from another provider (call_ id, no reasoning: an unsigned placeholder thinking block).",
    )
    return files


def cassettes() -> Cassettes:
    return {
        **anthropic_parallel_loop(),
        **anthropic_k3_named_choice(),
        **openai_parallel_loop(),
        **mixed_histories(),
    }


if __name__ == "__main__":
    _kit.main(cassettes())
