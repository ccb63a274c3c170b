"""Write cassettes/web_search/*.yaml: `python -m tools.authoring.web_search`.

The documented `$web_search` loop on /v1/chat/completions (rounds, the round limit, a reply that
mixes a client call with a search) and the server web search tool on /v1/messages. Every request
and response body is written out by hand from spec/*.yaml; the Messages blocks are modelled on
the real Anthropic traffic in tests/fixtures/corpus.
"""

from __future__ import annotations

from typing import Any

from langchain_kimi.testing import frames
from tools.authoring import _kit
from tools.authoring import _wire as wire
from tools.authoring._kit import Cassettes, render
from tools.authoring.features import ANTH, OAI, SIG, interaction

M = "kimi-k3.1-pro"
Q = "What is the latest stable Python release? Answer in one sentence."
TOOLS: list[frames.Json] = [{"type": "web_search"}]
A1 = '{"query":"latest stable Python release","search_id":"ws_7Hq2Lm9Vb4"}'
A2A = '{"query":"Python 3.14 release notes","search_id":"ws_3Fh8Kd1Wp6"}'
A2B = '{"query":"python.org downloads latest","search_id":"ws_5Rt7Yu2Io9"}'
R1 = "I should check the web for the current release."
R2 = " The first results mention 3.14; let me confirm on python.org."
R3 = " Both sources agree on 3.14."
ANSWER = "The latest stable Python release is Python 3.14."
ASSIST1: frames.Json = {
    "role": "assistant",
    "content": None,
    "reasoning_content": R1,
    "tool_calls": [
        {
            "id": "call_ws_01",
            "type": "builtin_function",
            "function": {"name": "$web_search", "arguments": A1},
        }
    ],
}
ASSIST2: frames.Json = {
    "role": "assistant",
    "content": None,
    "reasoning_content": R2,
    "tool_calls": [
        {
            "id": "call_ws_02",
            "type": "builtin_function",
            "function": {"name": "$web_search", "arguments": A2A},
        },
        {
            "id": "call_ws_03",
            "type": "builtin_function",
            "function": {"name": "$web_search", "arguments": A2B},
        },
    ],
}
TOOL1: list[frames.Json] = [{"role": "tool", "tool_call_id": "call_ws_01", "content": A1}]
TOOL2: list[frames.Json] = [
    {"role": "tool", "tool_call_id": "call_ws_02", "content": A2A},
    {"role": "tool", "tool_call_id": "call_ws_03", "content": A2B},
]
U1: frames.Json = {
    "prompt_tokens": 40,
    "completion_tokens": 30,
    "total_tokens": 70,
    "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 40},
    "completion_tokens_details": {"reasoning_tokens": 12},
}
U2: frames.Json = {
    "prompt_tokens": 900,
    "completion_tokens": 50,
    "total_tokens": 950,
    "prompt_tokens_details": {"cached_tokens": 40, "cache_write_tokens": 860},
    "completion_tokens_details": {"reasoning_tokens": 20},
}
U3: frames.Json = {
    "prompt_tokens": 2500,
    "completion_tokens": 25,
    "total_tokens": 2525,
    "prompt_tokens_details": {"cached_tokens": 900, "cache_write_tokens": 1600},
    "completion_tokens_details": {"reasoning_tokens": 9},
}
BASE: list[frames.Json] = [{"role": "user", "content": Q}]
FINAL: frames.Json = {"role": "assistant", "content": ANSWER, "reasoning_content": R3}
Q2 = "And the one before it?"
WEATHER: frames.Json = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
QM = "Search for tomorrow's big events in Paris and tell me the weather there."
AM = '{"query":"Paris events tomorrow","search_id":"ws_9Mx1Nc2Bv3"}'
MIXED: frames.Json = {
    "role": "assistant",
    "content": None,
    "reasoning_content": "I need a search and the weather tool.",
    "tool_calls": [
        {
            "id": "call_ws_10",
            "type": "builtin_function",
            "function": {"name": "$web_search", "arguments": AM},
        },
        {
            "id": "call_fn_11",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
    ],
}
AQ = "How do I update a web app to TypeScript 5.5?"
AQ2 = "Thanks. Is 5.5 still supported?"
ATOOL: frames.Json = {"type": "web_search_20250305", "name": "web_search", "max_uses": 1}
THINK = "The user wants upgrade steps for TypeScript 5.5; I should search."
ENC1 = "EqcCCioIDRgCIiQzOTYzNWQzYi1lYmZkLTQ5ODctOTkyMS1iMjI4ZDQ4MTc0ZDYSDIpbb4mpYYLd+Ug4VBoMMMXk9QcXZD7afbzGIjA/H5WBC1diePl1DvZbeIhgojr5Grk8yvoWZRRH4EDj+fraUojGMMAPEb+RE0I05kcqsB2P1FKK6WR2sawrrNaQnLi/oVFgRe1BKxGg44XbP+38Grai9jc1IXbHCltefYGV9YQpsqe7W0d72sZFAqF3HZ1VA9fSg6Unaf8qQqQX4xcVD5ys5e+40MbcHcQP9da4NkH2HSfxthM7mo/4AN3fNUsChVwCKGOVY5SWyi+ZgttdV2bLxZhPjwaZOvMCfCgbfs/BgnRQEcOvmnkaCp4LyQHkV3pl9SiPCygkvqYABO7EwAHGQDaT67WoQDtLo1EZ89gK/96r9j3igqxZLrhB2sXRZb05fPfd/F75Gi43RBcXLdVYILTqJSEzWy6o5B2IlYCncZyEWIG+/piwYiAcJiSuOPyYbes3st1yrzyWHfgOqDXrTu6NQj32HoTZCuVKrnHub3Q/jojtzCvSll7o7Sf10sN3gZTNlWW7a23BCbB+fxpT"
ENC2 = "Eu8BCioIDRgCIiQ2NGRlMjdlNy1hODBkLTRlYTEtYWQ1Zi1kNTlmMzRmMjg3ZjQSDKimiAuthoredResult2xGgyXk9QcXZD7afbzGIjA/H5WBC1diePl1DvZbeIhgojr5Grk8yvoWZRRH4EDj+fraUojGMMAPEb+RE0I05kcqsB2P1FKK6WR2sawrrNaQnLi/oVFgRe1BKxGg44XbP+38Grai9jc1IXbHCltefYGV9YQpsqe7W0d72sZFAqF3HZ1VA9fSg6Unaf8qQqQX4xcVD5ys5e+40MbcHcQP9da4NkH2HSfxthM7mo/4AN3fNUsChVwCKGOVY5SWyi+ZgttdV2bLxZhPjwaZOvMCfCgbfs/BgnRQEcOvmnkaCp4LyQHkV3pl9SiPCygkvq"
CITE: frames.Json = {
    "type": "web_search_result_location",
    "cited_text": "TypeScript 5.5 is available through npm: npm install -D typescript",
    "url": "https://devblogs.microsoft.com/typescript/announcing-typescript-5-5/",
    "title": "Announcing TypeScript 5.5",
    "encrypted_index": "EpMBCioIDRgCIiQ2NGRlMjdlNy1hODBkLTRlYTEtYWQ1Zi1kNTlmMzRmMjg3ZjQSDKimiAuthoredIndexGgz3VjZ2ZmVkZGVjYWJiIjCb2Y3Z",
}
BLOCKS: list[frames.Json] = [
    {"type": "thinking", "thinking": THINK, "signature": SIG},
    {
        "type": "server_tool_use",
        "id": "srvtoolu_01KimiSearchA1b2C3",
        "name": "web_search",
        "input": {"query": "TypeScript 5.5 upgrade"},
    },
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_01KimiSearchA1b2C3",
        "content": [
            {
                "type": "web_search_result",
                "title": "Announcing TypeScript 5.5",
                "url": "https://devblogs.microsoft.com/typescript/announcing-typescript-5-5/",
                "encrypted_content": ENC1,
                "page_age": "June 20, 2024",
            },
            {
                "type": "web_search_result",
                "title": "TypeScript: Documentation - TypeScript 5.5",
                "url": "https://www.typescriptlang.org/docs/handbook/release-notes/typescript-5-5.html",
                "encrypted_content": ENC2,
                "page_age": None,
            },
        ],
    },
    {"type": "text", "text": "Let me look for a migration guide as well."},
    {
        "type": "server_tool_use",
        "id": "srvtoolu_01KimiSearchD4e5F6",
        "name": "web_search",
        "input": {"query": "TypeScript 5.5 migration breaking changes"},
    },
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_01KimiSearchD4e5F6",
        "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
    },
    {"type": "text", "text": "Run npm install -D typescript@5.5", "citations": [CITE]},
    {"type": "text", "text": ", then fix the new type errors the compiler reports."},
]
AUSAGE: frames.Json = {
    "input_tokens": 2050,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "output_tokens": 160,
    "output_tokens_details": {"thinking_tokens": 24},
    "server_tool_use": {"web_search_requests": 1},
}
AUSAGE2: frames.Json = {
    "input_tokens": 35,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 2200,
    "output_tokens": 20,
    "output_tokens_details": {"thinking_tokens": 8},
}
THINK2 = "The results mention 5.5 as a current release line."
ANSWER2 = "Yes, 5.5 is a supported release."
B2: list[frames.Json] = [
    {"type": "thinking", "thinking": THINK2, "signature": SIG.replace("AAAA", "BBBB")},
    {"type": "text", "text": ANSWER2},
]


