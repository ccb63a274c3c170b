"""The Chat Completions `$web_search` loop at the ChatKimi boundary (issue 11 items 3, 8, 9).

000 documents `max_uses` for the web search tool: "Máximo de búsquedas permitidas en esta
respuesta"; 004's `{"type": "web_search"}` has no such field, but ChatKimi runs the loop, so it
honours the cap itself. `.partial` of an error holds everything the caller saw, all rounds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage

from langchain_kimi import ChatKimi, KimiAPIError, KimiStreamError
from langchain_kimi._request.profiles import K3, K31_PRO
from langchain_kimi.protocols.openai_chat.web_search import SEARCH_LIMIT_REACHED
from tests.support.web_search_rounds import (
    FINAL,
    FINAL_USAGE,
    MODEL,
    as_body,
    as_stream,
    search_round,
    usage,
)


def serve(replies: list[tuple[dict[str, Any], str]]) -> tuple[httpx.MockTransport, list[Any]]:
    """Answers the n-th request with the n-th (JSON body, SSE text) reply; records bodies."""
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        json_reply, sse = replies[len(sent)]
        sent.append(body)
        if body.get("stream"):
            return httpx.Response(
                200, content=sse.encode(), headers={"content-type": "text/event-stream"}
            )
        return httpx.Response(200, json=json_reply)

    return httpx.MockTransport(handler), sent


def loop_replies(rounds: int, calls_per_round: int = 1) -> list[tuple[dict[str, Any], str]]:
    replies = []
    for n in range(rounds):
        message, usage = search_round(n)
        if calls_per_round > 1:
            first = message["tool_calls"][0]
            message["tool_calls"] = [
                {**first, "id": f"{first['id']}-{i}"} for i in range(calls_per_round)
            ]
        replies.append(
            (as_body(message, usage, "tool_calls", n), as_stream(message, usage, "tool_calls", n))
        )
    replies.append(
        (as_body(FINAL, FINAL_USAGE, "stop", rounds), as_stream(FINAL, FINAL_USAGE, "stop", rounds))
    )
    return replies


def model_for(transport: httpx.MockTransport, **kwargs: Any) -> Any:
    chat = ChatKimi(
        model=MODEL,
        http_client=httpx.Client(transport=transport),
        max_retries=0,
    )
    return chat.bind_tools([{"type": "web_search", **kwargs}])


def run(style: str, chat: Any) -> AIMessage:
    if style == "invoke":
        result: AIMessage = chat.invoke("What is Kimi's homepage?")
        return result
    total: Any = None
    for chunk in chat.stream("What is Kimi's homepage?"):
        total = chunk if total is None else total + chunk
    return total  # type: ignore[no-any-return]


STYLES = ["invoke", "stream"]


@pytest.mark.parametrize("style", STYLES)
def test_raw_usage_of_every_round_adds_up(style: str) -> None:
    transport, _ = serve(loop_replies(2))
    message = run(style, model_for(transport))
    token_usage = message.response_metadata["token_usage"]
    # 100+200 (two search rounds) + 400 (the answer); nested details add up the same way.
    assert token_usage["prompt_tokens"] == 700
    assert token_usage["prompt_tokens_details"]["cached_tokens"] == 50 + 100 + 200
    assert message.usage_metadata is not None
    assert message.usage_metadata["input_tokens"] == token_usage["prompt_tokens"]


@pytest.mark.parametrize("style", STYLES)
def test_max_uses_caps_searches_on_chat_completions(style: str) -> None:
    # Two rounds of two calls each = four searches asked for; the caller allows three.
    transport, sent = serve(loop_replies(2, calls_per_round=2))
    message = run(style, model_for(transport, max_uses=3))
    assert len(sent) == 3
    assert "max_uses" not in json.dumps(sent[0]["tools"])  # 004's tool has only `type`
    answers = [m for m in sent[-1]["messages"] if m["role"] == "tool"]
    assert len(answers) == 4
    echoed = [a for a in answers if a["content"] != SEARCH_LIMIT_REACHED]
    assert len(echoed) == 3  # only three searches run: their arguments echoed
    assert all(json.loads(a["content"])["search_result"] for a in echoed)
    assert answers[-1]["content"] == SEARCH_LIMIT_REACHED
    assert message.response_metadata["server_tool_use"] == {"web_search_requests": 3}
    assert message.response_metadata["web_search_limit"] == {"max_uses": 3, "declined": 1}
    # Replaying the reply sends what was sent, declined answer included.
    rounds = message.additional_kwargs["builtin_rounds"]
    assert [m["content"] for m in rounds if m["role"] == "tool"] == [a["content"] for a in answers]


@pytest.mark.parametrize("style", STYLES)
def test_under_the_cap_nothing_is_declined(style: str) -> None:
    transport, sent = serve(loop_replies(2))
    message = run(style, model_for(transport, max_uses=5))
    answers = [m for m in sent[-1]["messages"] if m["role"] == "tool"]
    assert SEARCH_LIMIT_REACHED not in [a["content"] for a in answers]
    assert "web_search_limit" not in message.response_metadata
    assert message.response_metadata["server_tool_use"] == {"web_search_requests": 2}


def cut_after_reasoning(sse: str) -> str:
    """The first two events of a round (reasoning only), then the connection ends."""
    return "".join(sse.split("\n\n")[i] + "\n\n" for i in range(2))


@pytest.mark.parametrize("cut", [cut_after_reasoning])
def test_partial_holds_every_round_seen(cut: Callable[[str], str]) -> None:
    replies = loop_replies(1)
    replies[1] = (replies[1][0], cut(replies[1][1]))
    transport, _ = serve(replies)
    seen: list[Any] = []

    def consume() -> None:
        seen.extend(model_for(transport).stream("What is Kimi's homepage?"))

    with pytest.raises(KimiStreamError) as caught:
        consume()
    partial = caught.value.partial
    total = seen[0]
    for chunk in seen[1:]:
        total = total + chunk
    # The first round's reasoning and search are still there, then what the second round sent.
    assert (
        partial.additional_kwargs["reasoning_content"]
        == total.additional_kwargs["reasoning_content"]
    )
    assert partial.additional_kwargs["reasoning_content"].startswith("Round 0: search. ")
    assert partial.additional_kwargs["builtin_rounds"][0]["tool_calls"][0]["id"] == "ws-0"
    assert partial.response_metadata["server_tool_use"] == {"web_search_requests": 1}


# --- after the cap (issue 21 item 5) ------------------------------------------------------
# Searches beyond `max_uses` are answered with SEARCH_LIMIT_REACHED (a stand-in 004 does not
# document: a live question) and are not run; every request after the cap is still billed, so once
# the cap is reached the next request no longer offers `$web_search`, and its reply is the answer.


def _declares_search(body: dict[str, Any]) -> bool:
    return any(tool.get("type") == "web_search" for tool in body.get("tools", []))


def keeps_searching(rounds: int) -> list[tuple[dict[str, Any], str]]:
    """A model that asks for a search in every reply (`rounds` of them, then an answer)."""
    return loop_replies(rounds)


@pytest.mark.parametrize("style", STYLES)
def test_after_the_cap_the_search_is_not_offered_again(style: str) -> None:
    transport, sent = serve(loop_replies(2, calls_per_round=2))
    message = run(style, model_for(transport, max_uses=3))
    assert [_declares_search(body) for body in sent] == [True, True, False]
    assert "tools" not in sent[-1]  # the search was the only tool
    assert message.content == FINAL["content"]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("max_uses", [1, 2])
def test_a_model_that_keeps_searching_costs_one_round_beyond_the_cap(
    style: str, max_uses: int
) -> None:
    transport, sent = serve(keeps_searching(6))
    message = run(style, model_for(transport, max_uses=max_uses))
    assert len(sent) == max_uses + 1  # the searches, then one request without the search
    assert [_declares_search(body) for body in sent] == [True] * max_uses + [False]
    meta = message.response_metadata
    assert meta["server_tool_use"] == {"web_search_requests": max_uses}
    # The last reply asked for one more search, which was not offered and is not run.
    assert meta["web_search_limit"] == {"max_uses": max_uses, "declined": 1}
    assert meta["finish_reason"] == "tool_calls"
    assert "tool_calls" not in message.additional_kwargs  # nothing a replay would run later
    assert message.tool_calls == []
    assert message.additional_kwargs["reasoning_content"].endswith(f"Round {max_uses}: search. ")


@pytest.mark.parametrize("style", STYLES)
def test_reaching_the_cap_exactly_is_said_too(style: str) -> None:
    transport, sent = serve(loop_replies(2))
    message = run(style, model_for(transport, max_uses=2))
    assert [_declares_search(body) for body in sent] == [True, True, False]
    assert message.response_metadata["web_search_limit"] == {"max_uses": 2, "declined": 0}
    assert message.content == FINAL["content"]


@pytest.mark.parametrize("style", STYLES)
def test_equal_counts_of_different_rounds_add_up_too(style: str) -> None:
    """langchain-core's `merge_dicts` keeps one of two equal numbers: every round here reports
    20 completion and 15 reasoning tokens, and all of them count."""
    replies = loop_replies(2)
    replies[-1] = (
        as_body(FINAL, usage(400, 20, 15), "stop", 2),
        as_stream(FINAL, usage(400, 20, 15), "stop", 2),
    )
    transport, _ = serve(replies)
    message = run(style, model_for(transport))
    token_usage = message.response_metadata["token_usage"]
    assert token_usage["completion_tokens"] == 60
    assert token_usage["completion_tokens_details"] == {"reasoning_tokens": 45}
    assert token_usage["total_tokens"] == 120 + 220 + 420
    assert message.usage_metadata is not None
    assert message.usage_metadata["output_tokens"] == token_usage["completion_tokens"]


def _lookup_tool() -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a word up.",
            "parameters": {"type": "object", "properties": {"word": {"type": "string"}}},
        },
    }


@pytest.mark.parametrize("style", STYLES)
def test_after_the_cap_only_the_search_leaves_the_other_tools_stay(style: str) -> None:
    transport, sent = serve(loop_replies(1))
    chat = ChatKimi(model=MODEL, http_client=httpx.Client(transport=transport), max_retries=0)
    tools = [{"type": "web_search", "max_uses": 1}, _lookup_tool()]
    message = run(style, chat.bind_tools(tools, tool_choice="auto"))
    assert [_declares_search(body) for body in sent] == [True, False]
    assert sent[-1]["tools"] == [_lookup_tool()]
    assert sent[-1]["tool_choice"] == "auto"
    assert message.content == FINAL["content"]


@pytest.mark.parametrize("style", STYLES)
def test_after_the_cap_a_tool_choice_leaves_with_the_last_tool(style: str) -> None:
    transport, sent = serve(loop_replies(1))
    chat = ChatKimi(model=MODEL, http_client=httpx.Client(transport=transport), max_retries=0)
    run(style, chat.bind_tools([{"type": "web_search", "max_uses": 1}], tool_choice="auto"))
    assert sent[0]["tool_choice"] == "auto"
    assert "tools" not in sent[-1]
    assert "tool_choice" not in sent[-1], "a tool_choice without tools would be refused"


@pytest.mark.parametrize("style", STYLES)
def test_one_logical_reply_has_the_first_rounds_id(style: str) -> None:
    transport, _ = serve(loop_replies(2))
    message = run(style, model_for(transport))
    assert message.id == "chatcmpl-0"
    assert message.response_metadata["id"] == "chatcmpl-0"


def _served_by(
    replies: list[tuple[dict[str, Any], str]], served: str, cache_writes: int
) -> list[tuple[dict[str, Any], str]]:
    """`replies` as a service naming the model `served` would send them, each reporting
    `cache_writes` cache-write tokens."""
    out = []
    for body, sse in replies:
        raw_usage = body["usage"]
        written = {
            **raw_usage,
            "prompt_tokens_details": {
                **raw_usage["prompt_tokens_details"],
                "cache_write_tokens": cache_writes,
            },
        }
        old, new = (
            json.dumps(raw_usage, separators=(",", ":")),
            json.dumps(written, separators=(",", ":")),
        )
        assert old in sse
        sse = sse.replace(old, new).replace(f'"model":"{MODEL}"', f'"model":"{served}"')
        out.append(({**body, "model": served, "usage": written}, sse))
    return out


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(
    ("requested", "served", "apart"),
    [
        # 004: kimi-k3 bills cache writes as plain input; K3.1 apart. The reply's model decides
        # when it names a known family, else the requested one does -- in every round.
        (K31_PRO, K31_PRO, True),
        (K31_PRO, K3, False),
        (K3, "gateway-alias", False),
    ],
)
def test_cache_writes_of_every_round_follow_the_model_that_bills_them(
    style: str, requested: str, served: str, apart: bool
) -> None:
    transport, _ = serve(_served_by(loop_replies(2), served, cache_writes=7))
    chat = ChatKimi(model=requested, http_client=httpx.Client(transport=transport), max_retries=0)
    message = run(style, chat.bind_tools([{"type": "web_search"}]))
    assert message.usage_metadata is not None
    details = message.usage_metadata.get("input_token_details") or {}
    if apart:
        assert details.get("cache_creation") == 3 * 7
    else:
        assert "cache_creation" not in details


@pytest.mark.parametrize("style", STYLES)
def test_a_search_round_without_usage_adds_none(style: str) -> None:
    replies = loop_replies(1)
    body, sse = replies[0]
    old = json.dumps(body["usage"], separators=(",", ":"))
    lines = [line for line in sse.split("\n\n") if old not in line]
    replies[0] = ({k: v for k, v in body.items() if k != "usage"}, "\n\n".join(lines))
    transport, _ = serve(replies)
    message = run(style, model_for(transport))
    assert message.usage_metadata is not None
    assert message.usage_metadata["input_tokens"] == FINAL_USAGE["prompt_tokens"]
    assert message.response_metadata["token_usage"]["prompt_tokens"] == FINAL_USAGE["prompt_tokens"]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("max_rounds", [1, 2])
def test_max_builtin_rounds_ends_a_loop_that_never_answers(style: str, max_rounds: int) -> None:
    transport, sent = serve(keeps_searching(4))
    chat = ChatKimi(
        model=MODEL,
        http_client=httpx.Client(transport=transport),
        max_retries=0,
        max_builtin_rounds=max_rounds,
    )
    with pytest.raises(KimiAPIError) as caught:
        run(style, chat.bind_tools([{"type": "web_search"}]))
    assert len(sent) == max_rounds + 1  # `max_rounds` follow-ups were sent, no more
    assert str(caught.value) == (
        "the built-in web search did not produce an answer within "
        f"max_builtin_rounds={max_rounds} rounds; raise max_builtin_rounds or narrow the question"
    )


@pytest.mark.parametrize("style", STYLES)
def test_searches_in_a_last_reply_with_client_calls_are_counted(style: str) -> None:
    """A reply mixing `$web_search` with client calls ends the loop (the client answers later);
    its searches count in `server_tool_use` with the earlier rounds'."""
    replies = loop_replies(1)
    mixed, mixed_usage = search_round(1)
    client = {"id": "c-1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    mixed["tool_calls"] = [*mixed["tool_calls"], client]
    replies[-1] = (
        as_body(mixed, mixed_usage, "tool_calls", 1),
        as_stream(mixed, mixed_usage, "tool_calls", 1),
    )
    transport, _ = serve(replies)
    chat = ChatKimi(model=MODEL, http_client=httpx.Client(transport=transport), max_retries=0)
    message = run(style, chat.bind_tools([{"type": "web_search"}, _lookup_tool()]))
    assert [call["name"] for call in message.tool_calls] == ["lookup"]
    assert message.response_metadata["server_tool_use"] == {"web_search_requests": 2}
