"""A base URL ChatKimi refuses is named in the error without the credentials it carries."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_kimi import ChatKimi
from tests.support.secret_forms import KEYS, forms, leaks

TEMPLATES = [
    "https://user:{key}@gateway.example",
    "https://gateway.example/?api_key={key}",
    "https://gateway.example/v1?access_token={key}#frag",
    "http://gateway.example/?key={key}",
    "https://gateway.example/ ?api_key={key}",
]


@pytest.mark.parametrize("field", ["base_url", "fallback_base_url"])
@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("encoding", ["plain", "url-encoded"])
def test_a_refused_base_url_is_named_without_its_credentials(
    field: str, template: str, encoding: str
) -> None:
    key = KEYS["unprefixed"]
    url = template.format(key=forms(key)[encoding])
    settings: dict[str, Any] = {field: url, "api_key": "placeholder-key-0000"}
    with pytest.raises(ValueError, match=field) as info:
        ChatKimi(**settings)
    assert leaks(str(info.value), key) == []
