"""Hypothesis strategies for what a caller can hand ChatKimi: messages of every type with every
kind of content block (LangChain's v0 and v1 blocks, OpenAI and Anthropic native ones, a Responses
`function_call`, garbage dicts and non-dicts), tool calls, tools and tool choices of odd shapes,
and call arguments, valid or not. `tests/unit_tests/model/test_generated_inputs.py` runs them.

Text is mostly ordinary, sometimes holds a lone surrogate (which no UTF-8 body can carry), a NUL,
or characters outside the BMP; a value JSON cannot carry (`object()`, bytes, a set) turns up
where a dict or list may hold anything.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from pydantic import BaseModel

MODELS = ("kimi-k3.1-pro", "kimi-k3.1-pro-highspeed", "kimi-k3")
PROTOCOLS = ("openai", "anthropic")
IDS = ("call_1", "call_2", "toolu_1")
"""Few ids, so that tool results often answer the calls before them."""


class Unserializable:
    """A value JSON cannot carry."""

    def __repr__(self) -> str:
        return "Unserializable()"


plain_texts = st.one_of(st.sampled_from(["hi", "", " ", "é✓ 😀", "\n"]), st.text(max_size=6))
odd_texts = st.sampled_from(["a\ud800b", "\udfff", "x\x00y"])
"""A lone surrogate no UTF-8 body can carry, and a NUL."""
garbage = st.sampled_from(
    [None, 0, 3, -1, 1.5, math.nan, math.inf, True, [], {}, "x", b"x", Unserializable()]
)
"""Values of the wrong type wherever a field takes one."""


def mostly(usual: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually `usual`, one time in five `odd`: most examples get past the first check. (A
    `one_of` listing `usual` four times would not do: hypothesis draws its branches evenly and
    counts a repeated branch once.)"""
    return st.sampled_from((False, False, False, False, True)).flatmap(
        lambda is_odd: odd if is_odd else usual
    )


texts = mostly(plain_texts, odd_texts)
"""Strings a user may pass, lone surrogates included."""
json_values = st.recursive(
    st.one_of(texts, st.integers(-3, 3), st.floats(allow_nan=True), st.none(), st.booleans()),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(texts, inner, max_size=2)),
    max_leaves=4,
)
loose_values = mostly(json_values, garbage)
"""Anything a dict of arguments or a free-form field may hold."""
ids = mostly(st.sampled_from(IDS), st.one_of(garbage, texts))
str_ids = st.one_of(st.sampled_from(IDS), texts, st.none())
urls = st.sampled_from(
    ["https://x.test/a.png", "data:image/png;base64,AAAA", "ftp://x", "", "https://x.test/\ud800"]
)
mimes = st.sampled_from(
    [
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "image/bmp",
        "video/mp4",
        "application/pdf",
        "audio/wav",
        "text/plain",
        "",
        None,
        3,
    ]
)


def _block(kind: str, **fields: Any) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"type": st.just(kind)}, optional=fields)


def _v0(kind: str, source_type: str, value: str, mime: Any, keyed: bool) -> dict[str, Any]:
    """A LangChain v0 data block, usually with the key its source type keeps the value under
    (langchain-core converts v0 blocks before ChatKimi's own code sees them)."""
    key = {"base64": "data", "url": "url", "id": "id", "text": "url"}[source_type]
    block = {"type": kind, "source_type": source_type, "mime_type": mime}
    block[key if keyed else "text"] = value
    return block


