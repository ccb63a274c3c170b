"""The "kimi" block translator on messages shaped per docs/internals.md."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.block_translators import get_translator

from langchain_kimi._langchain import content_blocks as _content_blocks

SIG = "EqQBCkYIBxgCKkBsignature" * 4


@pytest.fixture(autouse=True)
def _registered() -> None:
    _content_blocks.register()


def _anthropic_message(**overrides: Any) -> AIMessage:
    search_results = [
        {
            "type": "web_search_result",
            "url": "https://www.kimi.com",
            "title": "Kimi",
            "encrypted_content": "abc",
        }
    ]
    blocks = [
        {"type": "thinking", "thinking": "Need a search.", "signature": SIG},
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "kimi homepage"},
        },
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": search_results},
        {
            "type": "text",
            "text": "It is kimi.com.",
            "citations": [
                {
                    "type": "web_search_result_location",
                    "cited_text": "Kimi",
                    "url": "https://www.kimi.com",
                    "title": "Kimi",
                    "encrypted_index": "x",
                }
            ],
        },
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "a"}},
    ]
    fields: dict[str, Any] = {
        "content": "It is kimi.com.",
        "additional_kwargs": {
            "reasoning_content": "Need a search.",
            "thinking_blocks": [blocks[0]],
            "anthropic_blocks": blocks,
        },
        "tool_calls": [{"id": "toolu_1", "name": "lookup", "args": {"q": "a"}}],
        "response_metadata": {"model_provider": "kimi", "protocol": "anthropic"},
    }
    fields.update(overrides)
    return AIMessage(**fields)


def test_register_is_idempotent_and_wires_provider() -> None:
    _content_blocks.register()
    _content_blocks.register()
    translator = get_translator("kimi")
    assert translator is not None
    assert translator["translate_content"] is _content_blocks.translate_content
    assert translator["translate_content_chunk"] is _content_blocks.translate_content_chunk


def test_anthropic_blocks_in_order() -> None:
    blocks = _anthropic_message().content_blocks
    assert [b["type"] for b in blocks] == [
        "reasoning",
        "server_tool_call",
        "server_tool_result",
        "text",
        "tool_call",
    ]
    assert blocks[0] == {
        "type": "reasoning",
        "reasoning": "Need a search.",
        "extras": {"signature": SIG},
    }
    assert blocks[1] == {
        "type": "server_tool_call",
        "name": "web_search",
        "args": {"query": "kimi homepage"},
        "id": "srvtoolu_1",
    }
    result: Any = blocks[2]
    assert result["tool_call_id"] == "srvtoolu_1"
    assert result["status"] == "success"
    assert result["output"][0]["url"] == "https://www.kimi.com"
    text: Any = blocks[3]
    assert text["text"] == "It is kimi.com."
    assert text["annotations"][0]["type"] == "citation"
    assert text["annotations"][0]["url"] == "https://www.kimi.com"
    assert blocks[4] == {"type": "tool_call", "name": "lookup", "args": {"q": "a"}, "id": "toolu_1"}


def test_anthropic_search_error_and_redacted_thinking() -> None:
    error = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
    redacted = {"type": "redacted_thinking", "data": "opaque=="}
    blocks_raw = [
        redacted,
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_9", "content": error},
        {"type": "text", "text": "Sorry."},
    ]
    message = AIMessage(
        content="Sorry.",
        additional_kwargs={"anthropic_blocks": blocks_raw, "thinking_blocks": [redacted]},
        response_metadata={"model_provider": "kimi"},
    )
    blocks: list[Any] = list(message.content_blocks)
    # Matches langchain-core's anthropic translator: redacted thinking stays non-standard.
    assert blocks[0] == {"type": "non_standard", "value": redacted}
    assert blocks[1]["status"] == "error"
    assert blocks[1]["output"] == error
    assert blocks[1]["tool_call_id"] == "srvtoolu_9"
    assert blocks[2] == {"type": "text", "text": "Sorry."}


def test_anthropic_edited_tool_call_args_show() -> None:
    message = _anthropic_message(
        tool_calls=[{"id": "toolu_1", "name": "lookup", "args": {"q": "edited"}}]
    )
    tool_blocks: list[Any] = [b for b in message.content_blocks if b["type"] == "tool_call"]
    assert tool_blocks == [
        {"type": "tool_call", "name": "lookup", "args": {"q": "edited"}, "id": "toolu_1"}
    ]


def test_anthropic_edited_text_falls_back() -> None:
    message = _anthropic_message(content="Edited answer.")
    blocks: list[Any] = list(message.content_blocks)
    assert [b["type"] for b in blocks] == ["reasoning", "text", "tool_call"]
    assert blocks[0]["extras"] == {"signature": SIG}
    assert blocks[1] == {"type": "text", "text": "Edited answer."}


def test_anthropic_edited_reasoning_drops_signature() -> None:
    message = _anthropic_message(
        additional_kwargs={
            **_anthropic_message().additional_kwargs,
            "reasoning_content": "Changed my mind.",
        }
    )
    blocks: list[Any] = list(message.content_blocks)
    assert blocks[0] == {"type": "reasoning", "reasoning": "Changed my mind."}
    assert [b["type"] for b in blocks] == ["reasoning", "text", "tool_call"]


def _openai_round() -> list[dict[str, Any]]:
    args = '{"search_result": {"search_id": "s1"}, "usage": {"total_tokens": 12}}'
    return [
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "Search first.",
            "tool_calls": [
                {
                    "id": "call_ws_1",
                    "type": "builtin_function",
                    "function": {"name": "$web_search", "arguments": args},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_ws_1", "content": args},
    ]


def test_openai_reasoning_rounds_text_tool_calls_in_order() -> None:
    rounds = _openai_round()
    message = AIMessage(
        content="Here it is.",
        additional_kwargs={"reasoning_content": "Search first. Done.", "builtin_rounds": rounds},
        tool_calls=[{"id": "call_2", "name": "save", "args": {"x": 1}}],
        invalid_tool_calls=[{"id": "call_3", "name": "bad", "args": "[1]", "error": "not obj"}],
        response_metadata={"model_provider": "kimi", "protocol": "openai"},
    )
    blocks: list[Any] = list(message.content_blocks)
    assert [b["type"] for b in blocks] == [
        "reasoning",
        "server_tool_call",
        "server_tool_result",
        "text",
        "tool_call",
        "invalid_tool_call",
    ]
    assert blocks[0] == {"type": "reasoning", "reasoning": "Search first. Done."}
    assert blocks[1]["name"] == "web_search"
    assert blocks[1]["id"] == "call_ws_1"
    assert blocks[1]["args"] == {
        "search_result": {"search_id": "s1"},
        "usage": {"total_tokens": 12},
    }
    assert blocks[1]["extras"]["arguments"] == rounds[1]["content"]
    assert blocks[2] == {
        "type": "server_tool_result",
        "tool_call_id": "call_ws_1",
        "status": "success",
        "output": rounds[1]["content"],
    }
    assert blocks[3] == {"type": "text", "text": "Here it is."}
    assert blocks[4]["args"] == {"x": 1}
    assert blocks[5]["args"] == "[1]"


def test_openai_plain_without_reasoning() -> None:
    message = AIMessage(content="OK", response_metadata={"model_provider": "kimi"})
    assert message.content_blocks == [{"type": "text", "text": "OK"}]


def test_chunk_deltas() -> None:
    meta = {"model_provider": "kimi", "protocol": "openai"}
    reasoning = AIMessageChunk(
        content="", additional_kwargs={"reasoning_content": "Hm"}, response_metadata=meta
    )
    text = AIMessageChunk(content="OK", response_metadata={"model_provider": "kimi"})
    tool = AIMessageChunk(
        content="",
        tool_call_chunks=[{"id": "c1", "name": "f", "args": '{"a"', "index": 0}],
        response_metadata={"model_provider": "kimi"},
    )
    assert reasoning.content_blocks == [
        {"type": "reasoning", "reasoning": "Hm", "index": "lc_rs_0"}
    ]
    assert text.content_blocks == [{"type": "text", "text": "OK", "index": "lc_txt_0"}]
    assert tool.content_blocks == [
        {"type": "tool_call_chunk", "id": "c1", "name": "f", "args": '{"a"', "index": 0}
    ]


def test_anthropic_chunk_signature_and_search_blocks() -> None:
    thinking = {"type": "thinking", "thinking": "Hm", "signature": SIG}
    search = {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"q": 1}}
    chunk = AIMessageChunk(
        content="",
        additional_kwargs={"anthropic_blocks": [thinking, search], "thinking_blocks": [thinking]},
        response_metadata={"model_provider": "kimi"},
    )
    blocks: list[Any] = list(chunk.content_blocks)
    # The thinking text arrived as deltas already: only the signature is added.
    assert blocks[0] == {
        "type": "reasoning",
        "reasoning": "",
        "extras": {"signature": SIG},
        "index": "lc_rs_0",
    }
    assert blocks[1]["type"] == "server_tool_call"
    assert blocks[1]["index"] == "lc_stc_srv_1"


def test_v1_stream_blocks_merge_into_ordered_message() -> None:
    """Chunks converted to v1 and added up give reasoning (with signature) then text."""
    thinking = {"type": "thinking", "thinking": "Hm, ok", "signature": SIG}
    text_block = {"type": "text", "text": "OK!"}
    chunks = [
        AIMessageChunk(content="", additional_kwargs={"reasoning_content": "Hm"}),
        AIMessageChunk(content="", additional_kwargs={"reasoning_content": ", ok"}),
        AIMessageChunk(
            content="",
            additional_kwargs={"thinking_blocks": [thinking], "anthropic_blocks": [thinking]},
        ),
        AIMessageChunk(content="OK"),
        AIMessageChunk(content="!"),
        AIMessageChunk(content="", additional_kwargs={"anthropic_blocks": [text_block]}),
    ]
    v1_chunks = []
    for chunk in chunks:
        chunk.response_metadata = {"model_provider": "kimi", "protocol": "anthropic"}
        v1_chunks.append(
            AIMessageChunk(
                content=list(chunk.content_blocks),  # type: ignore[arg-type]
                response_metadata={"output_version": "v1"},
            )
        )
    total = v1_chunks[0] + v1_chunks[1:]
    assert total.content == [
        {
            "type": "reasoning",
            "reasoning": "Hm, ok",
            "extras": {"signature": SIG},
            "index": "lc_rs_0",
        },
        {"type": "text", "text": "OK!", "index": "lc_txt_0"},
    ]


def test_aggregated_chunk_translates_like_message() -> None:
    message = _anthropic_message()
    chunk = AIMessageChunk(
        content=message.content,
        additional_kwargs=message.additional_kwargs,
        tool_call_chunks=[{"id": "toolu_1", "name": "lookup", "args": '{"q": "a"}', "index": 4}],
        response_metadata=message.response_metadata,
        chunk_position="last",
    )
    blocks: list[Any] = list(chunk.content_blocks)
    assert [b["type"] for b in blocks] == [b["type"] for b in message.content_blocks]
    assert blocks[4]["args"] == {"q": "a"}
    assert blocks[0]["index"] == "lc_rs_0"


_WITHOUT_CORE_CITATIONS = """
import json
import langchain_core.messages.block_translators.anthropic as core_anthropic
del core_anthropic._convert_citation_to_v1  # as if a langchain-core release renamed it
from langchain_kimi import ChatKimi  # must still import (loading ChatKimi registers "kimi")
from langchain_core.messages import AIMessage
citation = {"type": "web_search_result_location", "cited_text": "Kimi", "url": "https://k.test"}
blocks = [{"type": "text", "text": "It is k.test.", "citations": [citation]}]
message = AIMessage(
    content="It is k.test.",
    additional_kwargs={"anthropic_blocks": blocks},
    response_metadata={"model_provider": "kimi", "protocol": "anthropic"},
)
print(json.dumps(message.content_blocks))
"""


def test_import_survives_a_missing_private_core_helper() -> None:
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_CORE_CITATIONS],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (text,) = json.loads(done.stdout)
    assert text["text"] == "It is k.test."
    # Only the citation translation degrades: the raw citation is kept, nothing is dropped.
    assert text["annotations"] == [
        {
            "type": "non_standard_annotation",
            "value": {
                "type": "web_search_result_location",
                "cited_text": "Kimi",
                "url": "https://k.test",
            },
        }
    ]


def test_register_installs_the_translator_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_core.messages import block_translators

    monkeypatch.delitem(block_translators.PROVIDER_TRANSLATORS, "kimi")
    calls: list[str] = []
    real = _content_blocks.register_translator

    def counting(provider: str, *translators: Any) -> None:
        calls.append(provider)
        real(provider, *translators)

    monkeypatch.setattr(_content_blocks, "register_translator", counting)
    _content_blocks.register()
    _content_blocks.register()
    assert calls == ["kimi"]
    translator = get_translator("kimi")
    assert translator is not None
    assert translator["translate_content"] is _content_blocks.translate_content


def test_a_whole_last_chunk_gets_the_streaming_indices() -> None:
    chunk = AIMessageChunk(
        content="Paris",
        additional_kwargs={"reasoning_content": "think"},
        tool_call_chunks=[{"name": "f", "args": "{}", "id": "call_1", "index": 0}],
        response_metadata={"model_provider": "kimi", "protocol": "openai"},
        chunk_position="last",
    )
    indices = {block["type"]: block.get("index") for block in chunk.content_blocks}
    assert indices == {"reasoning": "lc_rs_0", "text": "lc_txt_0", "tool_call": "lc_tool_call_2"}
