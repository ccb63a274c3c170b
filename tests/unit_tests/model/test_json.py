"""The orjson hot path sends the same bytes the standard library would, and falls back to it."""

from __future__ import annotations

import json

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langchain_kimi import ChatKimi, _json
from tests.support.gateways import answering


def _stdlib(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    "body",
    [
        {"model": "kimi-k3.1-pro", "messages": [{"role": "user", "content": "Reply with OK."}]},
        {"messages": [{"role": "user", "content": '天气怎么样？ é ü 🚀 \u2028 "quoted" \\'}]},
        {"max_tokens": 131072, "stream": True, "tools": [], "nested": {"a": [1, 2, {"b": None}]}},
        {"tool_calls": [{"function": {"arguments": '{"city": "Oslo"}'}}]},
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


def _strict(data: bytes) -> object:
    """Parse as JSON proper: `NaN` / `Infinity` are not JSON (the standard library accepts them)."""

    def refuse(constant: str) -> object:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(data, parse_constant=refuse)


NOT_FINITE = {
    "nan": float("nan"),
    "inf": float("inf"),
    "-inf": float("-inf"),
    "list": [float("nan")],
}
AS_NULL = {"nan": None, "inf": None, "-inf": None, "list": [None]}


@pytest.mark.parametrize(
    "extra",
    [
        {},  # orjson's path
        {"n": 2**70},  # beyond 64 bits: the standard-library fallback
        {1: "int key"},  # a non-string key: the fallback too
    ],
    ids=["orjson", "big-int fallback", "int-key fallback"],
)
def test_nan_and_infinities_are_sent_as_null_on_both_paths(extra: dict[object, object]) -> None:
    sent = _strict(_json.dumps_bytes({**NOT_FINITE, **extra}))
    assert isinstance(sent, dict)
    assert {k: v for k, v in sent.items() if k in AS_NULL} == AS_NULL


def test_a_tool_call_argument_that_is_nan_reaches_the_wire_as_null() -> None:
    sent: list[bytes] = []
    gateway = answering()

    def keep_bytes(request: httpx.Request) -> httpx.Response:
        sent.append(request.read())
        return gateway.transport.handle_request(request)

    client = httpx.Client(transport=httpx.MockTransport(keep_bytes))
    history = [
        HumanMessage("Scale it"),
        AIMessage(
            "",
            # 2**70 sends the Messages body through the standard-library fallback.
            tool_calls=[{"name": "scale", "args": {"by": float("nan"), "n": 2**70}, "id": "c1"}],
            additional_kwargs={"reasoning_content": "Call scale."},
        ),
        ToolMessage("done", tool_call_id="c1"),
    ]
    for protocol in ("openai", "anthropic"):
        ChatKimi(protocol=protocol, api_key="k", http_client=client).invoke(history)
    assert len(sent) == 2
    for body in sent:
        assert "NaN" not in body.decode()
        _strict(body)