blocks = st.one_of(
    _block("text", text=st.one_of(texts, garbage), cache_control=st.just({"type": "ephemeral"})),
    # images: v1, v0, OpenAI, Anthropic
    _block("image", base64=st.sampled_from(["AAAA", "", 3]), mime_type=mimes, url=urls),
    st.builds(
        _v0,
        st.sampled_from(["image", "audio", "file"]),
        st.sampled_from(["base64", "url", "id", "text"]),
        texts,
        mimes,
        mostly(st.just(True), st.just(False)),
    ),
    _block("image_url", image_url=st.one_of(urls, st.fixed_dictionaries({"url": urls}), garbage)),
    _block(
        "image",
        source=st.one_of(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["base64", "url", "file", 3])},
                optional={"media_type": mimes, "data": texts, "url": urls},
            ),
            garbage,
        ),
    ),
    _block("image", file_id=texts),
    # files, audio, video
    _block("file", base64=texts, mime_type=mimes, url=urls, file_id=texts, text=texts),
    _block("text-plain", text=texts, mime_type=mimes),
    _block("audio", base64=texts, mime_type=mimes, url=urls),
    _block(
        "input_audio",
        input_audio=st.one_of(
            st.fixed_dictionaries({"data": texts, "format": st.sampled_from(["wav", "mp3"])}),
            garbage,
        ),
    ),
    _block("video", url=urls, base64=texts, mime_type=mimes),
    _block("video_url", video_url=st.one_of(urls, st.fixed_dictionaries({"url": urls}), garbage)),
    _block("document", source=st.fixed_dictionaries({"type": st.just("text"), "data": texts})),
    # tool calls and their results, native and standard
    _block(
        "tool_use",
        id=ids,
        name=st.one_of(texts, garbage),
        input=loose_values,
        partial_json=st.one_of(texts, st.just('{"a": 1}')),
        tool_input=loose_values,
    ),
    _block(
        "tool_result",
        tool_use_id=ids,
        content=st.one_of(texts, garbage, st.lists(_block("text", text=texts), max_size=2)),
        is_error=st.one_of(st.booleans(), garbage),
    ),
    _block("tool_call", id=ids, name=st.one_of(texts, garbage), args=loose_values),
    _block("tool_call_chunk", id=ids, name=texts, args=texts, index=st.integers(0, 2)),
    _block("invalid_tool_call", id=ids, name=texts, args=texts, error=texts),
    _block(
        "function_call",
        call_id=ids,
        id=ids,
        name=st.one_of(texts, garbage),
        arguments=st.one_of(texts, st.just('{"a": 1}'), garbage),
    ),
    _block(
        "server_tool_use", id=ids, name=st.sampled_from(["web_search", "other"]), input=loose_values
    ),
    _block("web_search_tool_result", tool_use_id=ids, content=loose_values),
    _block("server_tool_call", id=ids, name=texts, args=loose_values),
    _block("server_tool_result", tool_call_id=ids, status=texts, output=loose_values),
    # reasoning in every form
    _block("thinking", thinking=st.one_of(texts, garbage), signature=st.one_of(texts, garbage)),
    _block("redacted_thinking", data=st.one_of(texts, garbage)),
    _block(
        "reasoning",
        reasoning=st.one_of(texts, garbage),
        extras=st.one_of(st.fixed_dictionaries({"signature": texts}), garbage),
        summary=loose_values,
    ),
    _block("non_standard", value=loose_values),
    # garbage
    st.dictionaries(st.sampled_from(["type", "text", "id", "x"]), loose_values, max_size=3),
    _block("made_up_kind", text=texts),
)
"""One content block of any kind."""

contents = st.one_of(
    texts,
    st.lists(st.one_of(blocks, texts), max_size=3),
    st.lists(st.one_of(blocks, garbage), min_size=1, max_size=2),
)
"""A message's content: a string, blocks, or a list with non-dicts in it."""

tool_calls = st.lists(
    st.fixed_dictionaries(
        {"name": texts, "args": st.dictionaries(texts, loose_values, max_size=2), "id": str_ids}
    ),
    max_size=2,
)
"""Tool calls of odd shapes that an `AIMessage` still accepts (name, args dict, id or None)."""
raw_tool_calls = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {
                "id": ids,
                "type": st.sampled_from(["function", "builtin_function", 3]),
                "function": st.one_of(
                    st.fixed_dictionaries(
                        {"name": st.one_of(texts, garbage), "arguments": st.one_of(texts, garbage)}
                    ),
                    garbage,
                ),
            }
        ),
        garbage,
    ),
    max_size=2,
)
additional_kwargs = st.fixed_dictionaries(
    {},
    optional={
        "reasoning_content": st.one_of(texts, garbage),
        "tool_calls": raw_tool_calls,
        "thinking_blocks": st.one_of(st.lists(blocks, max_size=2), garbage),
        "anthropic_blocks": st.one_of(st.lists(blocks, max_size=2), garbage),
        "builtin_rounds": st.one_of(st.lists(loose_values, max_size=2), garbage),
    },
)


def _built(cls: type[BaseMessage], content: Any, **fields: Any) -> BaseMessage:
    """The message with its content set after validation, as code holding a message may do
    (a message class refuses some contents only when it is built)."""
    message = cls(content="", **fields)
    message.content = content
    return message


@st.composite
def _ai(draw: st.DrawFn) -> BaseMessage:
    message = AIMessage(content="", tool_calls=draw(tool_calls))
    # Set afterwards: an AIMessage built with raw `tool_calls` here and no parsed ones reads
    # them, and refuses some shapes itself.
    message.additional_kwargs = draw(additional_kwargs)
    message.content = draw(contents)
    return message


messages = st.one_of(
    st.builds(_built, st.just(HumanMessage), contents),
    st.builds(_built, st.just(HumanMessage), contents),
    _ai(),
    _ai(),
    st.builds(_built, st.just(ToolMessage), contents, tool_call_id=st.sampled_from(IDS)),
    st.builds(_built, st.just(SystemMessage), contents),
    # Rarer: FunctionMessage has no form on either protocol, ChatMessage only some roles.
    mostly(
        st.nothing(),
        st.one_of(
            st.builds(_built, st.just(FunctionMessage), contents, name=st.sampled_from(["f", ""])),
            st.builds(
                _built,
                st.just(ChatMessage),
                contents,
                role=st.sampled_from(["user", "assistant", "system", "tool", "developer", "x"]),
            ),
        ),
    ),
)
histories = st.builds(
    lambda first, rest: [first, *rest],
    st.builds(_built, st.just(HumanMessage), mostly(plain_texts, contents)),
    st.lists(messages, max_size=3),
)
"""Histories of one to four messages, most starting with a plain user message."""


