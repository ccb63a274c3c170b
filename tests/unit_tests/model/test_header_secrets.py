"""Credentials in `default_headers` are kept out of every view of a model, as the API key is.

A proxy in front of the gateway may need its own credential, and ChatKimi's refusal of
`user:password@` URLs sends users to `default_headers` for it. Each view is checked for the
value (in any encoding `tests/support/secret_forms.leaks` knows), and every request still
carries the real value.
"""

from __future__ import annotations

import copy
import pickle
import warnings
from typing import Any
from uuid import UUID

import httpx
import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.load import dumpd, dumps, loads
from langchain_core.messages import BaseMessage
from pydantic import SecretStr

from langchain_kimi import ChatKimi, KimiError
from langchain_kimi._langchain import secret_headers
from langchain_kimi.testing import FakeKimiGateway
from tests.support.gateways import answering
from tests.support.secret_forms import leaks

TOKEN = "proxy-credential-0123456789"
SESSION = "session-credential-9876543210"
HEADERS = {
    "Proxy-Authorization": f"Basic {TOKEN}",
    "X-Proxy-Token": TOKEN,
    "X-Session-Id": SESSION,
    "X-Team": "research",
}
SECRET_VALUES = [f"Basic {TOKEN}", TOKEN, SESSION]
KEY = "sk-test-header-secrets-0000"


def _no_secret_in(text: str) -> None:
    for value in SECRET_VALUES:
        assert leaks(text, value) == [], f"{value!r} shows"


class _Sent:
    """A client on an answering fake gateway that keeps each request's headers as sent."""

    def __init__(self, gateway: FakeKimiGateway | None = None) -> None:
        self.gateway = gateway or answering()
        self.headers: list[httpx.Headers] = []
        self.client = httpx.Client(transport=httpx.MockTransport(self._handle))

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.headers.append(request.headers)
        return self.gateway.transport.handle_request(request)

    def model(self, **fields: Any) -> ChatKimi:
        settings = {"api_key": KEY, "default_headers": dict(HEADERS), "max_retries": 0}
        return ChatKimi(http_client=self.client, **{**settings, **fields})

    def carried(self) -> dict[str, str]:
        assert self.headers, "nothing was sent"
        last = self.headers[-1]
        return {name: last[name] for name in HEADERS if name in last}


def test_the_request_carries_every_header_unchanged() -> None:
    sent = _Sent()
    sent.model().invoke("hi")
    assert sent.carried() == HEADERS


@pytest.mark.parametrize("view", [repr, str])
def test_repr_and_str_mask_credential_headers_like_the_key(view: Any) -> None:
    text = view(_Sent().model())
    _no_secret_in(text)
    assert "'X-Proxy-Token': SecretStr('**********')" in text
    assert "'X-Team': 'research'" in text  # not a credential: shown


def test_model_dump_gives_secret_strings_and_the_json_gives_stars() -> None:
    model = _Sent().model()
    dumped = model.model_dump()
    assert dumped["default_headers"]["X-Team"] == "research"
    assert isinstance(dumped["default_headers"]["Proxy-Authorization"], SecretStr)
    _no_secret_in(repr(dumped))
    text = model.model_dump_json()
    _no_secret_in(text)
    assert '"X-Proxy-Token":"**********"' in text
    # The dump builds a working model again, as it does with the key (a `SecretStr` is taken).
    sent = _Sent()
    ChatKimi(**{**dumped, "http_client": sent.client}).invoke("hi")
    assert sent.carried() == HEADERS


def test_dumpd_and_dumps_write_secret_references() -> None:
    model = _Sent().model()
    _no_secret_in(dumps(model))
    headers = dumpd(model)["kwargs"]["default_headers"]
    assert headers == {
        "Proxy-Authorization": {
            "lc": 1,
            "type": "secret",
            "id": ["EVOLINK_HEADER_PROXY_AUTHORIZATION"],
        },
        "X-Proxy-Token": {"lc": 1, "type": "secret", "id": ["EVOLINK_HEADER_X_PROXY_TOKEN"]},
        "X-Session-Id": {"lc": 1, "type": "secret", "id": ["EVOLINK_HEADER_X_SESSION_ID"]},
        "X-Team": "research",
    }


def _load(text: str, secrets: dict[str, str]) -> ChatKimi:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `loads` is in beta
        loaded = loads(
            text,
            allowed_objects=[ChatKimi],
            valid_namespaces=["langchain_kimi"],
            secrets_map={"EVOLINK_API_KEY": KEY, **secrets},
        )
    assert isinstance(loaded, ChatKimi)
    return loaded


