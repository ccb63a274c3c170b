"""The peers' own unit-test message cases, built by ChatKimi and by the peer on the same protocol
(issue 51 items 11-17), the peers as oracles: langchain-anthropic's `_format_messages` /
`_merge_messages` cases against `ChatAnthropic._get_request_payload`, langchain-openai's
`_convert_message_to_dict` / `_format_message_content` cases against
`ChatOpenAI._get_request_payload` (both offline: no request is sent).

Where Kimi's protocol is the peer's, ChatKimi's messages equal the peer's. Two differences hold
for every case and are taken out before comparing:

- a tool-call turn without reasoning gets `FOREIGN_TURN_REASONING` (docs/reasoning.md): an
  unsigned thinking block first on Messages, `reasoning_content` on Chat Completions;
- Messages: ChatAnthropic writes `is_error: false` on every tool result, the schema's default,
  which ChatKimi leaves out.

Every other difference is named on its case (`why`), with what ChatKimi sends instead
(`adjust`: the peer's messages turned into ours), or the refusal ChatKimi gives before sending.
Every body ChatKimi builds here is valid against the published request schema.
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_openai import ChatOpenAI

from langchain_kimi._contract import FOREIGN_TURN_REASONING
from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import K31_PRO, capabilities
from langchain_kimi.protocols import anthropic_messages, openai_chat
from tools.schema_validation import validate_request

Body = dict[str, Any]
PLACEHOLDER = {"type": "thinking", "thinking": FOREIGN_TURN_REASONING}
JPEG = {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}


@dataclass(frozen=True)
class Case:
    name: str
    messages: Callable[[], list[BaseMessage]]
    why: str = ""
    """The intentional difference, when ChatKimi does not send what the peer sends."""
    adjust: Callable[[Body], None] | None = None
    """Turns the peer's body (`system` / `messages`) into what ChatKimi sends."""
    refused: str | None = None
    """ChatKimi refuses the input before sending (the error's words): the peer sends it."""


# --- ChatOpenAI's Responses API messages (its default mode for reasoning models) -------------

RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "model": "gpt-5",
    "status": "completed",
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "output": [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Look up the weather."}],
            "encrypted_content": "gAAAAB-encrypted",
        },
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "weather in Paris"},
        },
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
            "status": "completed",
        },
    ],
    "usage": {
        "input_tokens": 5,
        "output_tokens": 3,
        "total_tokens": 8,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 1},
    },
}
"""A Responses API reply: reasoning (summary and encrypted content), one of OpenAI's own web
searches, text, a function call."""


def responses_reply(output_version: str | None) -> AIMessage:
    """What ChatOpenAI makes of `RESPONSE` (its SDK over a mock transport, no network)."""
    transport = httpx.MockTransport(lambda _request: httpx.Response(200, json=RESPONSE))
    fields: dict[str, Any] = {} if output_version is None else {"output_version": output_version}
    peer = ChatOpenAI(
        model="gpt-5",
        api_key="sk-test-placeholder",  # type: ignore[arg-type]
        use_responses_api=True,
        http_client=httpx.Client(transport=transport),
        **fields,
    )
    return peer.invoke("Weather in Paris?")


def responses_history(output_version: str | None) -> Callable[[], list[BaseMessage]]:
    def messages() -> list[BaseMessage]:
        return [
            HumanMessage("Weather in Paris?"),
            responses_reply(output_version),
            ToolMessage("18 C", tool_call_id="call_1"),
        ]

    return messages


# --- building both bodies --------------------------------------------------------------------


def _options(protocol: str) -> RequestOptions:
    return RequestOptions(caps=capabilities(K31_PRO, protocol))  # type: ignore[arg-type]


def ours(protocol: str, messages: list[BaseMessage]) -> Body:
    if protocol == "anthropic":
        body = anthropic_messages.build_request(messages, _options(protocol))
    else:
        body = openai_chat.build_request(messages, _options(protocol))
    validate_request(body, protocol, K31_PRO)
    return {k: v for k, v in body.items() if k in ("system", "messages")}


def theirs(protocol: str, messages: list[BaseMessage]) -> Body:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the peers' own notices (hoisted system messages)
        if protocol == "anthropic":
            peer: Any = ChatAnthropic(model="claude-x", api_key="sk-test-placeholder")  # type: ignore[call-arg,arg-type]
        else:
            peer = ChatOpenAI(model="gpt-x", api_key="sk-test-placeholder")  # type: ignore[arg-type]
        payload = peer._get_request_payload(messages)
    return {k: v for k, v in payload.items() if k in ("system", "messages")}


