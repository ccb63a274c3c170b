"""The open questions' checks on answers the loopback gateway cannot give: a scripted probe
returns what the live service might, and each check must settle its question from it.

(The faithful loopback run in `test_live_offline.py` covers every question end to end.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tools.live import questions
from tools.live.exchanges import Exchange, ExchangeLog

PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
Answer = Callable[[str, dict[str, Any], dict[str, str]], tuple[int, Any]]


def _exchange(protocol: str, body: dict[str, Any], status: int, reply: Any) -> Exchange:
    return Exchange(
        method="POST",
        url=f"https://gateway.example{PATHS[protocol]}",
        request_headers={},
        request_body=json.dumps(body),
        status=status,
        response_headers={"content-type": "application/json"},
        response_body=reply if isinstance(reply, str) else json.dumps(reply),
    )


@dataclass
class ScriptedProbe:
    """Quacks like `tools.live.probe.Probe`; `answer` plays the gateway."""

    answer: Answer
    costly: bool = True
    fallback_url: str | None = None
    log: ExchangeLog = field(default_factory=ExchangeLog)
    sent: list[tuple[str, dict[str, Any], dict[str, str]]] = field(default_factory=list)

    def post(
        self,
        protocol: str,
        body: dict[str, Any],
        *,
        key: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Exchange:
        self.sent.append((protocol, body, headers or {}))
        status, reply = self.answer(protocol, body, headers or {})
        exchange = _exchange(protocol, body, status, reply)
        self.log.add(exchange)
        return exchange


def _message(model: str = "kimi-k3.1-pro", **fields: Any) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "OK"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 3},
        **fields,
    }


def _refused(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def test_near_full_context_sizes_the_prompt_from_the_calibration_and_reports_a_refusal() -> None:
    per_repeat = 12  # input tokens the filler costs per repetition, as the calibration measures

    def gateway(protocol: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        repeats = body["messages"][0]["content"].count(questions._FILLER)
        if body["max_tokens"] == 16:
            return 200, _message(usage={"input_tokens": repeats * per_repeat, "output_tokens": 16})
        return 400, _refused("max_tokens + input exceeds the context window")

    probe = ScriptedProbe(gateway)
    answer = questions.max_tokens_near_full_context(probe, [])  # type: ignore[arg-type]
    assert answer == ("refused: rejected (400: max_tokens + input exceeds the context window)")
    (_, calibration, _), (_, big, _) = probe.sent
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

    answer = questions.max_tokens_near_full_context(ScriptedProbe(gateway), [])  # type: ignore[arg-type]
    assert answer.startswith("accepted, not refused: input_tokens=98")
    assert answer.endswith("output_tokens=40000, stop_reason=max_tokens")


def test_near_full_context_is_not_asked_without_costly_and_sends_nothing() -> None:
    probe = ScriptedProbe(lambda *_: (500, "unused"), costly=False)
    answer = questions.max_tokens_near_full_context(probe, [])  # type: ignore[arg-type]
    assert answer.startswith("not asked: needs --costly")
    assert probe.sent == []


def test_429_bodies_are_quoted_under_the_error_chatkimi_makes_of_them() -> None:
    rate = {"error": {"message": "Rate limit reached", "type": "rate_limit_error", "code": "rl"}}
    quota = _refused("Your credit balance is too low")
    quota["error"]["type"] = "insufficient_quota"
    seen = [
        _exchange("openai", {"model": "kimi-k3"}, 429, rate),
        _exchange("anthropic", {"model": "kimi-k3"}, 429, quota),
        _exchange("openai", {"model": "kimi-k3"}, 429, rate),
    ]
    probe = ScriptedProbe(lambda *_: (500, "unused"))
    answer = questions.error_429(probe, seen)  # type: ignore[arg-type]
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

    answer = questions.reply_model_echo(ScriptedProbe(gateway), [])  # type: ignore[arg-type]
    assert (
        answer
        == "no: anthropic kimi-k3 -> kimi-k3-0901, openai kimi-k3 -> kimi-k3-0901 (6 replies)"
    )


def test_stop_sequence_reason_says_yes_for_stop_sequence() -> None:
    def gateway(protocol: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        return 200, _message(stop_reason="stop_sequence", stop_sequence="END")

    answer = questions.stop_sequence_reason(ScriptedProbe(gateway), [])  # type: ignore[arg-type]
    assert answer == "yes: stop_reason=stop_sequence, stop_sequence=END"


def test_anthropic_version_is_needed_when_only_the_request_with_it_passes() -> None:
    def gateway(protocol: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        if "anthropic-version" in headers:
            return 200, _message()
        return 400, _refused("anthropic-version: header is required")

    answer = questions.anthropic_version(ScriptedProbe(gateway), [])  # type: ignore[arg-type]
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

    probe = ScriptedProbe(gateway)
    k3 = questions.k3_tool_blocks_without_tools(probe, [])  # type: ignore[arg-type]
    assert k3 == (
        "with tools: accepted (200); without tools: rejected (400: tool get_weather used in "
        "messages is not declared in tools)"
    )
    omitted = questions.tools_omit_history_tools(probe, [])  # type: ignore[arg-type]
    assert omitted.count("declared accepted (200), omitted rejected (400") == 2
    # The history is the same in control and test: only `tools` differs.
    bodies = [body for _, body, _ in probe.sent]
    assert bodies[0]["messages"] == bodies[1]["messages"]
    assert bodies[0]["model"] == "kimi-k3"
