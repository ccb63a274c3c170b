"""The docs claim only what the documents say (issue 30 item 3).

A claim the published documents (000, 001, 004) make is quoted from them, in Spanish, and the
quote is checked here against the original; a claim they do not make is marked as what ChatKimi
assumes, with the live question (`tools/live/questions.py`) that settles it.
"""

from __future__ import annotations

import json
import re
import warnings

import pytest

from docs import hooks
from langchain_kimi._request.profiles import all_rows
from langchain_kimi.testing import FakeKimiGateway, frames
from tests.support.gateways import K31, answering, only_request
from tools.live.questions import QUESTIONS
from tools.paths import ROOT, SPEC_DIR

DOCS = ROOT / "docs"
SPEC_FILES = sorted(SPEC_DIR.glob("*.yaml"))  # 000, 001, 004 as published (Spanish)


def _capability_cells(name: str) -> dict[tuple[str, str], str]:
    """(model, protocol) -> the cell of row `name` of the rendered capability table."""
    rows = hooks.capability_table().splitlines()
    header = re.findall(r"`([^`]+)`<br>(\w+)", rows[0])
    (line,) = [r for r in rows if r.startswith(f"| {name} |")]
    cells = [c.strip() for c in line.strip().strip("|").split("|")][1:]
    return dict(zip(header, cells, strict=True))


@pytest.mark.parametrize("row", all_rows(), ids=lambda r: f"{r.model}-{r.protocol}")
def test_the_sampling_row_says_what_the_request_carries(row) -> None:
    cell = _capability_cells("temperature / top_p")[(row.model, row.protocol)]
    gateway = answering()
    model = gateway.chat_model(protocol=row.protocol, model=row.model)
    model.invoke("hi", temperature=1, top_p=0.95)  # the fixed values: no warning, no refusal
    sent = {"temperature", "top_p"} & set(only_request(gateway))
    if not sent:
        # Never "ignored by the service": the service is never given the value to ignore.
        assert cell == hooks.SAMPLING_NOT_SENT
        return
    assert sent == {"temperature", "top_p"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model.invoke("hi", temperature=0.5)
        except ValueError:
            assert cell == hooks.SAMPLING_FIXED  # refused before sending
            assert len(gateway.requests) == 1
            return
    assert cell == hooks.SAMPLING_IGNORED  # sent, and the warning says it has no effect
    assert any("ignores temperature" in str(w.message) for w in caught)


def test_every_sampling_wording_is_used_by_some_row() -> None:
    cells = set(_capability_cells("temperature / top_p").values())
    assert cells == {hooks.SAMPLING_NOT_SENT, hooks.SAMPLING_FIXED, hooks.SAMPLING_IGNORED}


# --- claims marked as assumptions, quotes checked against the documents ----------------------

QUESTION_IDS = {q.id for q in QUESTIONS}
_ASSUMES = "ChatKimi assumes"
# `live question `id`` or `live questions `a`, `b``: the ids a marker names.
_QUESTION_REF = re.compile(r"live questions? ((?:`[\w-]+`(?:,\s*|\s+and\s+)?)+)")
PAGES = sorted(DOCS.glob("*.md"))


def _paragraphs() -> list[tuple[str, str]]:
    """(where, text) of every paragraph of the pages (a table row is one) and of every
    docstring of ChatKimi's fields, whitespace collapsed."""
    found = []
    for page in PAGES:
        blocks = re.split(r"\n\s*\n|\n(?=\|)", page.read_text(encoding="utf-8"))
        found += [(page.name, " ".join(block.split())) for block in blocks]
    found += [
        (f"ChatKimi.{name}", " ".join(doc.split()))
        for name, (_, doc) in hooks._attribute_docs(hooks.ChatKimi).items()
    ]
    found.append(("ChatKimi", " ".join((hooks.ChatKimi.__doc__ or "").split())))
    return found


_TABLE_ROW = re.compile(r"^\| `([\w-]+)` \|", re.M)
"""A row of the fake gateway's assumptions table (docs/without-a-key.md) names its question in
its first cell."""


def _named_questions(text: str) -> set[str]:
    return {
        name for refs in _QUESTION_REF.findall(text) for name in re.findall(r"`([\w-]+)`", refs)
    } | (set(_TABLE_ROW.findall(text)) & QUESTION_IDS)


def test_every_assumption_names_an_existing_live_question() -> None:
    marked = [(where, text) for where, text in _paragraphs() if _ASSUMES in text]
    assert len(marked) >= 6
    for where, text in marked:
        named = _named_questions(text)
        assert named, f"{where}: '{_ASSUMES}' without its live question: {text[:120]}"
        assert named <= QUESTION_IDS, f"{where}: no such live question {named - QUESTION_IDS}"


def test_every_named_live_question_exists() -> None:
    for where, text in _paragraphs():
        assert _named_questions(text) <= QUESTION_IDS, where


# Claims no document makes: where they are made, they are marked, with the question that
# settles them (issue 30 item 3).
ASSUMED = [
    (r"echoing the arguments is what runs a search", "web-search-limit-answer"),
    (r"rejects a tool-call turn without", "chat-tool-turn-reasoning"),
    (r"rejects a tool-call turn without", "messages-tool-turn-thinking"),
    (r"functions\.get_weather:0", "tool-call-ids"),
    (r"`kimi-k3` writes the cache", "k3-cache-writes"),
    (r"streams? carr(?:y|ies) (?:its )?usage", "chat-stream-usage"),
    (r"accepts a schema that is not strict-compatible", "output-format-non-strict"),
    (r"Where these blocks come", "messages-web-search-blocks"),
    (r"refuse any other (?:raw dict|form)", "web-search-extra-keys"),
]

# Stated as facts, overstated, or gone: no page or docstring may say them any more.
UNSAID = [
    r"echoing a call's arguments is what runs a search",
    r"Kimi rejects such turns",
    r"`encrypted_content`",
    r"between the thinking and text blocks",
    r"blocks between the thinking and the answer",
    r"allows exactly these keys",
    r"allows nothing else",
    r"every\s+documented feature",
    r"the service always sends it",
    r"usage is always streamed",
    r"Streaming reports usage without",
    r"Kimi's own `functions",
    r"Writes are automatic \(5 minutes",
]


@pytest.mark.parametrize(("claim", "question"), ASSUMED)
def test_a_claim_no_document_makes_is_marked_with_its_question(claim: str, question: str) -> None:
    making = [(w, t) for w, t in _paragraphs() if re.search(claim, t)]
    assert making, f"no page makes the claim {claim!r} any more: drop it from ASSUMED"
    for where, text in making:
        assert question in _named_questions(text), f"{where} does not name `{question}`: {text}"


@pytest.mark.parametrize("claim", UNSAID)
def test_an_overstated_claim_is_not_made(claim: str) -> None:
    making = [where for where, text in _paragraphs() if re.search(claim, text)]
    assert making == []


# The package's docstrings and comments (where the pages' wording came from) make none of them
# either; the fake gateway's authored data (`encrypted_content` results) is no claim.
UNSAID_IN_CODE = [
    r"arguments is what runs a search",
    r"Kimi rejects",
    r"allows exactly these keys",
    r"every\s+documented feature",
    r"the service always sends it",
]


@pytest.mark.parametrize("claim", UNSAID_IN_CODE)
def test_no_docstring_or_comment_of_the_package_makes_an_overstated_claim(claim: str) -> None:
    making = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "langchain_kimi").rglob("*.py"))
        if re.search(claim, " ".join(path.read_text(encoding="utf-8").split()))
    ]
    assert making == []