def _without_placeholder(protocol: str, body: Body) -> Body:
    body = copy.deepcopy(body)
    for message in body["messages"]:
        if protocol == "openai":
            if message.get("reasoning_content") == FOREIGN_TURN_REASONING:
                del message["reasoning_content"]
        elif isinstance(message["content"], list):
            message["content"] = [b for b in message["content"] if b != PLACEHOLDER]
    return body


def _without_default_is_error(body: Body) -> Body:
    body = copy.deepcopy(body)
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_result" and block.get("is_error") is False:
                del block["is_error"]
    return body


def turn(body: Body, index: int) -> Any:
    return body["messages"][index]["content"]


def blocks_of(body: Body, kind: str) -> list[dict[str, Any]]:
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == kind
    ]


def drop_key(body: Body, key: str) -> None:
    """Removes `key` from every system block, message and content block."""

    def strip(item: Any) -> None:
        if isinstance(item, dict):
            item.pop(key, None)
            for value in item.values():
                strip(value)
        elif isinstance(item, list):
            for value in item:
                strip(value)

    strip(body)


# --- langchain-anthropic's cases ---------------------------------------------------------------


def _tool_call(call_id: str, name: str = "bar", **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args or {"baz": "buzz"}, "id": call_id, "type": "tool_call"}


def merge_messages_legacy_tool_input() -> list[BaseMessage]:
    legacy = [
        {"tool_input": {"a": "b"}, "type": "tool_use", "id": "1", "text": None, "name": "buz"},
        {"tool_input": {"a": "c"}, "type": "tool_use", "id": "2", "text": None, "name": "blah"},
        {"tool_input": {"a": "c"}, "type": "tool_use", "id": "3", "text": None, "name": "blah"},
    ]
    return [
        SystemMessage("foo"),
        HumanMessage("bar"),
        AIMessage(
            [
                {"text": "baz", "type": "text"},
                legacy[0],
                {"text": "baz", "type": "text"},
                legacy[1],
                legacy[2],
            ]
        ),
        ToolMessage("buz output", tool_call_id="1", status="error"),
        ToolMessage([{"type": "image", "source": JPEG}], tool_call_id="2"),
        ToolMessage([], tool_call_id="3"),
        HumanMessage("next thing"),
    ]


def _legacy_inputs_kept(body: Body) -> None:
    uses = blocks_of(body, "tool_use")
    for use, arguments in zip(uses, ({"a": "b"}, {"a": "c"}, {"a": "c"}), strict=True):
        use["input"] = arguments  # ChatAnthropic sends {}: the arguments were lost
    for result in blocks_of(body, "tool_result"):
        if result["content"] == []:
            result["content"] = ""


def tool_message_holding_tool_results() -> list[BaseMessage]:
    return [
        HumanMessage("Run both."),
        AIMessage("", tool_calls=[_tool_call("1"), _tool_call("2")]),
        ToolMessage("buz output", tool_call_id="1"),
        ToolMessage(
            [{"type": "tool_result", "content": "blah output", "tool_use_id": "2"}],
            tool_call_id="2",
        ),
    ]


def tool_calls_with_empty_contents(orphan: bool) -> Callable[[], list[BaseMessage]]:
    def messages() -> list[BaseMessage]:
        history: list[BaseMessage] = [
            SystemMessage("fuzz"),
            HumanMessage("foo"),
            AIMessage("", tool_calls=[_tool_call("1")]),
            ToolMessage("blurb", tool_call_id="1"),
            AIMessage([], tool_calls=[_tool_call("2")]),
            ToolMessage(
                [{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}}],
                tool_call_id="2",
            ),
        ]
        if orphan:  # the peer's case answers a call "3" that no message made
            history.append(ToolMessage([{"type": "image", "source": JPEG}], tool_call_id="3"))
        return history

    return messages


def _last_dropped(body: Body) -> None:
    body["messages"].pop()


def _users_merged(body: Body) -> None:
    first, second = body["messages"]
    body["messages"] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": first["content"]},
                {"type": "text", "text": second["content"]},
            ],
        }
    ]


def tool_use_with_partial_json() -> list[BaseMessage]:
    return [
        AIMessage(
            [
                {"type": "tool_use", "name": "foo_1", "id": "1", "input": {"bar_1": "baz_1"}},
                {
                    "type": "tool_use",
                    "name": "foo_2",
                    "id": "2",
                    "input": {},
                    "partial_json": '{"bar_2": "baz_2"}',
                    "index": 1,
                },
            ]
        )
    ]


