"""Chat Completions `$web_search` rounds for tests: the assistant message and usage of search
round n, the final answer, and either as a reply body or as the event stream that carries it
(built with `langchain_kimi.testing.frames`, the fake gateway's pieces)."""

from __future__ import annotations

import json
from typing import Any

from langchain_kimi._request.profiles import K31_PRO
from langchain_kimi.testing import frames

MODEL = K31_PRO


def search_call(n: int) -> dict[str, Any]:
    arguments = json.dumps({"search_result": {"search_id": f"s-{n}"}, "usage": {"total_tokens": 9}})
    return {
        "id": f"ws-{n}",
        "type": "builtin_function",
        "function": {"name": "$web_search", "arguments": arguments},
    }


def usage(prompt: int, completion: int, reasoning: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": prompt // 2},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def search_round(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(raw assistant message, its usage) of search round n."""
    message = {
        "role": "assistant",
        "content": None,
        "reasoning_content": f"Round {n}: search. ",
        "tool_calls": [search_call(n)],
    }
    return message, usage(100 * (n + 1), 20, 15)


FINAL = {
    "role": "assistant",
    "content": "Kimi's homepage is https://www.kimi.com.",
    "reasoning_content": "Found it.",
}
FINAL_USAGE = usage(400, 30, 10)


def as_body(message: dict[str, Any], usage_: dict[str, Any], finish: str, n: int) -> dict[str, Any]:
    return frames.openai_completion(f"chatcmpl-{n}", MODEL, message, finish, usage_)


def as_stream(message: dict[str, Any], usage_: dict[str, Any], finish: str, n: int) -> str:
    """The round as a stream, each text and argument string cut in two deltas."""

    def event(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return frames.openai_chunk(f"chatcmpl-{n}", MODEL, delta, finish_reason)

    reasoning = message["reasoning_content"]
    parts = [
        event({"role": "assistant", "reasoning_content": reasoning[:5]}),
        event({"reasoning_content": reasoning[5:]}),
    ]
    if message.get("content"):
        text = message["content"]
        parts += [event({"content": text[:10]}), event({"content": text[10:]})]
    for index, call in enumerate(message.get("tool_calls") or []):
        args = call["function"]["arguments"]
        first = {**call, "function": {"name": call["function"]["name"], "arguments": args[:7]}}
        parts += [
            event({"tool_calls": [{"index": index, **first}]}),
            event({"tool_calls": [{"index": index, "function": {"arguments": args[7:]}}]}),
        ]
    parts.append(event({}, finish))
    parts.append(frames.openai_usage_chunk(f"chatcmpl-{n}", MODEL, usage_))
    return frames.frame_openai(parts)