_SPANISH = {"de", "la", "el", "los", "las", "en", "que", "se", "del", "por", "sin", "con", "una"}
_SPEC_TEXT = " ".join(" ".join(p.read_text(encoding="utf-8").split()) for p in SPEC_FILES)


def _spanish_quotes() -> list[tuple[str, str]]:
    quotes = []
    for where, text in _paragraphs():
        for quote in re.findall(r'"([^"]{12,}?)"', text):
            words = re.findall(r"[a-záéíóúñ]+", quote.lower())
            if sum(word in _SPANISH for word in words) >= 2:
                quotes.append((where, quote))
    return quotes


def test_every_spanish_quote_is_in_the_published_documents() -> None:
    quotes = _spanish_quotes()
    assert len(quotes) >= 12
    misquoted = [(where, quote) for where, quote in quotes if quote not in _SPEC_TEXT]
    assert misquoted == []


# --- what the pages now say, against what the code does --------------------------------------


def _page(name: str) -> str:
    return " ".join((DOCS / name).read_text(encoding="utf-8").split())


@pytest.mark.parametrize(("requested", "writes_apart"), [("kimi-k3", False), (K31, True)])
def test_usage_falls_back_to_the_requested_model_as_the_page_says(
    requested: str, writes_apart: bool
) -> None:
    counts = {
        "prompt_tokens": 100,
        "completion_tokens": 1,
        "total_tokens": 101,
        "prompt_tokens_details": {"cached_tokens": 10, "cache_write_tokens": 30},
    }
    message = {"role": "assistant", "content": "ok"}
    answer = frames.openai_completion("chatcmpl-1", requested, message, "stop", counts)
    del answer["model"]  # the reply names no model (raw: the fake always names it)
    gateway = FakeKimiGateway().add_raw(answer)
    usage = gateway.chat_model(model=requested).invoke("hi").usage_metadata
    assert usage is not None
    assert ("cache_creation" in usage["input_token_details"]) is writes_apart
    assert "when the reply names no model" in _page("usage.md")
    assert "the model you requested decides" in _page("usage.md")


def test_a_k31_messages_schema_is_sent_as_given_as_the_page_says() -> None:
    # Not strict-compatible: an optional property, the object left open.
    schema = {"title": "City", "type": "object", "properties": {"city": {"type": "string"}}}
    gateway = FakeKimiGateway().add_reply(text='{"city": "Porto"}')
    gateway.chat_model(protocol="anthropic").with_structured_output(schema).invoke("A city")
    assert only_request(gateway)["output_config"]["format"] == {
        "type": "json_schema",
        "schema": schema,
    }
    page = _page("structured-output.md")
    assert "K3.1 Messages schemas are sent as given" in page
    assert '"el modelo devuelve JSON que sigue estrictamente el JSON Schema proporcionado"' in page


def test_a_chat_stream_without_usage_ends_without_usage_and_without_a_warning() -> None:
    chunk = {
        "id": "c1",
        "model": K31,
        "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}],
    }
    stream = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"
    model = FakeKimiGateway().add_raw(stream).chat_model()  # raw: the fake always sends usage
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chunks = list(model.stream("hi"))
    assert [c.usage_metadata for c in chunks if c.usage_metadata] == []
    for text in (
        _page("usage.md"),
        " ".join((hooks._attribute_docs(hooks.ChatKimi)["stream_usage"][1]).split()),
    ):
        assert "usage_metadata=None" in text
        assert "chat-stream-usage" in _named_questions(text)
