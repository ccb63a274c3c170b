"""Protocol adapters: everything about one gateway wire protocol lives in its subpackage.

Code outside `protocols/` reaches a protocol only through this module: `adapter(protocol)` gives
its `ProtocolAdapter`. Both subpackages have the same file roles (a reader who knows one knows the
other):

- ``request.py``: ``build_request(messages, options) -> dict``, the JSON body (no I/O); it refuses
  only shapes the wire cannot express (capability refusals live in `_request/resolve.py`).
- ``content.py``: LangChain message content -> the wire's content (user parts, tool results,
  assistant replay).
- ``response.py``: ``parse_response(body) -> AIMessage`` for a non-streaming reply.
- ``stream.py``: ``StreamDecoder`` (a `JsonEventDecoder`), SSE events -> `AIMessageChunk`s.
- ``content_blocks.py``: its half of the ``"kimi"`` standard-block translator.
- ``shapes.py``: the documented shapes of its replies and events, naming the field of a reply
  the parser could not read (``bad_field``).
- ``rounds`` (the adapter's `new_rounds`): when one call takes several requests.
"""

from __future__ import annotations

from langchain_kimi._request.profiles import Protocol
from langchain_kimi.protocols.anthropic_messages import ADAPTER as _ANTHROPIC
from langchain_kimi.protocols.interfaces import (
    CallRounds,
    FollowUp,
    ProtocolAdapter,
    SingleRound,
    StreamDecoder,
)
from langchain_kimi.protocols.openai_chat import ADAPTER as _OPENAI

_ADAPTERS: dict[Protocol, ProtocolAdapter] = {"anthropic": _ANTHROPIC, "openai": _OPENAI}


def adapter(protocol: Protocol) -> ProtocolAdapter:
    """The adapter of `"openai"` or `"anthropic"`."""
    return _ADAPTERS[protocol]


__all__ = ["CallRounds", "FollowUp", "ProtocolAdapter", "SingleRound", "StreamDecoder", "adapter"]
