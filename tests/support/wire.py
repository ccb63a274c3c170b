"""A ChatKimi on the fake gateway (`FakeKimiGateway`, which checks every request body against
the published documents and answers 400 where the service would), and minimal raw replies
built from the fake's own pieces (`langchain_kimi.testing.frames`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_kimi.testing import FakeKimiGateway, frames
from tests.support.gateways import K31, only_request

# The smallest valid replies, answering "ok" with only the required usage counts (and none on
# Chat Completions), for tests that edit a reply into a shape of their own (raw steps).
ANTHROPIC_OK = frames.anthropic_message(
    "msg_01Ok",
    K31,
    [{"type": "text", "text": "ok"}],
    "end_turn",
    {"input_tokens": 1, "output_tokens": 1},
)
OPENAI_OK = {
    k: v
    for k, v in frames.openai_completion(
        "chatcmpl-ok", K31, {"role": "assistant", "content": "ok"}, "stop", {}
    ).items()
    if k != "usage"
}


_ARGS = {"get_weather": {"city": "Oslo"}}
"""The arguments of the tools the tests bind, when a reply calls one."""


class Wire:
    """A ChatKimi on a fake gateway answering "ok" to every request (or a call of each tool
    named in `calls`, for a request that forces one; or `reply`, a raw step: a JSON body or an
    event stream); the bodies sent are in `bodies`."""

    def __init__(
        self, protocol: str, model: str = K31, reply: Any = None, calls: Sequence[str] = ()
    ) -> None:
        self.protocol = protocol
        self.gateway = FakeKimiGateway()
        if calls:
            tool_calls = [{"name": name, "args": _ARGS.get(name, {})} for name in calls]
            self.gateway.add_reply(tool_calls=tool_calls, repeat=True)
        elif reply is None:
            self.gateway.add_reply(text="ok", repeat=True)
        else:
            self.gateway.add_raw(reply, repeat=True)
        self.bodies = self.gateway.requests
        self.model = self.gateway.chat_model(protocol=protocol, model=model)

    @property
    def body(self) -> dict[str, Any]:
        return only_request(self.gateway)
