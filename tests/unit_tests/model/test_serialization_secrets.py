"""Loading a serialized ChatKimi: the call the docs show never echoes the key.

langchain-core's `loads` substitutes `secrets_map` before it checks the namespace, so a call with
`allowed_objects` but without `valid_namespaces` fails with an `Invalid namespace: {...}` message
quoting the object with the key in it. `docs/reference.md` (Serialization) says so and shows the
safe call; these tests pin both, so the page changes when langchain-core does.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.load import dumps, loads

from langchain_kimi import ChatKimi
from tests.support.secret_forms import KEYS, leaks
from tools.paths import ROOT

KEY = KEYS["unprefixed"]
PAGE = ROOT / "docs" / "reference.md"


def _load(text: str, **kwargs: Any) -> tuple[Any, str]:
    """The loaded object and the text of every warning raised while loading."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = loads(text, secrets_map={"EVOLINK_API_KEY": KEY}, **kwargs)
    return loaded, "\n".join(str(w.message) for w in caught)


def test_the_documented_call_loads_without_echoing_the_key() -> None:
    text = dumps(ChatKimi(model="kimi-k3", protocol="anthropic", api_key=KEY))
    assert leaks(text, KEY) == []
    restored, warned = _load(text, allowed_objects=[ChatKimi], valid_namespaces=["langchain_kimi"])
    assert isinstance(restored, ChatKimi)
    assert restored.api_key is not None
    assert restored.api_key.get_secret_value() == KEY
    assert leaks(warned + repr(restored) + str(restored), KEY) == []


def test_without_valid_namespaces_langchain_core_echoes_the_substituted_key() -> None:
    # The hazard the page warns about: if langchain-core stops echoing, update the page.
    text = dumps(ChatKimi(model="kimi-k3", api_key=KEY))
    with pytest.raises(ValueError, match="Invalid namespace") as info:
        _load(text, allowed_objects=[ChatKimi])
    assert "plain" in leaks(str(info.value), KEY)


def test_the_page_shows_the_safe_call_and_the_warning() -> None:
    section = PAGE.read_text(encoding="utf-8").split("## Serialization", 1)[1].split("\n## ", 1)[0]
    sample = re.search(r"restored = loads\((.*?)\n\)", section, re.DOTALL)
    assert sample is not None
    assert 'valid_namespaces=["langchain_kimi"]' in sample.group(1)
    assert "allowed_objects=[ChatKimi]" in sample.group(1)
    assert "Invalid namespace" in section
    assert Path(__file__).relative_to(ROOT).as_posix() in section
