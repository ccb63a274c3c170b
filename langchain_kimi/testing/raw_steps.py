"""Raw steps: an answer sent exactly as given, for tests of what the service should never send.

A raw step is what a scripted reply cannot be: a malformed or cut event stream, an unknown
field, a status with an odd body, a connection that drops. The gateway still judges the request
(a request the documents refuse gets the 400 first); only the answer is unchecked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

RawAnswer = httpx.Response | bytes | str | Mapping[str, Any] | BaseException
"""What `FakeKimiGateway.add_raw` takes: an `httpx.Response` (sent as it is), `bytes` or `str`
(an event stream body, sent with `content-type: text/event-stream`), a mapping (a JSON body) or
an exception (raised where the transport would raise it: `httpx.ConnectError`, ...)."""


@dataclass(frozen=True, eq=False)
class Raw:
    """One raw answer; two raw steps are the same answer only when they are the same object."""

    answer: httpx.Response | BaseException

    def response(self) -> httpx.Response:
        """A fresh response each time it is served (a repeating step is served many times):
        a response read in full is copied, one with a live stream is sent as it is."""
        answer = self.answer
        if isinstance(answer, BaseException):
            raise answer
        try:
            content = answer.content
        except httpx.ResponseNotRead:
            return answer
        return httpx.Response(answer.status_code, headers=answer.headers, content=content)


def raw_step(answer: RawAnswer, status: int, headers: Mapping[str, str] | None) -> Raw:
    """The `Raw` step `add_raw` scripts (see `RawAnswer` for what each kind is sent as)."""
    extra = dict(headers or {})
    if isinstance(answer, BaseException | httpx.Response):
        if extra or status != 200:
            raise ValueError("add_raw: status= and headers= go with a body, not a Response")
        return Raw(answer)
    if isinstance(answer, bytes | str):
        data = answer.encode("utf-8") if isinstance(answer, str) else answer
        extra.setdefault("content-type", "text/event-stream")
        return Raw(httpx.Response(status, content=data, headers=extra))
    if isinstance(answer, Mapping):
        return Raw(httpx.Response(status, json=dict(answer), headers=extra))
    msg = f"add_raw: a Response, bytes, str, a JSON mapping or an exception; got {answer!r}"
    raise ValueError(msg)
