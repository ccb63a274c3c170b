"""The questions the published documents leave open, each answered by a live run.

One entry per question: adding a question is adding one `Question` to `QUESTIONS`. `ask` gets
a `Probe` (raw requests, captured and spec-checked like everything else) and the exchanges the
suites produced, and returns a one-line answer for the report table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_kimi._contract import FOREIGN_TURN_REASONING
from langchain_kimi.protocols.openai_chat.web_search import next_body
from tools.authoring._shared import IMAGE_URL
from tools.live.checks import stream_payloads
from tools.live.exchanges import Exchange
from tools.live.probe import Probe, authored_request

# The stand-in ChatKimi sends for reasoning it does not have (a turn written by another model):
# the library's own constant, so a live run settles exactly what ChatKimi sends.
PLACEHOLDER_REASONING = FOREIGN_TURN_REASONING
WRONG_KEY = "not-a-valid-key"


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    ask: Callable[[Probe, Sequence[Exchange]], str]


def _body(exchange: Exchange) -> Any:
    try:
        return json.loads(exchange.response_body)
    except ValueError:
        return None


def _outcome(exchange: Exchange) -> str:
    if exchange.status == 200:
        return "accepted (200)"
    if not exchange.status:
        return f"no answer ({exchange.response_body[:80]})"
    return f"rejected ({exchange.status}: {_error_message(exchange)[:80]})"


def _error_message(exchange: Exchange) -> str:
    body = _body(exchange)
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("message")) if isinstance(error, dict) else exchange.response_body[:80]


def _shape(value: Any) -> Any:
    """The keys of a JSON value, recursively, without its text: `{error: {message, type}}`."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in sorted(value.items())}
    return type(value).__name__


def _streams(exchanges: Sequence[Exchange], protocol: str) -> list[Exchange]:
    return [e for e in exchanges if e.protocol == protocol and e.status == 200 and e.is_stream]


# --------------------------------------------------------------------------- the questions