class Weather(BaseModel):
    """Weather for a city."""

    city: str


def get_time(city: str) -> str:
    """Time in a city."""
    return city


_PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}}
usual_tools = st.sampled_from(
    [
        {
            "type": "function",
            "function": {"name": "f", "description": "d", "parameters": _PARAMETERS},
        },
        {"name": "g", "description": "d", "input_schema": _PARAMETERS},
        "web_search",
        {"type": "web_search_20250305", "name": "web_search"},
        Weather,
        get_time,
    ]
)
odd_tools = st.one_of(
    st.fixed_dictionaries(
        {"type": st.one_of(st.just("function"), garbage)},
        optional={
            "function": st.one_of(
                st.fixed_dictionaries(
                    {"name": st.one_of(texts, garbage)},
                    optional={
                        "parameters": loose_values,
                        "description": st.one_of(texts, garbage),
                    },
                ),
                garbage,
            ),
            "name": st.one_of(texts, garbage),
        },
    ),
    st.fixed_dictionaries(
        {"name": st.one_of(texts, garbage)},
        optional={"input_schema": loose_values, "description": st.one_of(texts, garbage)},
    ),
    garbage,
)
usual_tool_choices = st.sampled_from(
    [
        "auto",
        "any",
        "required",
        "none",
        True,
        "f",
        "g",
        "web_search",
        {"type": "function", "function": {"name": "f"}},
        {"type": "tool", "name": "g"},
    ]
)
odd_tool_choices = st.one_of(
    st.sampled_from([False, "nope"]),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["function", "tool", "any", 3]),
            "function": st.fixed_dictionaries({"name": texts}),
            "name": st.one_of(texts, garbage),
        }
    ),
    garbage,
)
usual_response_formats = st.sampled_from(
    [
        {"type": "json_object"},
        {"type": "json_schema", "json_schema": {"name": "w", "schema": _PARAMETERS}},
        Weather,
    ]
)
odd_response_formats = st.one_of(
    st.fixed_dictionaries(
        {"type": st.one_of(texts, garbage)}, optional={"json_schema": loose_values}
    ),
    garbage,
)

call_kwargs = st.fixed_dictionaries(
    {},
    optional={
        "stop": mostly(
            st.lists(plain_texts.filter(bool), max_size=3),
            st.one_of(st.lists(st.one_of(texts, garbage), max_size=6), texts, garbage),
        ),
        "max_tokens": mostly(st.integers(1, 2**20), st.one_of(st.integers(-1, 2**70), garbage)),
        "reasoning_effort": mostly(
            st.sampled_from(["low", "high", "max", "medium", "xhigh", "minimal", "none"]),
            st.one_of(st.just("huge"), garbage),
        ),
        "temperature": mostly(st.sampled_from([1, 0.5, 0.95]), garbage),
        "top_p": mostly(st.sampled_from([0.95, 0.1]), garbage),
        "cache_ttl": mostly(st.sampled_from(["5m", "1h"]), st.one_of(st.just("2h"), garbage)),
        "tools": st.lists(mostly(usual_tools, odd_tools), max_size=3),
        "tool_choice": mostly(usual_tool_choices, odd_tool_choices),
        "parallel_tool_calls": mostly(st.booleans(), garbage),
        "strict": mostly(st.booleans(), garbage),
        "response_format": mostly(usual_response_formats, odd_response_formats),
        "extra_body": mostly(
            st.dictionaries(plain_texts, json_values, max_size=2),
            st.one_of(st.dictionaries(texts, loose_values, max_size=2), garbage),
        ),
    },
)
"""Keyword arguments of one call."""

model_fields = st.fixed_dictionaries(
    {"model": st.sampled_from(MODELS), "protocol": st.sampled_from(PROTOCOLS)},
    optional={
        "stop": mostly(st.lists(plain_texts.filter(bool), max_size=2), st.lists(texts)),
        "max_tokens": mostly(st.integers(1, 2**20), st.one_of(st.integers(-1, 2**21), garbage)),
        "max_builtin_rounds": mostly(st.integers(1, 9), st.one_of(st.integers(-1, 0), garbage)),
        "default_headers": st.dictionaries(
            mostly(st.sampled_from(["X-Team", "X-Proxy-Token"]), st.just("bad header")),
            mostly(st.sampled_from(["t", "Bearer x-0123"]), st.one_of(texts, garbage)),
            max_size=2,
        ),
        "model_kwargs": mostly(st.just({}), st.dictionaries(texts, loose_values, max_size=1)),
    },
)
"""Constructor fields that shape the requests (the model and protocol always)."""