def test_loads_reads_the_references_from_the_secrets_map() -> None:
    text = dumps(_Sent().model())
    loaded = _load(
        text,
        {
            "EVOLINK_HEADER_PROXY_AUTHORIZATION": f"Basic {TOKEN}",
            "EVOLINK_HEADER_X_PROXY_TOKEN": TOKEN,
            "EVOLINK_HEADER_X_SESSION_ID": SESSION,
        },
    )
    assert loaded.default_headers == HEADERS


def test_loads_without_a_header_secret_says_which_one_to_pass() -> None:
    text = dumps(_Sent().model(default_headers={"X-Proxy-Token": TOKEN}))
    with pytest.raises(ValueError, match="EVOLINK_HEADER_X_PROXY_TOKEN") as info:
        _load(text, {})
    assert "default_headers['X-Proxy-Token']" in str(info.value)
    assert "secrets_map" in str(info.value)


def test_callbacks_and_tracing_never_see_the_values() -> None:
    seen: list[str] = []

    class Recorder(BaseCallbackHandler):
        def on_chat_model_start(
            self,
            serialized: dict[str, Any],
            messages: list[list[BaseMessage]],
            *,
            run_id: UUID,
            **kwargs: Any,
        ) -> None:
            seen.append(repr(serialized) + repr(kwargs))

    sent = _Sent()
    model = sent.model(callbacks=[Recorder()])
    model.invoke("hi")
    assert len(seen) == 1
    assert "EVOLINK_HEADER_X_PROXY_TOKEN" in seen[0]  # the model's serialized form is there
    _no_secret_in(seen[0])
    _no_secret_in(repr(model._get_ls_params()))
    _no_secret_in(repr(model._get_invocation_params()))
    assert sent.carried() == HEADERS


def test_a_pickle_leaves_credential_headers_out() -> None:
    data = pickle.dumps(_Sent().model())
    _no_secret_in(data.decode("latin-1"))


def test_an_unpickled_model_reads_them_from_its_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = pickle.dumps(_Sent().model(default_headers={"X-Proxy-Token": TOKEN, "X-Team": "r"}))
    monkeypatch.setenv("EVOLINK_API_KEY", KEY)
    monkeypatch.setenv("EVOLINK_HEADER_X_PROXY_TOKEN", "token-of-the-loading-process")
    loaded = pickle.loads(data)
    assert loaded.default_headers == {
        "X-Proxy-Token": "token-of-the-loading-process",
        "X-Team": "r",
    }


def test_an_unpickled_model_without_them_refuses_to_call_before_sending(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = ChatKimi(api_key=KEY, default_headers={"X-Proxy-Token": TOKEN, "X-Team": "r"})
    monkeypatch.setenv("EVOLINK_API_KEY", KEY)
    monkeypatch.delenv("EVOLINK_HEADER_X_PROXY_TOKEN", raising=False)
    loaded = pickle.loads(pickle.dumps(model))
    assert loaded.default_headers == {"X-Team": "r"}
    gateway = FakeKimiGateway(offline=True)
    loaded.http_client = httpx.Client(transport=gateway.transport)
    with pytest.raises(ValueError, match=r"default_headers\['X-Proxy-Token'\]") as info:
        loaded.invoke("hi")
    assert "EVOLINK_HEADER_X_PROXY_TOKEN" in str(info.value)
    for duplicate in (copy.copy, copy.deepcopy, lambda m: m.model_copy()):
        with pytest.raises(ValueError, match=r"default_headers\['X-Proxy-Token'\]"):
            duplicate(loaded).invoke("hi")
    assert gateway.requests == []
    # Set again, the header is sent.
    sent = _Sent()
    loaded.http_client = sent.client
    loaded.default_headers = {"X-Team": "r", "x-proxy-token": TOKEN}
    loaded.invoke("hi")
    assert sent.headers[-1]["X-Proxy-Token"] == TOKEN


@pytest.mark.parametrize(
    "duplicate",
    [copy.copy, copy.deepcopy, lambda m: m.model_copy(), lambda m: m.model_copy(deep=True)],
    ids=["copy", "deepcopy", "model_copy", "model_copy_deep"],
)
def test_copies_still_send_the_real_values(duplicate: Any) -> None:
    sent = _Sent()
    model = sent.model()
    duplicate(model).invoke("hi")
    assert sent.carried() == HEADERS


def test_a_gateway_error_echoing_a_header_value_does_not_show_it() -> None:
    gateway = FakeKimiGateway().add_raw(
        httpx.Response(407, json={"error": {"message": f"proxy token {TOKEN} refused"}})
    )
    model = _Sent(gateway).model()
    with pytest.raises(KimiError) as info:
        model.invoke("hi")
    _no_secret_in(str(info.value) + repr(info.value) + str(info.value.body))


def test_a_refused_header_value_is_not_echoed() -> None:
    with pytest.raises(ValueError) as info:
        ChatKimi(api_key=KEY, default_headers={"X-Proxy-Token": f"{TOKEN}\r\nX-Evil: 1"})
    _no_secret_in(str(info.value))


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("Proxy-Authorization", True),
        ("X-Proxy-Token", True),
        ("x-api-key", True),
        ("Api-Key", True),
        ("Cookie", True),
        ("X-Auth", True),
        ("X-Authentication", True),
        ("X-Client-Secret", True),
        ("X-Password", True),
        ("X-Passwd", True),
        ("X-Credential", True),
        ("X-Session-Id", True),
        ("Token", True),
        ("Key", True),
        ("X-Team", False),
        ("User-Agent", False),
        ("anthropic-version", False),
        ("Accept-Encoding", False),
    ],
)
def test_which_names_are_credentials(name: str, secret: bool) -> None:
    shown = repr(ChatKimi(api_key=KEY, default_headers={name: "value-0123456789"}))
    assert ("value-0123456789" not in shown) is secret