def body(
    msgs: list[frames.Json], stream: bool = False, tools: list[frames.Json] = TOOLS
) -> dict[str, Any]:
    b: dict[str, Any] = {"model": M, "messages": msgs, "tools": tools}
    if stream:
        b["stream"] = True
    return b


def completion(cid: str, message: frames.Json, finish: str, usage: frames.Json) -> frames.Json:
    return frames.openai_completion(cid, M, message, finish, usage)


def round_stream(cid: str, message: frames.Json, finish: str, usage: frames.Json) -> str:
    """One loop round streamed: a call's arguments arrive as 20 characters, then the rest."""
    out = [
        frames.openai_chunk(cid, M, {"role": "assistant", "content": "", "reasoning_content": ""})
    ]
    out += [
        frames.openai_chunk(cid, M, {"reasoning_content": p})
        for p in wire.halves(message["reasoning_content"])
    ]
    for i, call in enumerate(message.get("tool_calls") or []):
        args = call["function"]["arguments"]
        head = {"index": i, "id": call["id"], "type": call["type"]}
        function = {"name": call["function"]["name"], "arguments": args[:20]}
        out.append(frames.openai_chunk(cid, M, {"tool_calls": [{**head, "function": function}]}))
        out.append(
            frames.openai_chunk(
                cid, M, {"tool_calls": [{"index": i, "function": {"arguments": args[20:]}}]}
            )
        )
    if message.get("content"):
        text = message["content"]
        out += [
            frames.openai_chunk(cid, M, {"content": p}) for p in (text[:16], text[16:33], text[33:])
        ]
    out.append(frames.openai_chunk(cid, M, {}, finish))
    out.append(frames.openai_usage_chunk(cid, M, usage))
    return frames.frame_openai(out)


