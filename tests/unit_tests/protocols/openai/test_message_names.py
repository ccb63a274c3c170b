"""A message's `name` on Chat Completions (issue 51 item 17): the speaker of a multi-agent chat.

004 (spec/chat-completions.all-models.yaml), `components.schemas.ChatMessage`:

    ChatMessage:
      type: object
      required:
        - role
      properties:
        role:  ... 'Rol del mensaje: system, user, assistant o tool.'
        content: ...
        reasoning_content: ...
        tool_calls: ...
        tool_call_id: ... 'ID de la llamada de herramienta correspondiente cuando `role=tool`.'

No `name`: ChatKimi sends only documented fields, so a name is not sent, and a warning says so
once per process (ChatOpenAI sends it; without a word the speaker would just disappear). A
ToolMessage's `name` is the tool's (LangGraph's ToolNode always sets it) and the `tool_call_id`
already says which call it answers: no warning for it.
"""

from __future__ import annotations

import warnings

import pytest
import yaml
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langchain_kimi._request.options import RequestOptions
from langchain_kimi._request.profiles import K31_PRO, capabilities
from langchain_kimi.protocols.openai_chat import build_request, request
from tools.paths import SPEC_DIR

CALL = {"name": "lookup", "args": {}, "id": "call_1", "type": "tool_call"}
WARNING = (
    "Chat Completions messages have no `name` (004's ChatMessage has role, content, "
    "reasoning_content, tool_calls and tool_call_id only): the names of messages are not "
    "sent; put a speaker's name in the content if the model should see it"
)


@pytest.fixture(autouse=True)
def _not_warned_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request, "_names_warned", False)


def build(messages: list[BaseMessage]) -> tuple[dict[str, object], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        body = build_request(messages, RequestOptions(caps=capabilities(K31_PRO, "openai")))
    return body, [str(w.message) for w in caught]


def test_the_document_has_no_name_on_messages() -> None:
    document = yaml.safe_load((SPEC_DIR / "chat-completions.all-models.yaml").read_text())
    message = document["components"]["schemas"]["ChatMessage"]
    assert set(message["properties"]) == {
        "role",
        "content",
        "reasoning_content",
        "tool_calls",
        "tool_call_id",
    }
    assert "additionalProperties" not in message  # silent, not forbidden: we send what it names


@pytest.mark.parametrize(
    "named",
    [
        HumanMessage("Hi, I am Ada.", name="ada"),
        AIMessage("Hello Ada.", name="researcher"),
        SystemMessage("Be brief.", name="rules"),
        ChatMessage(role="user", content="Hi.", name="bob"),
    ],
    ids=lambda m: type(m).__name__,
)
def test_a_name_is_not_sent_and_said_once(named: BaseMessage) -> None:
    history = [HumanMessage("start"), named, HumanMessage("go on")]
    body, said = build(history)
    assert said == [WARNING]
    assert all("name" not in message for message in body["messages"])  # type: ignore[attr-defined]
    again, said_again = build(history)
    assert said_again == []
    assert again == body


def test_a_tool_messages_name_says_nothing() -> None:
    history = [
        HumanMessage("Look it up."),
        AIMessage("", tool_calls=[CALL], additional_kwargs={"reasoning_content": "r"}),
        ToolMessage("found", tool_call_id="call_1", name="lookup"),
    ]
    body, said = build(history)
    assert said == []
    assert body["messages"][2] == {  # type: ignore[index]
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "found",
    }


def test_messages_without_names_say_nothing() -> None:
    assert build([SystemMessage("s"), HumanMessage("h"), AIMessage("a")])[1] == []
