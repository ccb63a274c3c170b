"""The orjson hot path sends the same bytes the standard library would, and falls back to it."""

from __future__ import annotations

import json

import pytest

from langchain_kimi import _json


def _stdlib(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    "body",
    [
        {"model": "kimi-k3.1-pro", "messages": [{"role": "user", "content": "Reply with OK."}]},
        {"messages": [{"role": "user", "content": "天气怎么样？ é ü 🚀 \u2028 \"quoted\" \\"}]},
        {"max_tokens": 131072, "stream": True, "tools": [], "nested": {"a": [1, 2, {"b": None}]}},
        {"tool_calls": [{"function": {"arguments": "{\"city\": \"Oslo\"}"}}]},
    ],
)
def test_same_bytes_as_the_standard_library(body: dict[str, object]) -> None:
    assert _json.dumps_bytes(body) == _stdlib(body)


def test_values_orjson_refuses_fall_back() -> None:
    assert json.loads(_json.dumps_bytes({1: "int key"})) == {"1": "int key"}
    big = {"n": 2**70}
    assert _json.dumps_bytes(big) == _stdlib(big)
    assert _json.loads(b'{"n": 1180591620717411303424}') == big


def test_not_json_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        _json.loads("{not json")
