"""A copy of a used model with other connection settings talks with those settings: a key is never
sent to a gateway the user moved away from (issue 23, item 2)."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import httpx
import pytest
from pydantic import SecretStr

from langchain_kimi import ChatKimi
from tests.support.echo_gateway import EchoServer
from tests.support.loopback import running

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

OLD_KEY = "sk-old-gateway-key-0123456789abcdef"
NEW_KEY = "sk-new-gateway-key-fedcba9876543210"


@pytest.fixture
def two_gateways() -> Iterator[tuple[EchoServer, EchoServer]]:
    with running(EchoServer()) as old, running(EchoServer()) as new:
        yield old, new


def _used_model(url: str) -> ChatKimi:
    model = ChatKimi(api_key=OLD_KEY, base_url=url, timeout=10, max_retries=0)
    assert model.invoke("warm-up").content == "warm-up"
    return model


def _keys(server: EchoServer) -> list[str]:
    return [authorization.removeprefix("Bearer ") for authorization, _ in server.seen]


def test_model_copy_with_a_new_base_url_and_key_sends_only_there(
    two_gateways: tuple[EchoServer, EchoServer],
) -> None:
    old, new = two_gateways
    model = _used_model(old.url)
    moved = model.model_copy(update={"base_url": new.url, "api_key": SecretStr(NEW_KEY)})
    assert moved.invoke("to the new gateway").content == "to the new gateway"
    assert _keys(old) == [OLD_KEY]  # only the warm-up
    assert _keys(new) == [NEW_KEY]
    assert model.invoke("still old").content == "still old"  # the original keeps its settings
    assert _keys(old) == [OLD_KEY, OLD_KEY]


def test_shallow_copy_then_changed_settings_follow_the_copy(
    two_gateways: tuple[EchoServer, EchoServer],
) -> None:
    old, new = two_gateways
    model = _used_model(old.url)
    moved = copy.copy(model)
    moved.base_url = new.url
    moved.api_key = SecretStr(NEW_KEY)
    assert moved.invoke("moved").content == "moved"
    assert _keys(new) == [NEW_KEY]
    assert _keys(old) == [OLD_KEY]


@pytest.mark.parametrize(
    ("field", "value", "read"),
    [
        ("timeout", 3.0, lambda t: t._config.timeout.read),
        ("max_retries", 5, lambda t: t._config.max_retries),
        ("default_headers", {"X-Tenant": "b"}, lambda t: t._config.default_headers["X-Tenant"]),
        ("adaptive_concurrency", False, lambda t: t._config.adaptive_concurrency),
        ("fallback_base_url", "http://127.0.0.1:9", lambda t: t._bases[-1]),
    ],
)
def test_every_setting_the_transport_reads_is_followed_by_a_copy(
    two_gateways: tuple[EchoServer, EchoServer], field: str, value: object, read: object
) -> None:
    old, _ = two_gateways
    model = _used_model(old.url)
    changed = model.model_copy(update={field: value})
    assert callable(read)
    expected = 3.0 if field == "timeout" else value
    if field == "default_headers":
        expected = "b"
    assert read(changed._transport()) == expected
    assert changed.invoke("again").content == "again"


def test_a_copy_with_the_same_settings_still_shares_the_connections_and_gate(
    two_gateways: tuple[EchoServer, EchoServer],
) -> None:
    old, _ = two_gateways
    model = _used_model(old.url)
    same = model.model_copy(update={"reasoning_effort": "low"})
    assert same._transport()._shared() == model._transport()._shared()


def test_an_injected_client_in_a_copy_is_used(
    two_gateways: tuple[EchoServer, EchoServer],
) -> None:
    old, new = two_gateways
    model = _used_model(old.url)
    with httpx.Client() as client:
        moved = model.model_copy(update={"http_client": client, "base_url": new.url})
        assert moved._transport()._client()[0] is client
        assert moved.invoke("injected").content == "injected"
    assert [host for _, host in new.seen] == [new.url.removeprefix("http://")]
