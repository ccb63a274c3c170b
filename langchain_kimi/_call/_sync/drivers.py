# Generated from _async/drivers.py by tools/unasync.py: do not edit.
"""ChatKimi's call hooks (`_agenerate`, `_astream`): each round of a call's plan posted or
streamed, until the plan is done.

The plan (`_call/plans.py`) decides everything: which body to send, what a reply or an event
means, whether another round follows; a driver only carries out the I/O it asks for and hands
each chunk to the caller. `_call/_async/` is the source, `_call/_sync/` (`_generate`, `_stream`)
is generated from it by `tools/unasync.py` (`./dev lint` checks it is current): edit this file,
then run `python -m tools.unasync`.

Whatever ends a call early (an error, a cancellation, a `KeyboardInterrupt`, a caller that stops
reading) leaves through the `with` blocks: the stream is closed and its pool slot given back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult

from langchain_kimi._call.plans import InvokePlan, PlanSettings, StreamPlan, token_text
from langchain_kimi._http.transport import Transport


class CallingModel(Protocol):
    """What the drivers need of the model (`ChatKimi`): what its plans start from, its
    transport, and whether a stream's chunks keep their usage. It is positional-only in the
    hooks: a call's own keyword arguments (`model=...` among them) go to `kwargs`."""

    def _plan_settings(self) -> PlanSettings: ...

    def _transport(self) -> Transport: ...

    def _stream_usage(self, kwargs: dict[str, Any]) -> bool: ...


def generate(
    model: CallingModel,
    /,
    messages: list[BaseMessage],
    stop: list[str] | None = None,
    run_manager: CallbackManagerForLLMRun | None = None,  # noqa: ARG001 - LangChain's hook
    **kwargs: Any,
) -> ChatResult:
    """Post each body the plan asks for; the plan's result once it asks for none."""
    plan = InvokePlan.for_call(messages, stop, kwargs, model._plan_settings())
    transport = model._transport()  # after the plan: bad input is refused before a missing key
    while plan.pending is not None:
        with plan.guard():
            reply = transport.post_json(plan.adapter.path, plan.pending)
            plan.on_reply(reply.body, reply.base_url, reply.request_id)
    return plan.result()


def stream(
    model: CallingModel,
    /,
    messages: list[BaseMessage],
    stop: list[str] | None = None,
    run_manager: CallbackManagerForLLMRun | None = None,
    **kwargs: Any,
) -> Iterator[ChatGenerationChunk]:
    """Stream each body the plan asks for; every chunk goes to `on_llm_new_token`, then to the
    caller (without its usage when the call or the model says `stream_usage=False`)."""
    keep_usage = model._stream_usage(kwargs)
    plan = StreamPlan.for_call(messages, stop, kwargs, model._plan_settings())
    transport = model._transport()
    while plan.pending is not None:
        with plan.guard():
            with transport.stream_events(plan.adapter.path, plan.pending) as events:
                plan.start_round(events.base_url, events.request_id)
                for generation in read_round(plan, events):
                    if not keep_usage and isinstance(generation.message, AIMessageChunk):
                        generation.message.usage_metadata = None
                    if run_manager is not None:
                        run_manager.on_llm_new_token(token_text(generation), chunk=generation)
                    yield generation


def read_round(
    plan: StreamPlan, events: Iterable[tuple[str, str]]
) -> Iterator[ChatGenerationChunk]:
    """Every chunk of one round: its events up to the end event, then the round's last chunks."""
    for event, data in events:
        for generation in plan.feed(event, data):
            yield generation
        if plan.decoder.ended:
            break  # what follows the end event (silence, a reset, junk) is never read
    for generation in plan.finish_round():
        yield generation