def content_and_tool_calls(
    content: Any, block_input: Any = None
) -> Callable[[], list[BaseMessage]]:
    def messages() -> list[BaseMessage]:
        blocks = copy.deepcopy(content)
        if block_input is not None:
            blocks.append({"type": "tool_use", "name": "bar", "id": "1", "input": block_input})
        return [
            SystemMessage("fuzz"),
            HumanMessage("foo"),
            AIMessage(blocks, tool_calls=[_tool_call("1", baz="BUZZ")]),
            ToolMessage("blurb", tool_call_id="1"),
        ]

    return messages


def cache_control_blocks() -> list[BaseMessage]:
    cached = {"type": "text", "text": "foo", "cache_control": {"type": "ephemeral"}}
    return [
        SystemMessage([dict(cached)]),
        HumanMessage([dict(cached), {"type": "text", "text": "foo"}]),
    ]


def _cache_control_dropped(body: Body) -> None:
    drop_key(body, "cache_control")


def data_block(block: dict[str, Any]) -> Callable[[], list[BaseMessage]]:
    def messages() -> list[BaseMessage]:
        return [HumanMessage([{"type": "text", "text": "Summarize this:"}, dict(block)])]

    return messages


def openai_image_format() -> list[BaseMessage]:
    return [
        HumanMessage(
            [
                {"type": "text", "text": "Can you highlight the differences?"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/b.png"}},
            ]
        )
    ]


def multiple_system() -> list[BaseMessage]:
    return [
        HumanMessage("baz"),
        SystemMessage("bar"),
        SystemMessage("baz"),
        SystemMessage([{"type": "text", "text": "foo", "cache_control": {"type": "ephemeral"}}]),
    ]


def reasoning_turn(*blocks: dict[str, Any], provider: str | None = None) -> Callable[[], Any]:
    def messages() -> list[BaseMessage]:
        metadata = {"model_provider": provider} if provider else {}
        return [
            HumanMessage("hi"),
            AIMessage(
                [*copy.deepcopy(blocks), {"type": "text", "text": "yo"}], response_metadata=metadata
            ),
            HumanMessage("again"),
        ]

    return messages


def _redacted_dropped(body: Body) -> None:
    body["messages"][1]["content"] = [b for b in turn(body, 1) if b["type"] != "redacted_thinking"]


OPENAI_SEARCH = {"web_search_call", "server_tool_call", "server_tool_result"}


def _summary_as_thinking(body: Body) -> None:
    content = [b for b in turn(body, 1) if b["type"] not in OPENAI_SEARCH]
    body["messages"][1]["content"] = [
        {"type": "thinking", "thinking": "Look up the weather."},
        *content,
    ]


SIGNED = {"type": "thinking", "thinking": "Say hi.", "signature": "c2lnbmF0dXJl"}

ANTHROPIC_CASES = [
    Case(
        "merge_messages: legacy tool_use blocks with tool_input",
        merge_messages_legacy_tool_input,
        why="the legacy block's arguments are sent as its `input` (ChatAnthropic sends `{}`, "
        "losing them; 000 requires `input`); an empty tool result is the empty string (the "
        "same as ChatAnthropic's `[]`, and kimi-k3's tool_result content is a string only)",
        adjust=_legacy_inputs_kept,
    ),
    Case(
        "merge_messages: a ToolMessage holding tool_result blocks",
        tool_message_holding_tool_results,
    ),
    Case("format_messages_with_tool_calls", tool_calls_with_empty_contents(orphan=False)),
    Case(
        "format_messages_with_tool_calls: a result answering no call",
        tool_calls_with_empty_contents(orphan=True),
        why="a tool result answering no tool_use of the history is refused before sending",
        refused="matches no tool call",
    ),
    Case(
        "format_messages: an empty assistant message last",
        lambda: [HumanMessage("foo"), AIMessage("")],
        why="an empty assistant turn is not sent (the gateway rejects empty text blocks; "
        "ChatAnthropic keeps a last one as a prefill)",
        adjust=_last_dropped,
    ),
    Case(
        "format_messages: an empty assistant message between two user turns",
        lambda: [HumanMessage("foo"), AIMessage([]), HumanMessage("foo")],
        why="the empty turn is dropped and the two user turns become one (the protocol "
        "alternates roles; ChatAnthropic sends two user turns in a row)",
        adjust=_users_merged,
    ),
    Case("format_tool_use_block: arguments only in partial_json", tool_use_with_partial_json),
    Case("format_messages: str content and tool_calls", content_and_tool_calls("thought")),
    Case(
        "format_messages: list content and tool_calls",
        content_and_tool_calls([{"type": "text", "text": "thought"}]),
    ),
    Case(
        "format_messages: tool_use blocks and tool_calls (tool_calls win)",
        content_and_tool_calls([{"type": "text", "text": "thought"}], {"baz": "NOT_BUZZ"}),
    ),
    Case(
        "format_messages: cache_control on blocks",
        cache_control_blocks,
        why="block-level cache_control is not sent: Kimi sets the cache TTL with the "
        "top-level cache_control only (000, CreateMessageRequest.cache_control)",
        adjust=_cache_control_dropped,
    ),
    Case(
        "format_messages: a v0 base64 PDF file block",
        data_block(
            {"type": "file", "source_type": "base64", "mime_type": "application/pdf", "data": "JV"}
        ),
        why="file parts are refused: the Kimi documents have no document block",
        refused="unsupported content block type 'file'",
    ),
    Case(
        "format_messages_with_citations: a v0 text file block",
        data_block(
            {
                "type": "file",
                "source_type": "text",
                "text": "The grass is green.",
                "mime_type": "text/plain",
            }
        ),
        why="file parts are refused: the Kimi documents have no document block",
        refused="unsupported content block type 'file'",
    ),
    Case("format_messages_openai_image_format", openai_image_format),
    Case(
        "format_messages_with_multiple_system",
        multiple_system,
        why="block-level cache_control is not sent (see the cache_control case)",
        adjust=_cache_control_dropped,
    ),
    Case(
        "a signed thinking block from ChatAnthropic", reasoning_turn(SIGNED, provider="anthropic")
    ),
    Case(
        "a redacted_thinking block from ChatAnthropic",
        reasoning_turn({"type": "redacted_thinking", "data": "opaque"}, provider="anthropic"),
        why="Claude's encrypted reasoning is not sent: the Kimi documents have no such block",
        adjust=_redacted_dropped,
    ),
    Case(
        "a v1 reasoning block with no text", reasoning_turn({"type": "reasoning", "reasoning": ""})
    ),
    Case(
        "ChatOpenAI Responses API reply (responses/v1)",
        responses_history(None),
        why="the reasoning summary is the turn's reasoning: sent as an unsigned thinking "
        "block (ChatAnthropic drops reasoning it did not sign); OpenAI's own web search "
        "is left out, with a warning (ChatAnthropic sends the item as it is, which no "
        "Messages document knows)",
        adjust=_summary_as_thinking,
    ),
    Case(
        "ChatOpenAI Responses API reply (v1)",
        responses_history("v1"),
        why="as in the responses/v1 form",
        adjust=_summary_as_thinking,
    ),
    Case("ChatOpenAI Responses API reply (v0)", responses_history("v0")),
]


# --- langchain-openai's cases ------------------------------------------------------------------


def _named_dropped(body: Body) -> None:
    for message in body["messages"]:
        message.pop("name", None)


def _developer_as_system(body: Body) -> None:
    body["messages"][0]["role"] = "system"


def raw_tool_calls(malformed: bool) -> Callable[[], list[BaseMessage]]:
    good = {
        "id": "call_abc123",
        "function": {
            "arguments": '{"name": "Sally", "hair_color": "green"}',
            "name": "GenerateUsername",
        },
        "type": "function",
    }
    bad = {
        "id": "call_wm0JY6CdwOMZ4eTxHWUThDNz",
        "function": {"arguments": "oops", "name": "GenerateUsername"},
        "type": "function",
    }

    def messages() -> list[BaseMessage]:
        raw = [bad, good] if malformed else [good]
        # As langchain-openai parses such a message: valid and invalid calls, raw kept.
        from langchain_openai.chat_models.base import _convert_dict_to_message

        reply = _convert_dict_to_message({"role": "assistant", "content": None, "tool_calls": raw})
        answers = [ToolMessage("ok", tool_call_id=call["id"]) for call in raw]
        return [HumanMessage("Make a username."), reply, *answers]

    return messages


def _detail_dropped(body: Body) -> None:
    drop_key(body, "detail")


def _responses_summary(body: Body) -> None:
    body["messages"][1]["reasoning_content"] = "Look up the weather."
    body["messages"][1]["content"] = "Checking."


def _partial_json_call(body: Body) -> None:
    body["messages"][0]["content"] = None
    body["messages"][0]["tool_calls"] = [
        {
            "id": "1",
            "type": "function",
            "function": {"name": "foo_1", "arguments": '{"bar_1": "baz_1"}'},
        },
        {
            "id": "2",
            "type": "function",
            "function": {"name": "foo_2", "arguments": '{"bar_2": "baz_2"}'},
        },
    ]


def _named(message_type: type[BaseMessage]) -> Callable[[], list[BaseMessage]]:
    def messages() -> list[BaseMessage]:
        named = message_type(content="foo", name="test")
        return [named] if message_type is not AIMessage else [HumanMessage("hi"), named]

    return messages


NAME_WHY = (
    "a message's `name` is not sent: 004's ChatMessage has role, content, reasoning_content, "
    "tool_calls and tool_call_id only (a warning says so once)"
)

OPENAI_CASES = [
    Case("convert_message_to_dict: human", lambda: [HumanMessage("foo")]),
    Case(
        "convert_message_to_dict: human with name",
        _named(HumanMessage),
        why=NAME_WHY,
        adjust=_named_dropped,
    ),
    Case("convert_message_to_dict: ai", lambda: [HumanMessage("hi"), AIMessage("foo")]),
    Case(
        "convert_message_to_dict: ai with name",
        _named(AIMessage),
        why=NAME_WHY,
        adjust=_named_dropped,
    ),
    Case("convert_message_to_dict: system", lambda: [SystemMessage("foo")]),
    Case(
        "convert_message_to_dict: system with name",
        _named(SystemMessage),
        why=NAME_WHY,
        adjust=_named_dropped,
    ),
    Case(
        "convert_message_to_dict: developer",
        lambda: [SystemMessage("foo", additional_kwargs={"__openai_role__": "developer"})],
        why="sent as system: 004's roles are system, user, assistant and tool",
        adjust=_developer_as_system,
    ),
    Case("convert_message_to_dict: tool call", raw_tool_calls(malformed=False)),
    Case("convert_message_to_dict: malformed tool call", raw_tool_calls(malformed=True)),
    Case(
        "format_message_content: image_url with detail",
        lambda: [
            HumanMessage(
                [
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64,iVBOR", "detail": "auto"},
                    }
                ]
            )
        ],
        why="`detail` is not sent: 004's image part has `url` only (docs/multimodal.md)",
        adjust=_detail_dropped,
    ),
    Case(
        "format_message_content: a v1 base64 image block",
        lambda: [HumanMessage([{"type": "image", "base64": "iVBOR", "mime_type": "image/png"}])],
    ),
    Case(
        "ChatOpenAI Responses API reply (responses/v1)",
        responses_history(None),
        why="the reasoning summary is sent as the turn's reasoning_content and the text as a "
        "string; OpenAI's own web search is left out, with a warning (ChatOpenAI sends the "
        "v1 blocks of it as content parts, which 004 does not know)",
        adjust=_responses_summary,
    ),
    Case(
        "ChatOpenAI Responses API reply (v1)",
        responses_history("v1"),
        why="the reasoning summary is sent as the turn's reasoning_content",
        adjust=_responses_summary,
    ),
    Case(
        "format_tool_use_block on Chat Completions: arguments only in partial_json",
        tool_use_with_partial_json,
        why="the calls the tool_use blocks hold are sent (ChatOpenAI drops tool_use blocks "
        "of a message without tool_calls)",
        adjust=_partial_json_call,
    ),
]


