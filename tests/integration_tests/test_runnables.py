"""Tracing and Runnable features with ChatKimi, replayed from authored cassettes.

`cassettes/runnables/<test>[<protocol>].yaml` (written by `python -m
tools.authoring.write_runnables`): rate limiter, streaming callbacks, `with_fallbacks`,
`with_retry`, `batch(max_concurrency=...)`, `astream_events` v2 and v3 (langchain-core 1.8 has
both), and the LangSmith params ChatKimi reports.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.rate_limiters import InMemoryRateLimiter
from langchain_core.runnables import RunnableConfig

from langchain_kimi import ChatKimi
from tests.support.recording import ReplayModel

PROTOCOLS = ["openai", "anthropic"]


class _CountingLimiter(InMemoryRateLimiter):
    def __init__(self) -> None:
        super().__init__(requests_per_second=50, check_every_n_seconds=0.01, max_bucket_size=1)
        self.acquired = 0

    def acquire(self, *, blocking: bool = True) -> bool:
        self.acquired += 1
        return super().acquire(blocking=blocking)


class _Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.metadata: list[dict[str, Any]] = []
        self.ended = 0

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, metadata: dict[str, Any] | None = None, **_: Any
    ) -> None:
        self.metadata.append(dict(metadata or {}))

    def on_llm_new_token(self, token: Any, **_: Any) -> None:
        self.tokens.append(str(token))

    def on_llm_end(self, response: Any, **_: Any) -> None:
        self.ended += 1


@pytest.mark.vcr
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_rate_limiter(protocol: str, replay_model: ReplayModel) -> None:
    limiter = _CountingLimiter()
    reply = replay_model(protocol, rate_limiter=limiter).invoke("Reply with OK.")
    assert reply.content == "OK"
    assert limiter.acquired == 1


@pytest.mark.vcr
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_stream_callbacks_get_every_token(protocol: str, replay_model: ReplayModel) -> None:
    recorder = _Recorder()
    chunks = list(
        replay_model(protocol).stream("Count to three.", config={"callbacks": [recorder]})
    )
    text = "".join(str(c.content) for c in chunks)
    assert text == "One, two, three, and that is all."
    assert len([t for t in recorder.tokens if t]) >= 2, "text arrives in several tokens"
    assert "".join(recorder.tokens) == text
    assert recorder.ended == 1


@pytest.mark.vcr
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_with_fallbacks(protocol: str, replay_model: ReplayModel) -> None:
    primary = replay_model(protocol, fallback_base_url=None)
    backup = replay_model(protocol, model="kimi-k3.1-pro-highspeed")
    reply = primary.with_fallbacks([backup]).invoke("Say hi.")
    assert reply.content == "Hi!"
    assert reply.response_metadata["model_name"] == "kimi-k3.1-pro-highspeed"


@pytest.mark.vcr
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_with_retry(protocol: str, vcr: Any, replay_model: ReplayModel) -> None:
    model = replay_model(protocol, fallback_base_url=None)
    retried = model.with_retry(stop_after_attempt=2, wait_exponential_jitter=False)
    reply = retried.invoke("Say hi.")
    assert reply.content == "Hi!"
    assert vcr.play_count == 2, "the 500 reply, then the retried request"


@pytest.mark.vcr
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_batch_max_concurrency(
    protocol: str, monkeypatch: pytest.MonkeyPatch, replay_model: ReplayModel
) -> None:
    model = replay_model(protocol)
    active = 0
    peak = 0
    lock = threading.Lock()
    original = ChatKimi._generate

    def tracking(self: ChatKimi, *args: Any, **kwargs: Any) -> Any:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        try:
            return original(self, *args, **kwargs)
        finally:
            with lock:
                active -= 1

    monkeypatch.setattr(ChatKimi, "_generate", tracking)
    prompts: list[Any] = [f"Write the number {n} as a word." for n in (1, 2, 3)]
    config: RunnableConfig = {"max_concurrency": 2}
    replies = model.batch(prompts, config=config)
    assert [r.content for r in replies] == ["One.", "Two.", "Three."]
    assert 1 <= peak <= 2


@pytest.mark.vcr
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_astream_events_v2(protocol: str, replay_model: ReplayModel) -> None:
    kinds: list[str] = []
    pieces: list[str] = []
    final: AIMessage | None = None
    async for event in replay_model(protocol).astream_events("Hello", version="v2"):
        kinds.append(event["event"])
        if event["event"] == "on_chat_model_stream":
            pieces.append(str(event["data"]["chunk"].content))
        elif event["event"] == "on_chat_model_end":
            final = event["data"]["output"]
    assert kinds[0] == "on_chat_model_start"
    assert kinds[-1] == "on_chat_model_end"
    assert "".join(pieces) == "Hello there!"
    assert final is not None
    assert final.content == "Hello there!"
    assert final.usage_metadata is not None
    assert final.usage_metadata["output_token_details"]["reasoning"] == 12


@pytest.mark.vcr
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_astream_events_v3(protocol: str, replay_model: ReplayModel) -> None:
    stream = await replay_model(protocol).astream_events("Hello", version="v3")
    events = [event async for event in stream]
    assert events
    message = await stream.output
    assert message.text == "Hello there!"
    kinds = [b["type"] for b in message.content_blocks]
    assert kinds == ["reasoning", "text"]


@pytest.mark.vcr
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_ls_params_reach_the_tracer(protocol: str, replay_model: ReplayModel) -> None:
    recorder = _Recorder()
    model = replay_model(protocol)
    reply = model.invoke(
        "Hello",
        config={"callbacks": [recorder]},
        model="kimi-k3.1-pro-highspeed",
        max_tokens=50,
        stop=["END"],
    )
    assert reply.content == "Hello!"
    (metadata,) = recorder.metadata
    assert metadata["ls_provider"] == "kimi"
    assert metadata["ls_model_name"] == "kimi-k3.1-pro-highspeed"
    assert metadata["ls_model_type"] == "chat"
    assert metadata["ls_max_tokens"] == 50
    assert metadata["ls_stop"] == ["END"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_ls_params_defaults_and_overrides(protocol: str, replay_model: ReplayModel) -> None:
    model = replay_model(protocol, max_tokens=300, stop=["###"], temperature=1)
    params = model._get_ls_params()
    # temperature is reported where it is sent: Chat Completions only (the Messages documents
    # have no such field).
    sent_temperature = {"ls_temperature": 1} if protocol == "openai" else {}
    assert params == {
        "ls_provider": "kimi",
        "ls_model_name": "kimi-k3.1-pro",
        "ls_model_type": "chat",
        **sent_temperature,
        "ls_max_tokens": 300,
        "ls_stop": ["###"],
    }
    override = model._get_ls_params(stop=["END"], model="kimi-k3", temperature=0.5, max_tokens=20)
    assert override["ls_model_name"] == "kimi-k3"
    assert override.get("ls_temperature") == (0.5 if protocol == "openai" else None)
    assert override["ls_max_tokens"] == 20
    assert override["ls_stop"] == ["END"]
    assert "ls_temperature" not in replay_model(protocol)._get_ls_params()
