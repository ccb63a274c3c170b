"""The one table of what the fake gateway assumes where 000, 001 and 004 leave behaviour open.

Each row is tied to its open question in `tools/live/questions.py` (the same id: a live answer
flips the row), says what the fake does when the row is `"strict"` (refuse, or serve only what
the documents' enums allow) and when `"lenient"` (accept), and which of the two is the default:
ChatKimi's own assumption, so that the fake and the client never disagree silently. A user picks
per row (`FakeKimiGateway(assume={"k3-tool-blocks-without-tools": "lenient"})`); every
acceptance or refusal that rests on a row is recorded in `gw.assumed`, and a refusal's message
names its question.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Choice = Literal["strict", "lenient"]
CHOICES: tuple[Choice, ...] = ("strict", "lenient")
QUESTIONS_FILE = "tools/live/questions.py"


@dataclass(frozen=True)
class Assumption:
    """One open point: `question` is its id in `tools/live/questions.py`."""

    question: str
    open_point: str
    strict: str
    lenient: str
    default: Choice
    choosable: bool = True
    """False: the fake serves one form (`strict` says which); there is nothing to refuse."""


ASSUMPTIONS: tuple[Assumption, ...] = (
    Assumption(
        "messages-stream-end",
        "whether a Messages stream always ends with message_stop",
        "every Messages stream ends with message_stop",
        "(not a choice)",
        "strict",
        choosable=False,
    ),
    Assumption(
        "stop-sequence-reason",
        "the stop_reason of a K3.1 Messages reply cut by a stop sequence (000's enum has no "
        "stop_sequence: end_turn, max_tokens, tool_use, refusal, null)",
        "stop_reason end_turn, stop_sequence naming the match (000's enum)",
        "stop_reason stop_sequence (Anthropic's value, outside 000's enum)",
        "strict",
    ),
    Assumption(
        "k3-cache-writes",
        "whether kimi-k3 Messages input_tokens include cache writes (001: tokens "
        '"no servidos desde caché")',
        "kimi-k3 input_tokens include the cache writes",
        "(not a choice)",
        "strict",
        choosable=False,
    ),
    Assumption(
        "chat-image-url",
        "http(s) image URLs on Chat Completions (004 documents base64 data URLs only)",
        "refused with 400",
        "accepted",
        "lenient",
    ),
    Assumption(
        "chat-stream-usage",
        "where a Chat Completions stream carries usage without stream_options",
        "usage on a trailing chunk with empty choices",
        "(not a choice)",
        "strict",
        choosable=False,
    ),
    Assumption(
        "chat-stop",
        "the stop field on Chat Completions (004's request schema does not name it)",
        "refused with 400",
        "accepted and ignored",
        "strict",
    ),
    Assumption(
        "error-400",
        "the body of a 400",
        "the protocol's documented ErrorResponse",
        "(not a choice)",
        "strict",
        choosable=False,
    ),
    Assumption(
        "error-401",
        "the body of a 401",
        "the protocol's documented ErrorResponse",
        "(not a choice)",
        "strict",
        choosable=False,
    ),
    Assumption(
        "error-429",
        "the bodies of a rate limit and of an exhausted balance",
        "the protocol's documented ErrorResponse, with the scripted type and code",
        "(not a choice)",
        "strict",
        choosable=False,
    ),
    Assumption(
        "fallback",
        "whether the fallback base URL answers",
        "served only when the test asks (chat_model(fallback=True) or fallback_base_url=)",
        "(not a choice)",
        "strict",
        choosable=False,
    ),
    Assumption(
        "chat-tool-turn-reasoning",
        "a Chat Completions tool-call turn the gateway did not issue, carrying the placeholder "
        "reasoning ChatKimi sends for a foreign turn",
        "refused with 400",
        "accepted",
        "lenient",
    ),
    Assumption(
        "web-search-limit-answer",
        "a $web_search call answered with text other than its arguments (004: reenvía "
        "function.arguments; ChatKimi's stand-in beyond max_uses)",
        "refused with 400",
        "accepted",
        "lenient",
    ),
    Assumption(
        "messages-tool-turn-thinking",
        "a Messages tool-use turn the gateway did not issue, with an unsigned placeholder "
        "thinking block (what ChatKimi sends for a foreign turn)",
        "refused with 400",
        "accepted",
        "lenient",
    ),
    Assumption(
        "reply-model-echo",
        "whether a reply's model echoes the request's model id",
        "the request's model id, exactly",
        "(not a choice)",
        "strict",
        choosable=False,
    ),
    Assumption(
        "anthropic-version",
        "whether Messages needs the anthropic-version header (000 / 001 do not name it)",
        "a Messages request without it is refused with 400",
        "accepted without it",
        "lenient",
    ),
    Assumption(
        "output-format-non-strict",
        "a K3.1 Messages output_config.format schema not in strict form (an object without "
        "additionalProperties false, or with a property not required)",
        "refused with 400",
        "accepted",
        "lenient",
    ),
    Assumption(
        "k3-tool-blocks-without-tools",
        "a kimi-k3 Messages request with tool_use / tool_result blocks in its history and no "
        "tools (ChatKimi keeps the tools, assuming a refusal)",
        "refused with 400",
        "accepted",
        "strict",
    ),
    Assumption(
        "tools-omit-history-tools",
        "a request whose tools omit a tool its history called",
        "refused with 400",
        "accepted",
        "lenient",
    ),
    Assumption(
        "max-tokens-near-full-context",
        "Messages max_tokens beyond what the context window leaves (the prompt estimated at "
        "4 characters a token)",
        "refused with 400",
        "accepted (as if clamped)",
        "lenient",
    ),
    Assumption(
        "messages-web-search-blocks",
        "the order of a K3.1 Messages web search's blocks and the keys of its result items (000 "
        "leaves the result objects open)",
        "server_tool_use, then web_search_tool_result, then the text; result items with type, "
        "title, url, encrypted_content and page_age (Anthropic's shape)",
        "(not a choice)",
        "strict",
        choosable=False,
    ),
    Assumption(
        "web-search-extra-keys",
        "a web search tool with keys 000 does not name (e.g. allowed_domains): 000 names its keys "
        "without closing the object",
        "accepted and ignored, as the open schema allows (ChatKimi's bind_tools refuses such keys "
        "before sending: its own choice, not the service's)",
        "(not a choice)",
        "strict",
        choosable=False,
    ),
    Assumption(
        "tool-call-ids",
        "the form of the service's tool-call ids on each protocol (no document states it)",
        "ids of the fake's own form (toolu_fake_NNNN, call_fake_NNNN); ChatKimi echoes any id "
        "unchanged",
        "(not a choice)",
        "strict",
        choosable=False,
    ),
    Assumption(
        "reply-optional-fields",
        "which keys a reply carries beyond those the response schemas require (000, 001 and 004 "
        "require none of a reply's envelope or usage keys, nor a thinking block's signature)",
        "only the required keys and the optional ones that say something: none null, zero, "
        "empty or the one value its enum allows (`minimal.py`)",
        "every key the documents list, zeros and nulls included (`cache_write_tokens: 0`, "
        "`stop_sequence: null`)",
        "lenient",
    ),
)
BY_QUESTION: dict[str, Assumption] = {row.question: row for row in ASSUMPTIONS}


@dataclass(frozen=True)
class Use:
    """One acceptance, refusal or rendering that rested on an assumption."""

    question: str
    choice: Choice
    request: int
    """The request's number (1-based, as in `gw.requests`)."""
    outcome: Literal["accepted", "refused", "served"]
    detail: str