def _check(protocol: str, case: Case) -> None:
    if case.refused is not None:
        with pytest.raises(ValueError, match=case.refused):
            ours(protocol, case.messages())
        theirs(protocol, case.messages())  # the peer sends it
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the once-per-process notices have their own tests
        mine = _without_placeholder(protocol, ours(protocol, case.messages()))
    peer = theirs(protocol, case.messages())
    if protocol == "anthropic":
        peer = _without_default_is_error(peer)
    if case.adjust is None:
        assert mine == peer
        return
    assert mine != peer, f"no difference left to explain: {case.why}"
    case.adjust(peer)
    assert mine == peer


@pytest.mark.parametrize("case", ANTHROPIC_CASES, ids=lambda c: c.name)
def test_messages_body_as_chat_anthropic_builds_it(case: Case) -> None:
    _check("anthropic", case)


@pytest.mark.parametrize("case", OPENAI_CASES, ids=lambda c: c.name)
def test_chat_completions_body_as_chat_openai_builds_it(case: Case) -> None:
    _check("openai", case)


def test_every_difference_says_why() -> None:
    for case in ANTHROPIC_CASES + OPENAI_CASES:
        assert bool(case.why) == (case.adjust is not None or case.refused is not None), case.name


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_responses_forms_of_one_reply_build_one_body(protocol: str) -> None:
    """ChatOpenAI's responses/v1 and v1 forms of the same reply are the same turn for Kimi."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bodies = [ours(protocol, responses_history(v)()) for v in (None, "responses/v1", "v1")]
    assert bodies[0] == bodies[1] == bodies[2]
    assert json.dumps(bodies[0]).count("call_1") == 2  # the call and its answer