def areq(msgs: list[frames.Json], stream: bool = False) -> dict[str, Any]:
    b: dict[str, Any] = {"model": M, "max_tokens": 131072, "messages": msgs, "tools": [ATOOL]}
    if stream:
        b["stream"] = True
    return b


def amsg(mid: str, content: list[frames.Json], usage: frames.Json) -> frames.Json:
    return frames.anthropic_message(mid, M, content, "end_turn", usage)


def a_stream(mid: str, blocks: list[frames.Json], usage: frames.Json) -> str:
    """Messages stream: server_tool_use input as three input_json_delta pieces (the first
    empty), a web_search_tool_result complete in its content_block_start, citations before
    the cited text, and the whole usage (server_tool_use included) in message_delta."""
    ev = [frames.message_start(mid, M, frames.start_usage(usage))]
    for i, b in enumerate(blocks):
        t = b["type"]
        if t == "thinking":
            ev.append(frames.block_start(i, {"type": "thinking", "thinking": "", "signature": ""}))
            if i == 0:
                ev.append(frames.PING)
            ev += [
                frames.block_delta(i, {"type": "thinking_delta", "thinking": p})
                for p in wire.halves(b["thinking"])
            ]
            ev.append(
                frames.block_delta(i, {"type": "signature_delta", "signature": b["signature"]})
            )
        elif t == "server_tool_use":
            ev.append(
                frames.block_start(
                    i, {"type": "server_tool_use", "id": b["id"], "name": b["name"], "input": {}}
                )
            )
            s = frames.compact(b["input"])
            ev += [
                frames.block_delta(i, {"type": "input_json_delta", "partial_json": p})
                for p in ("", s[:9], s[9:])
            ]
        elif t == "web_search_tool_result":
            ev.append(frames.block_start(i, b))
        elif t == "text":
            start: frames.Json = {"type": "text", "text": ""}
            if "citations" in b:
                start["citations"] = []
            ev.append(frames.block_start(i, start))
            ev += [
                frames.block_delta(i, {"type": "citations_delta", "citation": c})
                for c in b.get("citations", [])
            ]
            ev += [
                frames.block_delta(i, {"type": "text_delta", "text": p})
                for p in wire.halves(b["text"])
            ]
        ev.append(frames.block_stop(i))
    ev += [frames.message_delta("end_turn", usage), frames.MESSAGE_STOP]
    return frames.frame_anthropic(ev)