class Assumed:
    """The choices of one gateway, and the record of each use."""

    def __init__(self, assume: Mapping[str, str] | None = None) -> None:
        self.choices: dict[str, Choice] = {row.question: row.default for row in ASSUMPTIONS}
        for question, choice in (assume or {}).items():
            row = BY_QUESTION.get(question)
            if row is None:
                msg = f"assume: unknown question {question!r}; known: {sorted(BY_QUESTION)}"
                raise ValueError(msg)
            if choice not in CHOICES:
                raise ValueError(f"assume[{question!r}]: 'strict' or 'lenient', got {choice!r}")
            if not row.choosable and choice != row.default:
                raise ValueError(f"assume[{question!r}]: not a choice ({row.strict})")
            self.choices[question] = choice
        self.uses: list[Use] = []

    def strict(self, question: str) -> bool:
        return self.choices[question] == "strict"

    def judge(self, question: str, request: int, detail: str) -> str | None:
        """Record a point resting on `question`: the refusal message when strict, else None."""
        choice = self.choices[question]
        refused = choice == "strict"
        self.uses.append(
            Use(question, choice, request, "refused" if refused else "accepted", detail)
        )
        return f"{detail} [assumed: {question}, {choice}]" if refused else None

    def served(self, question: str, request: int, detail: str) -> None:
        self.uses.append(Use(question, self.choices[question], request, "served", detail))


def markdown_table() -> str:
    """The table as docs/without-a-key.md shows it (a test keeps the two equal)."""
    lines = [
        "| question (`tools/live/questions.py`) | left open | strict | lenient | default |",
        "|---|---|---|---|---|",
    ]
    for row in ASSUMPTIONS:
        lenient = row.lenient if row.choosable else "—"
        cells = (f"`{row.question}`", row.open_point, row.strict, lenient, row.default)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
