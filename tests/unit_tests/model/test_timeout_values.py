"""`timeout` is checked when the model is built: finite, > 0 and at most one day, per part.

Before this check a timeout of -1, NaN, infinity or 1e300 was accepted, and the first sync call
died inside `socket.py` (a bare `ValueError` / `OverflowError`) while async calls behaved
otherwise. A `None` part of an `httpx.Timeout` stays allowed: it is the caller's explicit "no limit
for this wait" (docs/errors.md, Timeouts).
"""

from __future__ import annotations

import math
from typing import Any

import httpx
import pytest

from docs import hooks
from langchain_kimi import ChatKimi
from langchain_kimi._settings import DEFAULT_TIMEOUT, MAX_TIMEOUT_SECONDS, transport_timeout
from tests.support.gateways import answering, offline
from tools.paths import ROOT

BAD_SECONDS = [-1, 0, -0.0, math.nan, math.inf, -math.inf, 1e300, MAX_TIMEOUT_SECONDS * 1.001]


def _sent_timeouts(timeout: Any) -> dict[str, float | None]:
    """The timeout the one request of a call carried (as httpx hands it to the transport)."""
    gateway = answering()
    seen: list[dict[str, float | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"])
        return gateway.transport.handle_request(request)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    ChatKimi(api_key="sk-test-timeouts", timeout=timeout, http_client=client).invoke("hi")
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("seconds", BAD_SECONDS, ids=repr)
def test_a_bad_number_is_refused_at_construction_saying_what_to_change(seconds: float) -> None:
    with pytest.raises(ValueError, match="timeout must be") as info:
        offline(timeout=seconds)
    message = str(info.value)
    assert "finite number of seconds > 0" in message
    assert f"at most {MAX_TIMEOUT_SECONDS:,.0f}" in message
    assert repr(float(seconds)) in message


@pytest.mark.parametrize("part", ["connect", "read", "write", "pool"])
@pytest.mark.parametrize("seconds", [-1.0, math.nan, math.inf, 1e300], ids=repr)
def test_a_bad_part_of_an_httpx_timeout_is_refused_naming_the_part(
    part: str, seconds: float
) -> None:
    timeout = httpx.Timeout(30.0, **{part: seconds})
    with pytest.raises(ValueError, match=rf"timeout\.{part} must be a finite number") as info:
        offline(timeout=timeout)
    assert repr(seconds) in str(info.value)


@pytest.mark.parametrize("seconds", [0.001, 20, MAX_TIMEOUT_SECONDS])
def test_a_good_number_is_every_part_of_the_timeout_sent(seconds: float) -> None:
    assert _sent_timeouts(seconds) == dict.fromkeys(("connect", "read", "write", "pool"), seconds)


def test_none_parts_stay_allowed_and_mean_no_limit_for_that_wait() -> None:
    assert _sent_timeouts(httpx.Timeout(60.0, read=None)) == {
        "connect": 60.0,
        "read": None,
        "write": 60.0,
        "pool": 60.0,
    }
    assert set(_sent_timeouts(httpx.Timeout(None)).values()) == {None}


def test_no_timeout_is_the_documented_default() -> None:
    assert transport_timeout(None) is DEFAULT_TIMEOUT
    assert _sent_timeouts(None) == DEFAULT_TIMEOUT.as_dict()


def test_a_bool_is_not_a_number_of_seconds() -> None:
    with pytest.raises(ValueError, match=r"timeout must be a number of seconds or an httpx"):
        transport_timeout(True)  # type: ignore[arg-type]


@pytest.mark.parametrize("how", ["assignment", "model_copy"])
def test_a_bad_timeout_set_after_construction_is_refused_before_sending(how: str) -> None:
    # Assignment and `model_copy(update=...)` skip validation; the transport is rebuilt from the
    # changed settings at the next call, and refuses there, before any byte.
    model = offline()
    if how == "assignment":
        model.timeout = math.nan
    else:
        model = model.model_copy(update={"timeout": -1})
    with pytest.raises(ValueError, match="timeout must be a finite number"):
        model.invoke("hi")


def test_the_limits_page_names_the_bound_the_code_applies() -> None:
    page = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    assert f"{MAX_TIMEOUT_SECONDS:,.0f} s" in page
    errors = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert f"{MAX_TIMEOUT_SECONDS:,.0f} s" in errors
    assert f"{MAX_TIMEOUT_SECONDS:,.0f} s" in hooks.fields_table()  # the `timeout` field's line
