"""The docs claim only what the documents say (issue 30 item 3).

A claim the published documents (000, 001, 004) make is quoted from them, in Spanish, and the
quote is checked here against the original; a claim they do not make is marked as what ChatKimi
assumes, with the live question (`tools/live/questions.py`) that settles it.
"""

from __future__ import annotations

import re
import warnings

import pytest

from docs import hooks
from langchain_kimi._request.profiles import all_rows
from tests.support.fake_gateway import FakeGateway
from tests.support.paths import ROOT
from tools.live.questions import QUESTIONS

DOCS = ROOT / "docs"


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
    gateway = FakeGateway()
    model = gateway.model(row.protocol, row.model)
    model.invoke("hi", temperature=1, top_p=0.95)  # the fixed values: no warning, no refusal
    sent = {"temperature", "top_p"} & set(gateway.body)
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
            assert len(gateway.bodies) == 1
            return
    assert cell == hooks.SAMPLING_IGNORED  # sent, and the warning says it has no effect
    assert any("ignores temperature" in str(w.message) for w in caught)


def test_every_sampling_wording_is_used_by_some_row() -> None:
    cells = set(_capability_cells("temperature / top_p").values())
    assert cells == {hooks.SAMPLING_NOT_SENT, hooks.SAMPLING_FIXED, hooks.SAMPLING_IGNORED}
