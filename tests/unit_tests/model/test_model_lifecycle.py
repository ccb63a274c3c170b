"""ChatKimi life cycle against a real loopback server: pickling, copying, event loops,
concurrency, threads, closing, and the key never showing up anywhere."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.load import dumps

from langchain_kimi import ChatKimi, KimiAuthenticationError
from tests.support.chat_server import SECRET, ChatServerHandler

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]


def _model(base_url: str, key: str = SECRET) -> ChatKimi:
    return ChatKimi(api_key=key, base_url=base_url, max_retries=0, timeout=10)


def test_pickle_before_and_after_use(base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Pickles carry no key: the loading process reads its own EVOLINK_API_KEY.
    monkeypatch.setenv("EVOLINK_API_KEY", SECRET)
    model = _model(base_url)
    fresh = pickle.loads(pickle.dumps(model))
    assert fresh.invoke("hi").content == "OK"
    used = pickle.loads(pickle.dumps(fresh))  # after use: the live client is dropped
    assert used.invoke("hi").content == "OK"
    assert used.api_key is not None
    assert used.api_key.get_secret_value() == SECRET


def test_pickle_without_key_in_the_environment_fails_clearly(
    base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    loaded = pickle.loads(pickle.dumps(_model(base_url)))
    with pytest.raises(ValueError, match="EVOLINK_API_KEY"):
        loaded.invoke("hi")


def test_copies_after_use_get_their_own_clients(base_url: str) -> None:
    model = _model(base_url)
    model.invoke("hi")
    for clone in (copy.copy(model), copy.deepcopy(model), model.model_copy()):
        assert clone.invoke("hi").content == "OK"
    model.close()
    assert model.invoke("hi").content == "OK"  # re-created lazily after close


def test_same_instance_across_event_loops(base_url: str) -> None:
    model = _model(base_url)
    first = asyncio.run(model.ainvoke("hi"))
    second = asyncio.run(model.ainvoke("hi"))
    assert first.content == second.content == "OK"


def test_hundred_and_twenty_concurrent_ainvokes(base_url: str) -> None:
    model = _model(base_url)

    async def run() -> list[str]:
        replies = await asyncio.gather(*(model.ainvoke(f"q{i}") for i in range(120)))
        await model.aclose()
        return [str(reply.content) for reply in replies]

    assert asyncio.run(run()) == ["OK"] * 120


def test_sync_use_from_a_thread_pool(base_url: str) -> None:
    with _model(base_url) as model, ThreadPoolExecutor(max_workers=16) as pool:
        contents = list(pool.map(lambda i: model.invoke(f"q{i}").content, range(48)))
    assert contents == ["OK"] * 48


async def test_async_context_manager(base_url: str) -> None:
    async with _model(base_url) as model:
        assert (await model.ainvoke("hi")).content == "OK"


def test_key_never_appears(base_url: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    model = _model(base_url)
    model.invoke("hi")
    surfaces = [
        repr(model),
        str(model),
        json.dumps(model.model_dump(), default=str),
        model.model_dump_json(),
        dumps(model),
        pickle.dumps(model).decode("latin-1"),
        caplog.text,
    ]
    for surface in surfaces:
        assert SECRET not in surface


def test_key_absent_from_errors(base_url: str) -> None:
    wrong = "sk-wrong-key-0123456789abcdefghij"
    model = _model(base_url, key=wrong)
    with pytest.raises(KimiAuthenticationError) as info:
        model.invoke("hi")
    error = info.value
    assert error.status_code == 401
    assert error.request_id == "req-loopback"
    for surface in (
        str(error),
        repr(error),
        repr(error.args),
        pickle.dumps(error).decode("latin-1"),
    ):
        assert wrong not in surface


def test_threads_racing_to_the_first_call_share_one_pool(
    base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from langchain_kimi import chat_models

    built: list[object] = []
    real_transport = chat_models.Transport

    def slow_transport(*args: object, **kwargs: object) -> object:
        time.sleep(0.05)  # widen the window in which an unguarded lazy init would race
        transport = real_transport(*args, **kwargs)  # type: ignore[arg-type]
        built.append(transport)
        return transport

    monkeypatch.setattr(chat_models, "Transport", slow_transport)
    model = _model(base_url)
    with ThreadPoolExecutor(max_workers=8) as pool:
        transports = list(pool.map(lambda _: model._transport(), range(8)))
    assert len(built) == 1
    assert all(t is built[0] for t in transports)
    model.close()


def test_deepcopy_does_not_share_mutable_settings() -> None:
    model = ChatKimi(api_key="k", model_kwargs={"a": 1}, stop=["x"])
    clone = copy.deepcopy(model)
    clone.model_kwargs["b"] = 2
    assert clone.stop is not None
    clone.stop.append("y")
    assert model.model_kwargs == {"a": 1}
    assert model.stop == ["x"]


def test_requests_carry_the_documented_headers(base_url: str) -> None:
    _model(base_url).invoke("hi")
    headers = ChatServerHandler.seen_headers
    assert headers["authorization"] == f"Bearer {SECRET}"
    assert headers["user-agent"].startswith("langchain-kimi/")
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "application/json"
    assert "gzip" in headers["accept-encoding"]
