"""LangChain v0 data blocks langchain-core cannot read get ChatKimi's own refusal (issue 51
item 16), on every call path, before anything is sent.

langchain-core turns v0 data blocks (`{"type": "image" | "audio" | "file", "source_type": ...}`)
into v1 blocks before a chat model's hooks run, and reads one key per source type unguarded. A
v0 text file keeps its text in `text` (as langchain-anthropic's own tests write it), but
langchain-core reads `url` for it: `KeyError: 'url'` from inside langchain-core. ChatKimi refuses
file parts anyway (text, image and video only): the block now gets that refusal.
"""

from __future__ import annotations

import asyncio
import operator
import re
from collections.abc import Callable
from functools import reduce
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from langchain_kimi._langchain.unreadable_blocks import refuse_unreadable_blocks
from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import K31_PRO, capabilities
from langchain_kimi.protocols.openai_chat import build_request
from langchain_kimi.testing import FakeKimiGateway

TEXT_FILE = {
    "type": "file",
    "source_type": "text",
    "text": "The grass is green.",
    "mime_type": "text/plain",
}
FILE_REFUSAL = "unsupported content block type 'file' (text, image and video only)"


def _history(block: dict[str, Any]) -> list[BaseMessage]:
    return [HumanMessage([{"type": "text", "text": "Summarize:"}, block])]


CALLS: dict[str, Callable[[Any, list[BaseMessage]], Any]] = {
    "invoke": lambda model, messages: model.invoke(messages),
    "stream": lambda model, messages: reduce(operator.add, model.stream(messages)),
    "batch": lambda model, messages: model.batch([messages]),
    "generate": lambda model, messages: model.generate([messages]),
    "ainvoke": lambda model, messages: asyncio.run(model.ainvoke(messages)),
    "astream": lambda model, messages: asyncio.run(_astream(model, messages)),
    "agenerate": lambda model, messages: asyncio.run(model.agenerate([messages])),
}


async def _astream(model: Any, messages: list[BaseMessage]) -> list[Any]:
    return [chunk async for chunk in model.astream(messages)]


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_v0_text_file_gets_the_file_refusal_on_every_path(protocol: str, call: str) -> None:
    gateway = FakeKimiGateway(offline=True)
    model = gateway.chat_model(protocol=protocol)
    with pytest.raises(ValueError, match=f"^{re.escape(FILE_REFUSAL)}"):
        CALLS[call](model, _history(dict(TEXT_FILE)))
    assert gateway.requests == []


def test_the_refusal_is_the_builders_refusal_of_a_file_part() -> None:
    v1_file = {"type": "file", "base64": "JVBERi0=", "mime_type": "application/pdf"}
    options = RequestOptions(caps=capabilities(K31_PRO, "openai"))
    with pytest.raises(ValueError) as usual:
        build_request(_history(v1_file), options)
    with pytest.raises(ValueError) as ours:
        refuse_unreadable_blocks([_history(dict(TEXT_FILE))])
    assert str(ours.value).startswith(str(usual.value))
    assert str(ours.value) == f"{FILE_REFUSAL}; send a file's text as a text block"


@pytest.mark.parametrize(
    ("block", "words"),
    [
        ({"type": "file", "source_type": "url"}, FILE_REFUSAL),
        ({"type": "file", "source_type": "base64", "mime_type": "application/pdf"}, FILE_REFUSAL),
        ({"type": "file", "source_type": "id"}, FILE_REFUSAL),
        (
            {"type": "audio", "source_type": "base64"},
            "unsupported content block type 'audio' (text, image and video only)",
        ),
        (
            {"type": "image", "source_type": "url"},
            "a LangChain v0 image block with source_type 'url' needs its 'url'",
        ),
        (
            {"type": "image", "source_type": "base64", "mime_type": "image/png"},
            "a LangChain v0 image block with source_type 'base64' needs its 'data'",
        ),
        (
            {"type": "image", "source_type": "id"},
            "a LangChain v0 image block with source_type 'id' needs its 'id'",
        ),
    ],
)
def test_every_v0_block_without_its_key_is_refused_in_our_words(
    block: dict[str, Any], words: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(words)}"):
        refuse_unreadable_blocks([_history(block)])


@pytest.mark.parametrize(
    "content",
    [
        "plain text",
        ["a string part", {"type": "text", "text": "t"}],
        [{"type": "image", "source_type": "url", "url": "https://x/a.png"}],
        [{"type": "image", "source_type": "base64", "data": "iVBOR", "mime_type": "image/png"}],
        [{"type": "image", "source_type": "id", "id": "file-1"}],
        [{"type": "file", "source_type": "text", "url": "the text, where langchain-core reads it"}],
        [{"type": "image", "base64": "iVBOR", "mime_type": "image/png"}],  # v1: no source_type
        [{"type": "file", "source_type": "other"}],  # no v0 source type: not converted
        [{"type": "image_url", "source_type": "url"}],  # not a v0 data block type
        [{"type": "file", "source_type": ["text"]}],  # not a string: not converted either
    ],
)
def test_what_langchain_core_can_read_is_left_to_the_builders(content: Any) -> None:
    refuse_unreadable_blocks([[HumanMessage(content)], [ToolMessage(content, tool_call_id="c")]])


def test_every_message_of_every_history_is_read() -> None:
    fine = [HumanMessage("hi")]
    with pytest.raises(ValueError, match="'file'"):
        refuse_unreadable_blocks([fine, [*fine, ToolMessage([dict(TEXT_FILE)], tool_call_id="c")]])


class _Ends(BaseCallbackHandler):
    def __init__(self) -> None:
        self.ends = 0

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.ends += 1


@pytest.mark.parametrize("awaited", [False, True], ids=["generate", "agenerate"])
def test_readable_messages_go_through_with_every_argument(awaited: bool) -> None:
    """The refusal hooks hand the messages, a positional `stop` and the keywords on."""
    gateway = FakeKimiGateway().add_reply(text="Paris. And more", repeat=True)
    model = gateway.chat_model()
    ends = _Ends()
    messages = [[HumanMessage("Capital of France?")]]
    if awaited:
        result = asyncio.run(model.agenerate(messages, [". And"], callbacks=[ends]))
    else:
        result = model.generate(messages, [". And"], callbacks=[ends])
    assert result.generations[0][0].text == "Paris"  # cut at the stop sequence
    assert ends.ends == 1
    assert gateway.requests[0]["messages"][0]["content"] == "Capital of France?"
