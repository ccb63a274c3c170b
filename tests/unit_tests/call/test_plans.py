"""The sans-I/O call plans, driven directly: stop emulation, the base URL once per stream, the
guard that attaches partial output and the request id, `llm_output` and `token_text`.

Chat Completions with kimi-k3.1-pro has no native stop (the capability table), so `stop` is
emulated client-side here; Anthropic with kimi-k3.1-pro sends it on the wire.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.outputs import ChatGenerationChunk

from langchain_kimi._call._sync.drivers import read_round
from langchain_kimi._call.plans import (
    InvokePlan,
    PlanSettings,
    StreamPlan,
    llm_output,
    token_text,
)
from langchain_kimi._errors import KimiAPIError, KimiStreamError
from langchain_kimi._request.profiles import K31_PRO, Protocol
from langchain_kimi._request.resolve import ModelDefaults, resolve_options
from langchain_kimi._settings import check_max_builtin_rounds
from langchain_kimi.protocols import adapter

URL = "https://gateway.example/v1"


def _plan(cls: type[Any], protocol: Protocol = "openai", stop: list[str] | None = None) -> Any:
    options = resolve_options(
        ModelDefaults(model=K31_PRO, protocol=protocol), stop, {}, stream=cls is StreamPlan
    )
    return cls(adapter(protocol), options, {"messages": []}, max_builtin_rounds=3)


def _delta(text: str) -> tuple[str, str]:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    return "", json.dumps({"id": "c1", "model": K31_PRO, "choices": [choice]})


def _stream(plan: StreamPlan, *texts: str, done: bool = True) -> list[ChatGenerationChunk]:
    plan.start_round(URL, "req-1")
    events = [_delta(t) for t in texts] + ([("", "[DONE]")] if done else [])
    return list(read_round(plan, events))


def _reply(text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {
        "id": "c1",
        "model": K31_PRO,
        "choices": [{"index": 0, "message": message, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    }


def test_stream_stop_emulation_truncates_and_reports_the_stop_on_the_last_chunk() -> None:
    plan = _plan(StreamPlan, stop=["END"])
    chunks = _stream(plan, "Hello E", "ND world")
    text = "".join(token_text(c) for c in chunks)
    assert text == "Hello "
    last = chunks[-1].message
    assert isinstance(last, AIMessageChunk)
    assert last.chunk_position == "last"
    assert last.response_metadata["finish_reason"] == "stop"
    assert last.response_metadata["stop_sequence"] == "END"


def test_stream_stop_emulation_flushes_held_back_text_at_the_end() -> None:
    # "E" could begin "END": held back until the stream ends, then appended to the last chunk.
    plan = _plan(StreamPlan, stop=["END"])
    chunks = _stream(plan, "Hello E")
    assert "".join(token_text(c) for c in chunks) == "Hello E"
    assert chunks[-1].message.content == "E"
    assert "stop_sequence" not in chunks[-1].message.response_metadata


def test_stream_without_a_match_keeps_the_services_finish_reason() -> None:
    plan = _plan(StreamPlan, stop=["END"])
    chunks = _stream(plan, "no match")
    assert "".join(token_text(c) for c in chunks) == "no match"
    assert chunks[-1].message.response_metadata.get("finish_reason") != "stop"


def test_native_stop_is_not_emulated_in_a_stream() -> None:
    plan = _plan(StreamPlan, protocol="anthropic", stop=["END"])
    assert plan.options.native_stop
    assert plan._stop_filter is None


def test_emulated_stop_needs_stop_sequences() -> None:
    assert _plan(StreamPlan)._stop_filter is None


def test_stream_names_the_base_url_once_on_the_first_chunk() -> None:
    chunks = _stream(_plan(StreamPlan), "a", "b", "c")
    urls = [c.message.response_metadata.get("base_url") for c in chunks]
    assert urls[0] == URL
    assert all(url is None for url in urls[1:])
    total = chunks[0].message
    for chunk in chunks[1:]:
        total = total + chunk.message
    assert total.response_metadata["base_url"] == URL  # not concatenated


def _cut_after(plan: StreamPlan, text: str) -> None:
    """One chunk reaches the caller, then the stream is cut (the driver's round, in the guard)."""
    with plan.guard():
        plan.feed(*_delta(text))
        raise KimiStreamError("cut", status_code=200)


def test_stream_error_keeps_what_arrived_and_the_request_id() -> None:
    plan = _plan(StreamPlan)
    plan.start_round(URL, "req-7")
    with pytest.raises(KimiStreamError) as info:
        _cut_after(plan, "partial ")
    error = info.value
    assert error.request_id == "req-7"
    assert error.partial is not None
    assert error.partial.content == "partial "


def test_stream_error_keeps_its_own_request_id() -> None:
    plan = _plan(StreamPlan)
    plan.start_round(URL, "req-7")
    with pytest.raises(KimiStreamError) as info, plan.guard():
        raise KimiStreamError("cut", status_code=500, request_id="req-own")
    assert info.value.request_id == "req-own"
    assert info.value.partial is None  # nothing arrived


def test_stream_error_before_any_round_has_no_request_id() -> None:
    plan = _plan(StreamPlan)
    with pytest.raises(KimiStreamError) as info, plan.guard():
        raise KimiStreamError("refused", status_code=500)
    assert info.value.request_id is None


def _invoke(text: str, stop: list[str]) -> AIMessage:
    plan = _plan(InvokePlan, stop=stop)
    plan.on_reply(_reply(text), URL)
    assert plan.pending is None
    message = plan.result().generations[0].message
    assert isinstance(message, AIMessage)
    return message


def test_invoke_stop_emulation_truncates_and_reports_the_stop() -> None:
    message = _invoke("keep END drop", ["END"])
    assert message.content == "keep "
    assert message.response_metadata["finish_reason"] == "stop"
    assert message.response_metadata["stop_sequence"] == "END"
    assert message.response_metadata["base_url"] == URL


def test_invoke_without_a_match_keeps_the_services_finish_reason() -> None:
    message = _invoke("no match", ["END"])
    assert message.content == "no match"
    assert message.response_metadata["finish_reason"] == "length"
    assert "stop_sequence" not in message.response_metadata


def test_invoke_native_stop_is_not_emulated() -> None:
    reply = {
        "id": "m1",
        "type": "message",
        "role": "assistant",
        "model": K31_PRO,
        "content": [{"type": "text", "text": "keep END drop"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    plan = _plan(InvokePlan, protocol="anthropic", stop=["END"])
    plan.on_reply(reply, URL)
    assert plan.result().generations[0].message.content == "keep END drop"


def test_invoke_result_before_any_reply_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match="ended without a reply"):
        _plan(InvokePlan).result()


def test_llm_output_has_the_usage_and_the_model() -> None:
    plan = _plan(InvokePlan)
    plan.on_reply(_reply("hi"), URL)
    output = plan.result().llm_output
    assert output is not None
    assert output["model_name"] == K31_PRO
    assert output["token_usage"]["total_tokens"] == 3


def test_llm_output_without_usage_names_the_requested_model() -> None:
    assert llm_output(AIMessage("hi"), "asked") == {"model_name": "asked"}
    named = AIMessage("hi", response_metadata={"model_name": "served"})
    assert llm_output(named, "asked") == {"model_name": "served"}


def test_token_text_is_the_text_or_empty_for_blocks() -> None:
    assert token_text(ChatGenerationChunk(message=AIMessageChunk(content="abc"))) == "abc"
    blocks = AIMessageChunk(content=[{"type": "text", "text": "abc"}])
    assert token_text(ChatGenerationChunk(message=blocks)) == ""


def test_unreadable_reply_names_the_first_line_of_the_parser_failure() -> None:
    plan = _plan(InvokePlan)
    with pytest.raises(KimiAPIError) as info, plan.readable("the reply", None, {}):
        raise ValueError("first line\nsecond line")
    assert "could not be read: ValueError first line" in str(info.value)
    assert "second line" not in str(info.value)
    assert info.value.status_code == 200  # the reply itself came with a 200


def test_unreadable_reply_body_keeps_non_ascii_text_and_is_capped() -> None:
    plan = _plan(InvokePlan)
    with pytest.raises(KimiAPIError) as info, plan.readable("the reply", None, {"x": "é"}):
        raise KeyError("choices")
    assert info.value.body == '{"x": "é"}'
    with pytest.raises(KimiAPIError) as info, plan.readable("the reply", None, "y" * 3000):
        raise KeyError("choices")
    assert info.value.body == "y" * 2000


def test_unreadable_event_that_is_not_json_names_the_parser_failure() -> None:
    # The data is no JSON document: there is no field to name, so the parser's error is named.
    plan = _plan(StreamPlan)
    with pytest.raises(KimiStreamError) as info, plan.readable("the event", "", "not json"):
        raise TypeError("no fields")
    assert "the event could not be read: TypeError no fields" in str(info.value)
    assert info.value.body == "not json"


# -- a call's plan from the model's settings (`for_call`) --------------------------------------


def _settings(**defaults: Any) -> PlanSettings:
    return PlanSettings(ModelDefaults(model=K31_PRO, protocol="openai", **defaults), 3, "sk-x")


def test_for_call_refuses_no_messages_before_anything() -> None:
    with pytest.raises(ValueError, match="at least one message"):
        InvokePlan.for_call([], None, {}, _settings())


def test_for_call_builds_the_first_body_of_its_kind() -> None:
    messages: list[Any] = [HumanMessage("hi")]
    invoke = InvokePlan.for_call(messages, ["END"], {"max_tokens": 5}, _settings())
    stream = StreamPlan.for_call(messages, None, {}, _settings())
    assert invoke.pending is not None
    assert stream.pending is not None
    assert invoke.options.stop == ("END",)
    assert invoke.pending["max_completion_tokens"] == 5
    assert "stream" not in invoke.pending
    assert stream.pending["stream"] is True


def test_for_call_warns_about_the_calls_own_sampling_only() -> None:
    # The model's own `temperature` was warned about at construction (once per setting).
    messages: list[Any] = [HumanMessage("hi")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        InvokePlan.for_call(messages, None, {}, _settings(temperature=0.2))
    assert caught == []
    with pytest.warns(UserWarning, match="temperature"):
        InvokePlan.for_call(messages, None, {"temperature": 0.2}, _settings())


# -- the words and the details of each refusal and error ---------------------------------------


def test_the_plan_refusals_word_for_word() -> None:
    with pytest.raises(ValueError) as none:
        InvokePlan.for_call([], None, {}, _settings())
    assert str(none.value) == "ChatKimi needs at least one message"
    with pytest.raises(RuntimeError) as early:
        _plan(InvokePlan).result()
    assert str(early.value) == "the call ended without a reply"
    for rounds, message in (
        (0, "max_builtin_rounds must be >= 1"),
        ("3", "max_builtin_rounds must be an integer >= 1, got '3'"),
        (True, "max_builtin_rounds must be an integer >= 1, got True"),
    ):
        with pytest.raises(ValueError) as info:
            check_max_builtin_rounds(rounds)
        assert str(info.value) == message
    assert check_max_builtin_rounds(1) == 1


def test_a_reply_that_cannot_be_read_names_itself_and_its_request() -> None:
    plan = _plan(InvokePlan)
    with pytest.raises(KimiAPIError) as info:
        plan.on_reply({"choices": 3}, URL, "req-9")
    assert str(info.value).startswith("the reply could not be read: ")
    assert info.value.request_id == "req-9"
    assert info.value.body == '{"choices": 3}'


def test_an_event_that_cannot_be_read_names_itself() -> None:
    plan = _plan(StreamPlan)
    plan.start_round(URL, "req-2")
    with pytest.raises(KimiStreamError) as info:
        plan.feed("chunk", '{"choices": 3}')
    assert str(info.value).startswith("the 'chunk' stream event could not be read: ")


def test_an_end_that_cannot_be_read_names_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _plan(StreamPlan)
    plan.start_round(URL, "req-3")

    def broken() -> list[AIMessageChunk]:
        raise KeyError("state")

    monkeypatch.setattr(plan.decoder, "finish", broken)
    with pytest.raises(KimiStreamError) as info:
        plan.finish_round()
    assert str(info.value).startswith("the end of the stream could not be read: KeyError 'state'")
    assert info.value.body == ""


def test_the_chunks_the_end_of_a_stream_gives_are_emitted() -> None:
    # A Messages stream may end after a `message_delta` with a stop reason and no
    # `message_stop`: the decoder's finish gives the last chunk.
    plan = _plan(StreamPlan, protocol="anthropic")
    plan.start_round(URL, "req-4")
    start = {
        "type": "message_start",
        "message": {
            "id": "m1",
            "type": "message",
            "role": "assistant",
            "model": K31_PRO,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 2},
    }
    for event in (start, delta):
        plan.feed(event["type"], json.dumps(event))
    last = plan.finish_round()
    assert [c.message.chunk_position for c in last] == ["last"]


def test_the_stop_filter_keeps_the_text_of_the_last_chunk_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan = _plan(StreamPlan, stop=["END"])
    plan.start_round(URL, "req-5")
    last = AIMessageChunk(content="tail E", chunk_position="last")
    monkeypatch.setattr(plan.decoder, "feed", lambda event, data: [last])
    (chunk,) = plan.feed("", "{}")
    assert chunk.message.content == "tail E"  # "E" held back, then flushed: the stream ended


def test_a_last_chunk_of_blocks_under_the_stop_filter_keeps_the_held_text_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan = _plan(StreamPlan, stop=["END"])
    plan.start_round(URL, "req-6")
    last = AIMessageChunk(content=[{"type": "text", "text": "a"}], chunk_position="last")
    monkeypatch.setattr(plan.decoder, "feed", lambda event, data: [last])
    (chunk,) = plan.feed("", "{}")
    assert chunk.message.content == ""


def test_llm_output_takes_the_messages_usage_object_too() -> None:
    anthropic_style = AIMessage("hi", response_metadata={"usage": {"input_tokens": 1}})
    assert llm_output(anthropic_style, "asked") == {
        "model_name": "asked",
        "token_usage": {"input_tokens": 1},
    }


def test_a_reply_without_a_model_reports_the_requested_one() -> None:
    plan = _plan(InvokePlan)
    reply = _reply("hi")
    del reply["model"]
    plan.on_reply(reply, URL)
    output = plan.result().llm_output
    assert output is not None
    assert output["model_name"] == K31_PRO
