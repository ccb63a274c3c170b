"""Generated inputs: every one is either sent, as JSON the documents accept, or refused before
any byte leaves with a typed error or a `ValueError` / `TypeError` that says what to change.

Hypothesis draws a model (three models x two protocols, constructor fields included), a history
of every message type with every kind of content block (`tests/support/odd_inputs.py`) and the
call's keyword arguments (tools, tool_choice, stop, max_tokens, response_format, extra_body...),
then invokes or streams. The transport is an `httpx.MockTransport` in this process: it fails the
test when a body is not strict JSON or breaks the request schema of its model x protocol (the
package should have refused the input), and otherwise answers a minimal valid reply.

What counts as a failure: an exception that is not a `KimiError`, `ValueError` or `TypeError`
(a `KeyError`, `AttributeError`, `UnicodeEncodeError`, `RecursionError` from inside); a
`ValueError` / `TypeError` whose message is one of Python's own ("'NoneType' object is not
subscriptable", "Object of type X is not JSON serializable") rather than one saying what to
change; any error after a request was sent.

A fixed seed (`derandomize`), no example database and a fixed number of examples keep CI
deterministic (5-10 s on one core); `KIMI_GENERATED_INPUTS=5000` searches further.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import warnings
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import BaseMessage

from langchain_kimi import ChatKimi, KimiError
from langchain_kimi.testing import frames
from langchain_kimi.testing.documents import request_problems
from tests.support import odd_inputs

pytestmark = pytest.mark.timeout(120)

EXAMPLES = int(os.environ.get("KIMI_GENERATED_INPUTS", "500"))
"""500 keep the run at 5-10 s on one core; set the variable higher to search further."""
GENERATED = settings(
    derandomize=True,
    database=None,
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Python's own words for a programming error: an input refused with one of these was not
# refused at all, it broke something inside.
_PYTHON_INTERNALS = re.compile(
    "|".join(
        [
            r"object is not (subscriptable|iterable|callable)",
            r"object has no attribute",
            r"unhashable type",
            r"not supported between instances",
            r"can only concatenate",
            r"unsupported operand",
            r"must be str, not",
            r"expected str instance",
            r"cannot be interpreted as an integer",
            r"invalid literal for int",
            r"could not convert string to float",
            r"index out of range",
            r"'NoneType' object",
            r"codec can't",
            r"is not JSON serializable",
            r"takes \d+ positional argument",
            r"missing \d+ required",
            r"argument must be",
            r"^'[^']*'$",
        ]
    )
)


class Wire:
    """The in-process gateway: checks each body, answers a minimal reply."""

    def __init__(self, protocol: str, model: str) -> None:
        self.protocol = protocol
        self.model = model
        self.bodies: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.check_schema = True

    def handle(self, request: httpx.Request) -> httpx.Response:
        text = request.read().decode("utf-8")  # not UTF-8: fails the test here
        body = json.loads(text, parse_constant=_refuse_constant)
        self.bodies.append(body)
        if self.check_schema:
            self.problems += request_problems(body, self.protocol)
        if body.get("stream"):
            return httpx.Response(
                200, text=self._stream(), headers={"content-type": "text/event-stream"}
            )
        return httpx.Response(200, json=self._reply())

    def _reply(self) -> dict[str, Any]:
        if self.protocol == "openai":
            message = {"role": "assistant", "content": "ok", "reasoning_content": "r"}
            return frames.openai_completion("c1", self.model, message, "stop", _openai_usage())
        content = [{"type": "text", "text": "ok"}]
        return frames.anthropic_message("m1", self.model, content, "end_turn", _anthropic_usage())

    def _stream(self) -> str:
        if self.protocol == "openai":
            return frames.frame_openai(
                [
                    frames.openai_chunk("c1", self.model, {"role": "assistant", "content": "ok"}),
                    frames.openai_chunk("c1", self.model, {}, "stop", usage=_openai_usage()),
                ]
            )
        return frames.frame_anthropic(
            [
                frames.message_start("m1", self.model, _anthropic_usage()),
                frames.block_start(0, {"type": "text", "text": ""}),
                frames.block_delta(0, {"type": "text_delta", "text": "ok"}),
                frames.block_stop(0),
                frames.message_delta("end_turn", _anthropic_usage()),
                frames.MESSAGE_STOP,
            ]
        )


def _refuse_constant(name: str) -> Any:
    raise AssertionError(f"the body holds {name}, which is not JSON")


def _openai_usage() -> dict[str, Any]:
    return frames.openai_usage_counts(3, 1, 0)


def _anthropic_usage() -> dict[str, Any]:
    return frames.anthropic_usage_counts(3, 1, 0)


MODES = ("invoke", "stream", "ainvoke", "astream")


def _outcome(
    fields: dict[str, Any], history: list[BaseMessage], kwargs: dict[str, Any], *, mode: str
) -> tuple[Wire, BaseException | None]:
    wire = Wire(fields["protocol"], fields["model"])
    # `extra_body` and `model_kwargs` are sent as given, by design: only JSON is checked then.
    wire.check_schema = not (kwargs.get("extra_body") or fields.get("model_kwargs"))
    transport = httpx.MockTransport(wire.handle)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = ChatKimi(
                api_key="sk-test-generated-inputs",
                max_retries=0,
                fallback_base_url=None,
                http_client=httpx.Client(transport=transport),
                http_async_client=httpx.AsyncClient(transport=transport),
                **fields,
            )
            _call(model, history, kwargs, mode)
    except Exception as exc:  # the property judges it
        return wire, exc
    return wire, None


def _call(model: ChatKimi, history: list[BaseMessage], kwargs: dict[str, Any], mode: str) -> None:
    if mode == "invoke":
        model.invoke(history, **kwargs)
    elif mode == "stream":
        for _ in model.stream(history, **kwargs):
            pass
    elif mode == "ainvoke":
        asyncio.run(model.ainvoke(history, **kwargs))
    else:

        async def consume() -> None:
            async for _ in model.astream(history, **kwargs):
                pass

        asyncio.run(consume())


def _judge(wire: Wire, error: BaseException | None) -> None:
    assert wire.problems == [], f"sent a body the documents refuse: {wire.problems}"
    if error is None:
        return
    described = f"{type(error).__name__}: {error}"
    assert not wire.bodies, f"refused only after sending a request: {described}"
    assert isinstance(error, KimiError | ValueError | TypeError), described
    assert not isinstance(error, json.JSONDecodeError), f"a parser's own words: {described}"
    if not isinstance(error, KimiError):
        first_line = str(error).partition("\n")[0]
        assert not _PYTHON_INTERNALS.search(str(error)), f"a message from inside: {described}"
        assert first_line.strip(), f"an error without a message: {type(error).__name__}"


@GENERATED
@given(
    fields=odd_inputs.model_fields,
    history=odd_inputs.histories,
    kwargs=odd_inputs.call_kwargs,
    mode=st.sampled_from(MODES),
)
def test_every_input_is_sent_valid_or_refused_clearly_before_sending(
    fields: dict[str, Any], history: list[BaseMessage], kwargs: dict[str, Any], mode: str
) -> None:
    wire, error = _outcome(fields, history, kwargs, mode=mode)
    _judge(wire, error)