def test_a_second_pickle_still_knows_what_the_first_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("EVOLINK_HEADER_X_PROXY_TOKEN", raising=False)
    model = ChatKimi(api_key=KEY, default_headers={"X-Proxy-Token": TOKEN})
    once = pickle.loads(pickle.dumps(model))
    monkeypatch.setenv("EVOLINK_HEADER_X_PROXY_TOKEN", "token-of-the-third-process")
    twice = pickle.loads(pickle.dumps(once))
    assert twice.default_headers == {"X-Proxy-Token": "token-of-the-third-process"}


def test_a_model_without_headers_pickles_and_serializes_as_before() -> None:
    model = ChatKimi(api_key=KEY)
    assert pickle.loads(pickle.dumps(model)).default_headers is None
    assert "default_headers" not in dumpd(model)["kwargs"]
    assert model.model_dump()["default_headers"] is None


def test_a_header_set_again_in_another_case_is_not_left_out_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("EVOLINK_HEADER_X_PROXY_TOKEN", raising=False)
    loaded = pickle.loads(
        pickle.dumps(ChatKimi(api_key=KEY, default_headers={"X-Proxy-Token": TOKEN}))
    )
    loaded.default_headers = {"x-proxy-token": TOKEN}
    monkeypatch.setenv("EVOLINK_HEADER_X_PROXY_TOKEN", "read-back")
    assert pickle.loads(pickle.dumps(loaded)).default_headers == {"x-proxy-token": "read-back"}


def test_the_refusal_of_a_missing_header_word_for_word(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVOLINK_HEADER_X_PROXY_TOKEN", raising=False)
    loaded = pickle.loads(
        pickle.dumps(ChatKimi(api_key=KEY, default_headers={"X-Proxy-Token": TOKEN}))
    )
    with pytest.raises(ValueError) as info:
        loaded.invoke("hi")
    assert str(info.value) == (
        "default_headers['X-Proxy-Token'] holds a credential, which a pickle does not carry, and "
        "EVOLINK_HEADER_X_PROXY_TOKEN is not set in this process's environment: set it before "
        "unpickling, or set the header again (model.default_headers = {...})"
    )


def test_an_echo_of_the_credentials_after_the_scheme_alone_is_removed() -> None:
    gateway = FakeKimiGateway().add_raw(
        httpx.Response(407, json={"error": {"message": f"bad credentials {SESSION}"}})
    )
    sent = _Sent(gateway)
    model = sent.model(default_headers={"Proxy-Authorization": f"Bearer {SESSION}"})
    with pytest.raises(KimiError) as info:
        model.invoke("hi")
    assert SESSION not in str(info.value)
    assert secret_headers.values({"X-Token": "  ", "X-Team": "t"}) == ("  ",)
