"""A call without a key says how to get one in, and where to try ChatKimi without one."""

from __future__ import annotations

import re

import pytest

from langchain_kimi import ChatKimi
from tools.paths import ROOT


@pytest.mark.parametrize("key", [None, ""])
def test_a_call_without_a_key_points_to_the_page_on_trying_it_without_one(
    key: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    model = ChatKimi(api_key=key) if key is not None else ChatKimi()
    with pytest.raises(ValueError, match="No EvoLink API key") as raised:
        model.invoke("hi")
    message = str(raised.value)
    assert "EVOLINK_API_KEY" in message
    assert "FakeKimiGateway" in message
    (page,) = re.findall(r"docs/[\w-]+\.md", message)
    assert page == "docs/without-a-key.md"
    assert (ROOT / page).is_file()
