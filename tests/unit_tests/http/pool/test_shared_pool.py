"""ChatKimi instances with the same gateway share its connections, and with the same key its gate (as ChatOpenAI's
default httpx clients are shared): throwaway instances are cheap and leave no ResourceWarning;
closing one never breaks another; the last explicit close closes the pool."""

from __future__ import annotations

import asyncio
import gc
import warnings

import pytest

from langchain_kimi import ChatKimi
from langchain_kimi._http.pool import registry
from tests.support.chat_server import SECRET
from tests.support.fake_transport import idle_clients, loop_clients

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]


def _model(url: str, **fields: object) -> ChatKimi:
    return ChatKimi.model_validate({"api_key": SECRET, "base_url": url, "timeout": 10, **fields})


def test_throwaway_instances_leave_no_resource_warning(base_url: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(20):
            assert _model(base_url).invoke("hi").content == "OK"
            gc.collect()
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_same_settings_share_a_gateway_and_a_gate_other_settings_do_not(base_url: str) -> None:
    first, second = _model(base_url), _model(base_url, timeout=30, max_retries=5)
    share = first._transport()._shared()
    assert second._transport()._shared() == share  # timeouts travel per request: same share
    other_key = _model(base_url, api_key="sk-another-key-0123456789")._transport()._shared()
    assert other_key.clients is share.clients  # connections are per gateway
    assert other_key.gate is not share.gate  # rate limits are per key
    fallback = _model(base_url, fallback_base_url="http://127.0.0.1:9")._transport()._shared()
    assert fallback.clients is not share.clients
    assert SECRET not in repr(share)
    assert all(SECRET not in repr(key) for key in registry._GATEWAYS)
    assert all(
        SECRET not in str(gate_key)
        for gateway in registry._GATEWAYS.values()
        for gate_key in gateway.gates
    )


def test_closing_one_instance_leaves_the_shared_pool_open(base_url: str) -> None:
    first, second = _model(base_url), _model(base_url)
    first.invoke("hi")
    second.invoke("hi")
    [client] = idle_clients(second._transport())  # one call at a time: one warm client
    assert idle_clients(first._transport()) == [client]
    first.close()
    assert not client.is_closed
    assert second.invoke("hi").content == "OK"
    assert idle_clients(second._transport()) == [client]  # still the same warm client
    assert first.invoke("hi").content == "OK"  # a closed instance can be used again
    first.close()
    second.close()
    assert client.is_closed  # the last explicit close closes it
    assert _model(base_url).invoke("hi").content == "OK"  # and a new pool is made on demand


async def test_async_close_of_one_instance_leaves_the_other_working(
    base_url: str,
) -> None:
    first, second = _model(base_url), _model(base_url)
    await asyncio.gather(first.ainvoke("hi"), second.ainvoke("hi"))
    client = loop_clients(second._transport())[0]
    await first.aclose()
    assert not client.is_closed
    assert (await second.ainvoke("hi")).content == "OK"
    await second.aclose()
    assert client.is_closed


def test_collected_instances_keep_the_pool_warm(base_url: str) -> None:
    model = _model(base_url)
    model.invoke("hi")
    [client] = idle_clients(model._transport())
    del model
    gc.collect()
    survivor = _model(base_url)
    assert idle_clients(survivor._transport()) == [client]
    assert not client.is_closed
    survivor.close()
    assert client.is_closed  # the collected instance's share was returned, not leaked
