"""A ChatKimi on the fake gateway whose every request body is validated against the published
schema, and the gateway's minimal replies with ids of their own."""

from __future__ import annotations

from typing import Any

from tests.support.fake_gateway import FakeGateway, minimal_reply
from tools.schema_validation import validate_request

K31 = "kimi-k3.1-pro"
# The fake gateway's minimal replies, with ids of their own (and no usage on Chat Completions).
ANTHROPIC_OK = {**minimal_reply({"model": K31}, "/v1/messages"), "id": "msg_01Ok"}
OPENAI_OK = {
    **{
        k: v
        for k, v in minimal_reply({"model": K31}, "/v1/chat/completions").items()
        if k != "usage"
    },
    "id": "chatcmpl-ok",
}


class Wire:
    """A ChatKimi on the fake gateway answering `reply`; every body sent is validated against
    the protocol's schema and kept in `bodies`."""

    def __init__(self, protocol: str, model: str = K31, reply: Any = None) -> None:
        default = ANTHROPIC_OK if protocol == "anthropic" else OPENAI_OK
        answer = reply if reply is not None else {**default, "model": model}

        def validated(body: dict[str, Any], _path: str) -> Any:
            validate_request(body, protocol, model)
            return answer

        self.protocol = protocol
        self.gateway = FakeGateway(validated)
        self.bodies = self.gateway.bodies
        self.model = self.gateway.model(protocol, model)

    @property
    def body(self) -> dict[str, Any]:
        return self.gateway.body