def cassettes() -> Cassettes:
    files: Cassettes = {}
    rounds = [
        (BASE, "chatcmpl-kimiSearchR1a2B3c4", ASSIST1, "tool_calls", U1),
        ([*BASE, ASSIST1, *TOOL1], "chatcmpl-kimiSearchR2d5E6f7", ASSIST2, "tool_calls", U2),
        (
            [*BASE, ASSIST1, *TOOL1, ASSIST2, *TOOL2],
            "chatcmpl-kimiSearchR3g8H9i0",
            FINAL,
            "stop",
            U3,
        ),
    ]
    inter = [
        interaction(OAI, body(m), completion(cid, msg, fin, u)) for m, cid, msg, fin, u in rounds
    ]
    inter += [
        interaction(OAI, body(m, True), round_stream(cid, msg, fin, u))
        for m, cid, msg, fin, u in rounds
    ]
    replay_msgs = [
        *BASE,
        ASSIST1,
        *TOOL1,
        ASSIST2,
        *TOOL2,
        {"role": "assistant", "content": ANSWER, "reasoning_content": R3},
        {"role": "user", "content": Q2},
    ]
    inter.append(
        interaction(
            OAI,
            body(replay_msgs),
            completion(
                "chatcmpl-kimiSearchR4j1K2l3",
                {
                    "role": "assistant",
                    "content": "Python 3.13.",
                    "reasoning_content": "It was 3.13.",
                },
                "stop",
                {"prompt_tokens": 2600, "completion_tokens": 8, "total_tokens": 2608},
            ),
        )
    )
    files["web_search/openai_loop.yaml"] = render(
        inter,
        (
            "The documented $web_search loop on /v1/chat/completions: round 1 asks for one\n"
            "builtin_function $web_search call, round 2 for two, round 3 answers. Each follow-up\n"
            "request carries the assistant message unchanged (content null, reasoning_content,\n"
            "builtin_function calls with the original arguments string) and one tool message per\n"
            "call whose content is that call's arguments. Non-streaming first, then the same three\n"
            "rounds streamed (usage in a trailing chunk). Last interaction: the final reply sent back\n"
            "in a second turn (search rounds verbatim, then the answer with its own reasoning)."
        ),
    )
    lim = [
        (BASE, "chatcmpl-kimiLimitR1m4N5o6", ASSIST1, "tool_calls", U1),
        ([*BASE, ASSIST1, *TOOL1], "chatcmpl-kimiLimitR2p7Q8r9", ASSIST2, "tool_calls", U2),
    ]
    inter = [interaction(OAI, body(m), completion(cid, msg, fin, u)) for m, cid, msg, fin, u in lim]
    inter += [
        interaction(OAI, body(m, True), round_stream(cid, msg, fin, u))
        for m, cid, msg, fin, u in lim
    ]
    files["web_search/openai_loop_limit.yaml"] = render(
        inter,
        (
            "The service asks for $web_search twice in a row; with max_builtin_rounds=1 ChatKimi\n"
            "posts one follow-up and then stops with an error (no third request)."
        ),
    )
    mtools = [WEATHER, {"type": "web_search"}]
    m1: list[frames.Json] = [{"role": "user", "content": QM}]
    m2 = [
        *m1,
        MIXED,
        {"role": "tool", "tool_call_id": "call_ws_10", "content": AM},
        {"role": "tool", "tool_call_id": "call_fn_11", "content": "Sunny, 21 C"},
    ]
    inter = [
        interaction(
            OAI,
            body(m1, tools=mtools),
            completion(
                "chatcmpl-kimiMixedS4t5U6",
                MIXED,
                "tool_calls",
                {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160},
            ),
        ),
        interaction(
            OAI,
            body(m2, tools=mtools),
            completion(
                "chatcmpl-kimiMixedV7w8X9",
                {
                    "role": "assistant",
                    "content": "A jazz festival opens tomorrow; the weather is sunny, 21 C.",
                    "reasoning_content": "Combine the search and the weather.",
                },
                "stop",
                {"prompt_tokens": 700, "completion_tokens": 30, "total_tokens": 730},
            ),
        ),
    ]
    files["web_search/openai_mixed.yaml"] = render(
        inter,
        (
            "A reply that mixes a client function call with a $web_search call: ChatKimi returns\n"
            "it (the client call as a tool call, the search kept raw); the next request carries\n"
            "the assistant message unchanged, then the $web_search answer (its arguments) and the\n"
            "caller's ToolMessage."
        ),
    )
    t1: list[frames.Json] = [{"role": "user", "content": AQ}]
    t2 = [*t1, {"role": "assistant", "content": BLOCKS}, {"role": "user", "content": AQ2}]
    inter = [
        interaction(ANTH, areq(t1), amsg("msg_01KimiSearchTurnOneQ1w2E3", BLOCKS, AUSAGE)),
        interaction(ANTH, areq(t2), amsg("msg_01KimiSearchTurnTwoR4t5Y6", B2, AUSAGE2)),
        interaction(
            ANTH, areq(t1, True), a_stream("msg_01KimiSearchTurnOneQ1w2E3", BLOCKS, AUSAGE)
        ),
        interaction(ANTH, areq(t2, True), a_stream("msg_01KimiSearchTurnTwoR4t5Y6", B2, AUSAGE2)),
    ]
    files["web_search/anthropic_search.yaml"] = render(
        inter,
        (
            "Server web search on /v1/messages (K3.1), modelled on real Anthropic traffic in\n"
            "tests/fixtures/corpus: thinking, server_tool_use, web_search_tool_result (results with\n"
            "encrypted_content), a second search refused with a web_search_tool_result_error object,\n"
            "then text with a citation. The second turn sends every block back unchanged and in\n"
            "order. Streamed: server_tool_use input arrives as input_json_delta pieces; usage and\n"
            "server_tool_use.web_search_requests in message_delta."
        ),
    )

    return files


if __name__ == "__main__":
    _kit.main(cassettes())