def messages_stream_end(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    probe.post("anthropic", authored_request("core_cassettes/anthropic_plain.yaml", 1))
    streams = _streams([*exchanges, *probe.log.items], "anthropic")
    endings = [stream_payloads(e)[-1][0] if stream_payloads(e) else "(empty)" for e in streams]
    others = sorted({name for name in endings if name != "message_stop"})
    if not streams:
        return "no Messages stream observed"
    if not others:
        return f"yes ({len(streams)} of {len(streams)} streams)"
    missing = sum(name != "message_stop" for name in endings)
    return f"no: {missing} of {len(streams)} streams end with {', '.join(others)}"


def stop_sequence_reason(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    exchange = probe.post("anthropic", authored_request("features_cassettes/anthropic_stop.yaml"))
    body = _body(exchange)
    if exchange.status != 200 or not isinstance(body, dict):
        return _outcome(exchange)
    answer = f"stop_reason={body.get('stop_reason')!s}, stop_sequence={body.get('stop_sequence')!s}"
    if body.get("stop_reason") == "max_tokens":
        return f"undetermined: the reply hit max_tokens first ({answer})"
    return answer


def k3_cache_writes_in_input(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    context = "Reference notes, repeated so the prompt is long enough to cache. " * 300
    body = {
        "model": "kimi-k3",
        "max_tokens": 2048,
        "system": context,
        "messages": [{"role": "user", "content": "Reply with OK."}],
    }
    exchange = probe.post("anthropic", body)
    usage = (_body(exchange) or {}).get("usage") if exchange.status == 200 else None
    if not isinstance(usage, dict):
        return _outcome(exchange)
    written, counted = usage.get("cache_creation_input_tokens") or 0, usage.get("input_tokens", 0)
    numbers = f"input_tokens={counted}, cache_creation_input_tokens={written}"
    if not written:
        return f"undetermined: no cache write reported ({numbers})"
    verdict = "yes, input_tokens >= cache writes" if counted >= written else "no"
    return f"{verdict} ({numbers})"


def chat_image_url(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    content = [
        {"type": "text", "text": "Describe the image in five words."},
        {"type": "image_url", "image_url": {"url": IMAGE_URL}},
    ]
    body = {"model": "kimi-k3.1-pro", "messages": [{"role": "user", "content": content}]}
    return _outcome(probe.post("openai", body))


def chat_stream_usage(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    probe.post("openai", authored_request("core_cassettes/openai_plain.yaml", 1))
    places: set[str] = set()
    streams = _streams([*exchanges, *probe.log.items], "openai")
    for exchange in streams:
        for _, chunk in stream_payloads(exchange):
            if not isinstance(chunk, dict):
                continue
            if chunk.get("usage") and not chunk.get("choices"):
                places.add("a trailing chunk (empty choices)")
            elif chunk.get("usage"):
                places.add("a chunk with choices")
            if any(isinstance(c, dict) and c.get("usage") for c in chunk.get("choices") or []):
                places.add("choices[0].usage")
    return " and ".join(sorted(places)) or f"nowhere ({len(streams)} streams)"


def chat_stop_accepted(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    body = {
        **authored_request("features_cassettes/openai_k3_stop.yaml"),
        "model": "kimi-k3.1-pro",
        "stop": ["END"],
    }
    body.pop("reasoning_effort", None)
    exchange = probe.post("openai", body)
    reply = _body(exchange)
    if exchange.status != 200 or not isinstance(reply, dict):
        return _outcome(exchange)
    choice = (reply.get("choices") or [{}])[0]
    text = str((choice.get("message") or {}).get("content") or "")
    honoured = "ignored (END in the text)" if "END" in text else "honoured"
    return f"accepted, {honoured}, finish_reason={choice.get('finish_reason')}"


def _error_shapes(probe: Probe, body: dict[str, dict[str, Any]], key: str | None = None) -> str:
    parts = []
    for protocol in ("anthropic", "openai"):
        exchange = probe.post(protocol, body[protocol], key=key)
        shape = json.dumps(_shape(_body(exchange))) if _body(exchange) is not None else "not JSON"
        parts.append(f"{protocol}: HTTP {exchange.status} {shape}")
    return "; ".join(parts)


def error_400(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    broken = {"model": "kimi-k3.1-pro", "messages": "not a list"}
    return _error_shapes(probe, {"anthropic": {**broken, "max_tokens": 16}, "openai": broken})


def error_401(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    ok = {
        "anthropic": authored_request("core_cassettes/anthropic_plain.yaml"),
        "openai": authored_request("core_cassettes/openai_plain.yaml"),
    }
    return _error_shapes(probe, ok, key=WRONG_KEY)


def error_429(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    seen = [e for e in exchanges if e.status == 429]
    if not seen:
        return "not observed in this run"
    return "; ".join(sorted({f"{e.protocol}: {json.dumps(_shape(_body(e)))}" for e in seen}))


def fallback_answers(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    if probe.fallback_url is None:
        return "not in play (custom base URL)"
    status, error = probe.get(probe.fallback_url)
    return f"yes (HTTP {status})" if status is not None else f"no ({error})"


def _weather_turns(assistant: dict[str, Any], result: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "Weather in Oslo? Use the tool."}, assistant, result]


_WEATHER_TOOL_CHAT = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
_WEATHER_TOOL_MESSAGES = {
    "name": "get_weather",
    "description": "Weather for a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def chat_tool_turn_without_reasoning(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
    }
    result = {"role": "tool", "tool_call_id": "call_1", "content": "12°C, rain"}
    outcomes = []
    for label, extra in (
        ("without", {}),
        ("placeholder", {"reasoning_content": PLACEHOLDER_REASONING}),
    ):
        assistant = {"role": "assistant", "content": "", "tool_calls": [call], **extra}
        body = {
            "model": "kimi-k3.1-pro",
            "messages": _weather_turns(assistant, result),
            "tools": [_WEATHER_TOOL_CHAT],
        }
        outcomes.append(f"{label}: {_outcome(probe.post('openai', body))}")
    return "; ".join(outcomes)


def messages_tool_turn_without_thinking(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    use = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "12°C, rain"}],
    }
    placeholder = {"type": "thinking", "thinking": PLACEHOLDER_REASONING}
    outcomes = []
    for label, blocks in (("without", [use]), ("placeholder", [placeholder, use])):
        assistant = {"role": "assistant", "content": blocks}
        body = {
            "model": "kimi-k3.1-pro",
            "max_tokens": 2048,
            "messages": _weather_turns(assistant, result),
            "tools": [_WEATHER_TOOL_MESSAGES],
        }
        outcomes.append(f"{label}: {_outcome(probe.post('anthropic', body))}")
    return "; ".join(outcomes)


def web_search_limit_answer(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """ChatKimi's stand-in `tool` answer for a `$web_search` call beyond `max_uses`
    (`SEARCH_LIMIT_REACHED`): accepted, and does the model answer without searching again?"""
    sent = authored_request("web_search/openai_loop.yaml")
    first = probe.post("openai", sent)
    reply = _body(first)
    if first.status != 200 or not isinstance(reply, dict):
        return _outcome(first)
    assistant = ((reply.get("choices") or [{}])[0]).get("message") or {}
    if not any(c.get("type") == "builtin_function" for c in assistant.get("tool_calls") or []):
        return "undetermined: the model did not search in the first round"
    # Exactly the follow-up ChatKimi sends once the cap is reached: no search may run.
    second = probe.post("openai", next_body(sent, assistant, allowed=0))
    answer = _body(second)
    if second.status != 200 or not isinstance(answer, dict):
        return _outcome(second)
    choice = (answer.get("choices") or [{}])[0]
    calls = (choice.get("message") or {}).get("tool_calls") or []
    searches = sum(c.get("type") == "builtin_function" for c in calls)
    if searches:
        return f"accepted, but the model asked to search again ({searches} call(s))"
    return f"accepted, answered without searching (finish_reason={choice.get('finish_reason')})"


QUESTIONS: tuple[Question, ...] = (
    Question(
        "messages-stream-end",
        "Does a Messages stream always end with message_stop?",
        messages_stream_end,
    ),
    Question(
        "stop-sequence-reason",
        "Which stop_reason does a stop-sequence match give (Messages)?",
        stop_sequence_reason,
    ),
    Question(
        "k3-cache-writes",
        "Does kimi-k3 include cache writes in Messages input_tokens?",
        k3_cache_writes_in_input,
    ),
    Question(
        "chat-image-url", "Are http(s) image URLs accepted on Chat Completions?", chat_image_url
    ),
    Question(
        "chat-stream-usage",
        "Where does streaming usage arrive on Chat Completions?",
        chat_stream_usage,
    ),
    Question("chat-stop", "Is `stop` accepted on Chat Completions?", chat_stop_accepted),
    Question("error-400", "What error body does a 400 have?", error_400),
    Question("error-401", "What error body does a 401 have?", error_401),
    Question("error-429", "What error body does a 429 have?", error_429),
    Question("fallback", "Is the fallback base URL answering?", fallback_answers),
    Question(
        "chat-tool-turn-reasoning",
        "Chat: is an assistant tool-call turn without reasoning_content rejected, and is a placeholder accepted?",
        chat_tool_turn_without_reasoning,
    ),
    Question(
        "web-search-limit-answer",
        "Chat: is ChatKimi's stand-in answer for a $web_search call beyond max_uses accepted, and does the model answer without searching again?",
        web_search_limit_answer,
    ),
    Question(
        "messages-tool-turn-thinking",
        "Messages: is an assistant tool-call turn without a thinking block rejected, and is a placeholder accepted?",
        messages_tool_turn_without_thinking,
    ),
)


def answer_all(probe: Probe, exchanges: Sequence[Exchange]) -> list[tuple[Question, str]]:
    answers = []
    for question in QUESTIONS:
        probe.question = question.id
        try:
            answers.append((question, question.ask(probe, exchanges)))
        except Exception as exc:  # one broken probe must not hide the other answers
            answers.append((question, f"probe failed: {type(exc).__name__}: {exc}"))
    return answers
