"""Every request of the recorded corpus (tests/fixtures/corpus) goes through ChatKimi.

The corpus requests are what other clients (langchain-anthropic, pydantic-ai) built for the same
two protocols: their histories and tool declarations are what users of those clients hand to
ChatKimi. Each one must be accepted and sent — nothing refused, nothing dropped — on its own
protocol (issue 21 item 1: pydantic-ai spells the Messages web search with every option `None`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, SystemMessage, convert_to_messages

from tests.support.gateways import answering, only_request
from tools.paths import CORPUS

FILES = sorted(CORPUS.rglob("*.json"))
MESSAGES_WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search"}


def _request(path: Path) -> tuple[str, dict[str, Any]]:
    recorded = json.loads(path.read_text(encoding="utf-8"))
    protocol = "anthropic" if recorded["protocol"] == "anthropic-messages" else "openai"
    body: dict[str, Any] = recorded["request"]["body"]
    return protocol, body


def _history(body: dict[str, Any]) -> list[BaseMessage]:
    messages = convert_to_messages(body["messages"])
    if body.get("system"):
        messages.insert(0, SystemMessage(body["system"]))
    return messages


def test_the_corpus_is_all_there() -> None:
    assert len(FILES) >= 29
    assert sum(1 for f in FILES if "web_search" in f.name) >= 7


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_recorded_request_is_accepted_and_sent(path: Path) -> None:
    protocol, recorded = _request(path)
    gateway = answering()
    model: Any = gateway.chat_model(protocol=protocol)
    if recorded.get("tools"):
        model = model.bind_tools(recorded["tools"])
    model.invoke(_history(recorded))
    sent = only_request(gateway)
    assert len(sent.get("tools", [])) == len(recorded.get("tools", []))
    for theirs, ours in zip(recorded.get("tools", []), sent.get("tools", []), strict=True):
        if protocol == "anthropic" and str(theirs.get("type", "")).startswith("web_search_"):
            # The documented form (000's WebSearchTool): an option given as None is absent.
            given = {k: v for k, v in theirs.items() if v is not None}
            assert ours == {**MESSAGES_WEB_SEARCH, **given}
        else:
            assert (ours.get("name") or ours["function"]["name"]) == (
                theirs.get("name") or theirs["function"]["name"]
            )
