"""The open questions' checks on answers the loopback gateway cannot give: the real probe, its
HTTP client answering as the live service might, and each check must settle its question.

(The faithful loopback run in `test_live_offline.py` covers every question end to end.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from langchain_kimi.testing import frames
from tools.live import questions
from tools.live.exchanges import ENDPOINTS, Exchange, ExchangeLog
from tools.live.probe import Probe

BASE_URL = "https://gateway.example"

Gateway = Callable[[str, dict[str, Any], dict[str, str]], tuple[int, Any]]


@dataclass
class Scripted:
    """A real `Probe` whose HTTP client answers through `gateway(protocol, body, headers)`."""

    gateway: Gateway
    costly: bool = True
    sent: list[tuple[str, dict[str, Any], dict[str, str]]] = field(default_factory=list)

    @property
    def probe(self) -> Probe:
        client = httpx.Client(transport=httpx.MockTransport(self._answer))
        return Probe(BASE_URL, "test-key", ExchangeLog(), costly=self.costly, _client=client)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        protocol, body = ENDPOINTS[request.url.path], json.loads(request.content)
        headers = dict(request.headers)
        self.sent.append((protocol, body, headers))
        status, reply = self.gateway(protocol, body, headers)
        return httpx.Response(status, json=reply)


def _exchange(protocol: str, status: int, reply: Any) -> Exchange:
    path = next(path for path, name in ENDPOINTS.items() if name == protocol)
    return Exchange(
        method="POST",
        url=BASE_URL + path,
        request_headers={},
        request_body="{}",
        status=status,
        response_headers={"content-type": "application/json"},
        response_body=json.dumps(reply),
    )


def _message(model: str = "kimi-k3.1-pro", **fields: Any) -> dict[str, Any]:
    """The smallest Messages reply (the fake gateway's pieces), with `fields` replaced."""
    content = [{"type": "text", "text": "ok"}]
    usage = {"input_tokens": 1, "output_tokens": 1}
    return {**frames.anthropic_message("msg_fake", model, content, "end_turn", usage), **fields}


def _refused(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def test_near_full_context_sizes_the_prompt_from_the_calibration_and_reports_a_refusal() -> None:
    per_repeat = 12  # input tokens the filler costs per repetition, as the calibration measures

    def gateway(protocol: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        repeats = body["messages"][0]["content"].count(questions._FILLER)
        if body["max_tokens"] == 16:
            return 200, _message(usage={"input_tokens": repeats * per_repeat, "output_tokens": 16})
        return 400, _refused("max_tokens + input exceeds the context window")

    scripted = Scripted(gateway)
    answer = questions.max_tokens_near_full_context(scripted.probe, [])
    assert answer == "refused: rejected (400: max_tokens + input exceeds the context window)"
    (_, calibration, _), (_, big, _) = scripted.sent
    assert calibration["max_tokens"] == 16
    assert big["max_tokens"] == questions.MESSAGES_MAX_TOKENS == 131_072
    tokens = big["messages"][0]["content"].count(questions._FILLER) * per_repeat
    # Input alone fits the window, input + max_tokens does not.
    assert questions.CONTEXT_WINDOW - 131_072 < tokens < questions.CONTEXT_WINDOW


def test_near_full_context_reports_an_accepted_request_with_its_numbers() -> None:
    def gateway(protocol: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        repeats = body["messages"][0]["content"].count(questions._FILLER)
        usage = {"input_tokens": repeats * 12, "output_tokens": 40_000}
        return 200, _message(usage=usage, stop_reason="max_tokens")

    answer = questions.max_tokens_near_full_context(Scripted(gateway).probe, [])
    assert answer.startswith("accepted, not refused: input_tokens=98")
    assert answer.endswith("output_tokens=40000, stop_reason=max_tokens")


def test_near_full_context_is_not_asked_without_costly_and_sends_nothing() -> None:
    scripted = Scripted(lambda *_: (500, "unused"), costly=False)
    answer = questions.max_tokens_near_full_context(scripted.probe, [])
    assert answer.startswith("not asked: needs --costly")
    assert scripted.sent == []


def test_429_bodies_are_quoted_under_the_error_chatkimi_makes_of_them() -> None:
    rate = {"error": {"message": "Rate limit reached", "type": "rate_limit_error", "code": "rl"}}
    quota = _refused("Your credit balance is too low")
    quota["error"]["type"] = "insufficient_quota"
    seen = [
        _exchange("openai", 429, rate),
        _exchange("anthropic", 429, quota),
        _exchange("openai", 429, rate),
    ]
    answer = questions.error_429(Scripted(lambda *_: (500, "unused")).probe, seen)
    assert answer == (
        f"KimiQuotaExceededError (anthropic): {json.dumps(quota)}; "
        f"KimiRateLimitError (openai): {json.dumps(rate)}"
    )


def test_reply_model_echo_names_a_dated_id() -> None:
    def gateway(protocol: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        named = "kimi-k3-0901" if body["model"] == "kimi-k3" else body["model"]
        if protocol == "anthropic":
            return 200, _message(model=named)
        return 200, {"id": "c", "object": "chat.completion", "model": named, "choices": []}

    answer = questions.reply_model_echo(Scripted(gateway).probe, [])
    assert (
        answer
        == "no: anthropic kimi-k3 -> kimi-k3-0901, openai kimi-k3 -> kimi-k3-0901 (6 replies)"
    )


def test_stop_sequence_reason_says_yes_for_stop_sequence() -> None:
    def gateway(protocol: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        return 200, _message(stop_reason="stop_sequence", stop_sequence="END")

    answer = questions.stop_sequence_reason(Scripted(gateway).probe, [])
    assert answer == "yes: stop_reason=stop_sequence, stop_sequence=END"


def test_anthropic_version_is_needed_when_only_the_request_with_it_passes() -> None:
    def gateway(protocol: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        if "anthropic-version" in headers:
            return 200, _message()
        return 400, _refused("anthropic-version: header is required")

    answer = questions.anthropic_version(Scripted(gateway).probe, [])
    assert answer == (
        "yes: without it rejected (400: anthropic-version: header is required); "
        "with 2023-06-01 accepted (200)"
    )


def test_tool_history_questions_compare_with_their_control() -> None:
    def gateway(protocol: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        declared = {
            (t.get("name") or t.get("function", {}).get("name")) for t in body.get("tools", [])
        }
        if "get_weather" not in declared:
            return 400, _refused("tool get_weather used in messages is not declared in tools")
        return 200, _message(model=body["model"])

    scripted = Scripted(gateway)
    probe = scripted.probe
    k3 = questions.k3_tool_blocks_without_tools(probe, [])
    assert k3 == (
        "with tools: accepted (200); without tools: rejected (400: tool get_weather used in "
        "messages is not declared in tools)"
    )
    omitted = questions.tools_omit_history_tools(probe, [])
    assert omitted.count("declared accepted (200), omitted rejected (400") == 2
    # The history is the same in control and test: only `tools` differs.
    bodies = [body for _, body, _ in scripted.sent]
    assert bodies[0]["messages"] == bodies[1]["messages"]
    assert bodies[0]["model"] == "kimi-k3"


def test_reply_optional_fields_lists_the_silent_keys_a_reply_sent() -> None:
    full = _message(usage={"input_tokens": 3, "cache_read_input_tokens": 0, "output_tokens": 1})
    cut = {"id": "m", "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}
    exchanges = [_exchange("anthropic", 200, full), _exchange("anthropic", 200, cut)]
    answer = questions.reply_optional_fields(Scripted(lambda *_: (500, {})).probe, exchanges)
    assert answer == (
        "1 of 2 replies carry none; sent though empty: anthropic role (1), "
        "anthropic stop_sequence (1), anthropic type (1), "
        "anthropic usage.cache_read_input_tokens (1)"
    )
