"""A gateway echoing the key it rejected, in any encoding: ChatKimi's errors hold none of them.

The key is removed from every error of a call by one guard (`_call/plans.py`) using the shared
scrubber (`langchain_kimi/_secrets.py`); before, only the plain form was: a key echoed
percent-encoded stayed in the message, and JSON-escaped in the error's `body`.
"""

from __future__ import annotations

import pickle

import httpx
import pytest

from langchain_kimi import ChatKimi, KimiError
from tests.support.secret_forms import ENCODINGS, KEYS, forms, leaks


def _all_text(error: BaseException) -> str:
    return "\n".join([str(error), repr(error), repr(vars(error)), repr(error.args)])


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("encoding", [e for e in ENCODINGS if e != "padded"])
@pytest.mark.parametrize("name", KEYS)
def test_an_echoed_key_is_in_no_error(
    protocol: str, stream: bool, encoding: str, name: str
) -> None:
    key = KEYS[name]
    echoed = forms(key)[encoding]

    def echo(request: httpx.Request) -> httpx.Response:
        # The raw JSON text holds `echoed` as is: its escapes are JSON escapes.
        body = '{"type": "error", "error": {"type": "authentication_error", "message": "bad %s"}}'
        return httpx.Response(401, text=body % echoed, headers={"content-type": "application/json"})

    model = ChatKimi(
        api_key=key,
        protocol=protocol,
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(echo)),
    )
    with pytest.raises(KimiError) as info:
        list(model.stream("hi")) if stream else model.invoke("hi")
    text = _all_text(info.value) + pickle.dumps(info.value).decode("latin-1")
    assert leaks(text, key) == []
    assert info.value.message == "bad ***"


@pytest.mark.parametrize("name", KEYS)
def test_a_padded_key_is_refused_before_sending_without_echo(name: str) -> None:
    sent: list[httpx.Request] = []
    model = ChatKimi(
        api_key=forms(KEYS[name])["padded"],
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(sent.append)),  # type: ignore[arg-type]
    )
    with pytest.raises(ValueError, match="surrounding whitespace") as info:
        model.invoke("hi")
    assert leaks(_all_text(info.value), KEYS[name]) == []
    assert sent == []


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
@pytest.mark.parametrize("name", KEYS)
def test_an_unreadable_reply_echoing_the_key_is_in_no_error(protocol: str, name: str) -> None:
    # A 200 reply is not an error body: the transport passes it on as it came, and the error
    # for a reply that cannot be read keeps it as its `body`. The call's guard scrubs it.
    key = KEYS[name]

    def echo(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"id": key, "choices": [{"message": 5}], "content": 5})

    model = ChatKimi(
        api_key=key,
        protocol=protocol,
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(echo)),
    )
    with pytest.raises(KimiError, match="could not be read") as info:
        model.invoke("hi")
    assert info.value.body is not None
    assert leaks(_all_text(info.value), key) == []
