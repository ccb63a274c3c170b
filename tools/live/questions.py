"""The questions the published documents leave open, each answered by a live run.

One entry per question: adding a question is adding one `Question` to `QUESTIONS`. `ask` gets
a `Probe` (raw requests, captured and spec-checked like everything else) and the exchanges the
suites produced, and returns a one-line answer for the report table.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema

from langchain_kimi._contract import FOREIGN_TURN_REASONING
from langchain_kimi._errors import error_from_response
from langchain_kimi._request.profiles import KNOWN_MODELS as MODELS
from langchain_kimi.protocols.openai_chat.web_search import next_body
from langchain_kimi.testing import minimal
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
    """A K3.1 Messages request whose `stop_sequences` the reply is asked to write (END): which
    `stop_reason` comes with a match? 000's enum has no `stop_sequence` (end_turn, max_tokens,
    tool_use, refusal, null), Anthropic's has."""
    exchange = probe.post("anthropic", authored_request("features_cassettes/anthropic_stop.yaml"))
    body = _body(exchange)
    if exchange.status != 200 or not isinstance(body, dict):
        return _outcome(exchange)
    reason, matched = body.get("stop_reason"), body.get("stop_sequence")
    answer = f"stop_reason={reason!s}, stop_sequence={matched!s}"
    if reason == "max_tokens":
        return f"undetermined: the reply hit max_tokens first ({answer})"
    if matched is None and reason != "stop_sequence":
        return f"undetermined: no stop sequence reported as matched ({answer})"
    return f"{'yes' if reason == 'stop_sequence' else 'no'}: {answer}"


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


def _usage_places(exchange: Exchange) -> set[str]:
    """Where a Chat stream carried `usage`."""
    places: set[str] = set()
    for _, chunk in stream_payloads(exchange):
        if not isinstance(chunk, dict):
            continue
        if chunk.get("usage") and not chunk.get("choices"):
            places.add("a trailing chunk (empty choices)")
        elif chunk.get("usage"):
            places.add("a chunk with choices")
        choices = chunk.get("choices")
        if isinstance(choices, list) and any(
            isinstance(c, dict) and c.get("usage") for c in choices
        ):
            places.add("choices[0].usage")
    return places


def chat_stream_usage(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """One streamed Chat request per model without `stream_options` (ChatKimi never sends it: 004
    does not name it): does usage arrive, and where?"""
    answers = []
    for model in MODELS:
        body = {**authored_request("core_cassettes/openai_plain.yaml", 1), "model": model}
        exchange = probe.post("openai", body)
        if exchange.status != 200 or not exchange.is_stream:
            answers.append(f"{model}: {_outcome(exchange)}")
            continue
        places = " and ".join(sorted(_usage_places(exchange)))
        answers.append(f"{model}: {'yes, in ' + places if places else 'no usage'}")
    return "; ".join(answers)


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
    """Every 429 of the run, body verbatim, under the error ChatKimi makes of it: a rate limit
    (`KimiRateLimitError`, retried) or an exhausted balance (`KimiQuotaExceededError`, not
    retried). 004 names both causes under one status; neither can be provoked on purpose without
    abusing the service or emptying the account, so this reports what the run met."""
    seen = [e for e in [*exchanges, *probe.log.items] if e.status == 429]
    if not seen:
        return "not observed in this run"
    bodies = {
        f"{type(error_from_response(429, e.response_body)).__name__} ({e.protocol}): "
        f"{e.response_body.strip()[:300]}"
        for e in seen
    }
    return "; ".join(sorted(bodies))


def fallback_answers(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    if probe.fallback_url is None:
        return "not in play (custom base URL)"
    status, error = probe.get(probe.fallback_url)
    return f"yes (HTTP {status})" if status is not None else f"no ({error})"


def _weather_turns(assistant: dict[str, Any], result: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "Weather in Oslo? Use the tool."}, assistant, result]


def _city_tool(name: str, description: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One tool taking a city, as Messages declares it and as Chat does."""
    parameters = {"type": "object", "properties": {"city": {"type": "string"}}}
    function = {"name": name, "description": description, "parameters": parameters}
    messages = {"name": name, "description": description, "input_schema": parameters}
    return messages, {"type": "function", "function": function}


_WEATHER_TOOL_MESSAGES, _WEATHER_TOOL_CHAT = _city_tool("get_weather", "Weather for a city.")
_TIME_TOOL_MESSAGES, _TIME_TOOL_CHAT = _city_tool("get_time", "Local time in a city.")


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
        verdict = f"accepted, but the model asked to search again ({searches} call(s))"
    else:
        verdict = (
            f"accepted, answered without searching (finish_reason={choice.get('finish_reason')})"
        )
    # The same follow-up with the arguments echoed (what runs the search): the difference in
    # prompt_tokens is what the search's results cost, and on which request it is billed.
    searched = probe.post("openai", next_body(sent, assistant))
    return f"{verdict}; billing: {_search_billing(first, second, searched)}"


def _prompt_tokens(exchange: Exchange) -> int | None:
    body = _body(exchange)
    usage = body.get("usage") if isinstance(body, dict) else None
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return tokens if isinstance(tokens, int) else None


def _search_billing(first: Exchange, stand_in: Exchange, searched: Exchange) -> str:
    counts = [_prompt_tokens(e) for e in (first, stand_in, searched)]
    if searched.status != 200 or None in counts:
        return f"undetermined (with the arguments: {_outcome(searched)})"
    asked, declined, ran = counts
    return (
        f"prompt_tokens {asked} for the request that asked to search, {declined} for the "
        f"follow-up with the stand-in, {ran} for the follow-up with the arguments "
        f"({ran - declined:+d}: the results are billed as input of the request that answers "
        "the call with its arguments)"
        if ran != declined
        else f"prompt_tokens {asked} / {declined} / {ran}: the follow-up with the arguments "
        "costs no more input than the stand-in (the search is not billed as prompt tokens)"
    )


def _reply_model(exchange: Exchange) -> str | None:
    """The model a reply names: the body's, `message_start`'s, or the first chunk's."""
    if not exchange.is_stream:
        body = _body(exchange)
        return str(body["model"]) if isinstance(body, dict) and "model" in body else None
    for _, payload in stream_payloads(exchange):
        if not isinstance(payload, dict):
            continue
        message = payload.get("message")
        named = message.get("model") if isinstance(message, dict) else payload.get("model")
        if named is not None:
            return str(named)
    return None


def reply_model_echo(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """Every successful reply of the run (suites and probes) against the `model` it was asked
    for; one small request per model x protocol the run had not covered yet."""
    covered = {(e.model, e.protocol) for e in [*exchanges, *probe.log.items] if e.status == 200}
    for model in MODELS:
        for protocol, cassette in (
            ("anthropic", "core_cassettes/anthropic_plain.yaml"),
            ("openai", "core_cassettes/openai_plain.yaml"),
        ):
            if (model, protocol) not in covered:
                probe.post(protocol, {**authored_request(cassette), "model": model})
    pairs = Counter(
        (e.protocol, e.model, _reply_model(e))
        for e in [*exchanges, *probe.log.items]
        if e.status == 200 and e.protocol is not None
    )
    differing = sorted(
        f"{protocol} {asked} -> {named}" for protocol, asked, named in pairs if asked != named
    )
    total = sum(pairs.values())
    if not differing:
        return (
            f"yes, exactly ({total} replies, {len({(p, a) for p, a, _ in pairs})} model x protocol)"
        )
    return f"no: {', '.join(differing)} ({total} replies)"


def _parts(exchange: Exchange) -> list[tuple[Any, Any]]:
    """(as sent, as `minimal.py` cuts it) for a reply's body or each of its stream payloads."""
    model = exchange.model
    if not exchange.is_stream:
        body = _body(exchange)
        if not isinstance(body, dict) or exchange.protocol is None:
            return []
        return [(body, minimal.reply(body, exchange.protocol, model))]
    cut = minimal.anthropic_event if exchange.protocol == "anthropic" else minimal.openai_chunk
    return [(p, cut(p, model)) for _, p in stream_payloads(exchange) if isinstance(p, dict)]


def _dropped(sent: Any, kept: Any, path: str = "") -> set[str]:
    """The key paths `sent` has and `kept` does not (list items share their path)."""
    if isinstance(sent, dict) and isinstance(kept, dict):
        out = {f"{path}{k}" for k in sent if k not in kept}
        for key in kept:
            out |= _dropped(sent.get(key), kept[key], f"{path}{key}.")
        return out
    if isinstance(sent, list) and isinstance(kept, list):
        return set().union(*(_dropped(s, k, path) for s, k in zip(sent, kept, strict=False)))
    return set()


def reply_optional_fields(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """Every successful reply of the run against its cut (`langchain_kimi.testing.minimal`):
    which optional keys the service sends though they say nothing (what `FakeKimiGateway`
    serves by default) and how many replies come already cut (its strict form)."""
    replies = [e for e in [*exchanges, *probe.log.items] if e.status == 200 and e.protocol]
    if not replies:
        for protocol, cassette in (
            ("anthropic", "core_cassettes/anthropic_plain.yaml"),
            ("openai", "core_cassettes/openai_plain.yaml"),
        ):
            probe.post(protocol, authored_request(cassette))
        replies = [e for e in probe.log.items if e.status == 200 and e.protocol]
    seen: Counter[str] = Counter()
    bare = 0
    for exchange in replies:
        paths = set().union(*(_dropped(sent, kept) for sent, kept in _parts(exchange)))
        seen.update(f"{exchange.protocol} {p}" for p in paths)
        bare += not paths
    listed = ", ".join(f"{path} ({n})" for path, n in sorted(seen.items())) or "none"
    return f"{bare} of {len(replies)} replies carry none; sent though empty: {listed}"


def anthropic_version(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """The same Messages request without and with `anthropic-version: 2023-06-01` (Anthropic
    requires the header; 000 / 001 do not name it; ChatKimi sends it, an assumption this
    settles: `protocols/anthropic_messages/request.py` HEADERS)."""
    body = authored_request("core_cassettes/anthropic_plain.yaml")
    without = probe.post("anthropic", body)
    with_header = probe.post("anthropic", body, headers={"anthropic-version": "2023-06-01"})
    needed = without.status != 200 and with_header.status == 200
    return (
        f"{'yes' if needed else 'no'}: without it {_outcome(without)}; "
        f"with 2023-06-01 {_outcome(with_header)}"
    )


_CITY_PROPERTIES = {"city": {"type": "string"}, "population": {"type": "integer"}}
_STRICT_SCHEMA = {
    "type": "object",
    "properties": _CITY_PROPERTIES,
    "required": ["city", "population"],
    "additionalProperties": False,
}
_NON_STRICT_SCHEMA = {"type": "object", "properties": _CITY_PROPERTIES, "required": ["city"]}
"""Not strict: an optional property, and `additionalProperties` left open."""


def _json_reply(exchange: Exchange, schema: dict[str, Any]) -> str:
    body = _body(exchange)
    blocks = body.get("content") if isinstance(body, dict) else None
    text = "".join(
        str(b.get("text")) for b in blocks or [] if isinstance(b, dict) and b.get("type") == "text"
    )
    try:
        jsonschema.validate(json.loads(text), schema)
    except ValueError:
        return "reply is not JSON"
    except jsonschema.ValidationError as exc:
        return f"reply breaks the schema ({exc.message[:60]})"
    return "reply matches the schema"


def output_format_non_strict(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """K3.1 Messages `output_config.format` with a strict schema (control) and a non-strict one;
    000 calls the feature strict structured output and shows `additionalProperties: false`."""
    outcomes = []
    for label, schema in (("strict", _STRICT_SCHEMA), ("non-strict", _NON_STRICT_SCHEMA)):
        body = {
            "model": "kimi-k3.1-pro",
            "max_tokens": 2048,
            "messages": [{"role": "user", "content": "Name one large city in Portugal, as JSON."}],
            "output_config": {"format": {"type": "json_schema", "schema": schema}},
        }
        exchange = probe.post("anthropic", body)
        detail = f", {_json_reply(exchange, schema)}" if exchange.status == 200 else ""
        outcomes.append(f"{label}: {_outcome(exchange)}{detail}")
    return "; ".join(outcomes)


def _messages_weather_history(model: str) -> dict[str, Any]:
    """A Messages body whose history used get_weather (with the placeholder thinking ChatKimi
    sends for a turn it has no reasoning for), and no `tools`."""
    use = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}
    thinking = {"type": "thinking", "thinking": PLACEHOLDER_REASONING}
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "12°C, rain"}],
    }
    turns = _weather_turns({"role": "assistant", "content": [thinking, use]}, result)
    return {"model": model, "max_tokens": 2048, "messages": turns}


def _chat_weather_history(model: str) -> dict[str, Any]:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
    }
    assistant = {
        "role": "assistant",
        "content": "",
        "reasoning_content": PLACEHOLDER_REASONING,
        "tool_calls": [call],
    }
    result = {"role": "tool", "tool_call_id": "call_1", "content": "12°C, rain"}
    return {"model": model, "messages": _weather_turns(assistant, result)}


def k3_tool_blocks_without_tools(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """kimi-k3 Messages with tool_use / tool_result blocks in the history: with `tools` (control)
    and without (what `tool_choice="none"` used to send, 001 having no `none`)."""
    body = _messages_weather_history("kimi-k3")
    with_tools = probe.post("anthropic", {**body, "tools": [_WEATHER_TOOL_MESSAGES]})
    without = probe.post("anthropic", body)
    return f"with tools: {_outcome(with_tools)}; without tools: {_outcome(without)}"


def tools_omit_history_tools(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """kimi-k3.1-pro, both protocols: a history that used get_weather, with `tools` declaring it
    (control) and with `tools` declaring only another tool."""
    outcomes = []
    for protocol, body, weather, other in (
        (
            "anthropic",
            _messages_weather_history("kimi-k3.1-pro"),
            _WEATHER_TOOL_MESSAGES,
            _TIME_TOOL_MESSAGES,
        ),
        ("openai", _chat_weather_history("kimi-k3.1-pro"), _WEATHER_TOOL_CHAT, _TIME_TOOL_CHAT),
    ):
        declared = probe.post(protocol, {**body, "tools": [weather, other]})
        omitted = probe.post(protocol, {**body, "tools": [other]})
        outcomes.append(f"{protocol}: declared {_outcome(declared)}, omitted {_outcome(omitted)}")
    return "; ".join(outcomes)


def _search_request(**tool_keys: Any) -> dict[str, Any]:
    """The authored K3.1 Messages web-search request, not streamed, its tool given `tool_keys`."""
    body = {**authored_request("web_search/anthropic_search.yaml"), "stream": False}
    body["tools"] = [{**tool, **tool_keys} for tool in body["tools"]]
    return body


def messages_web_search_blocks(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """K3.1 Messages web search: the reply's block types in order, and the keys of the result
    items (000's `WebSearchResultBlock.content` is a list of open objects it does not describe:
    whether they carry `url`, `title`, `encrypted_content` is not documented)."""
    exchange = probe.post("anthropic", _search_request())
    reply = _body(exchange)
    if exchange.status != 200 or not isinstance(reply, dict):
        return _outcome(exchange)
    blocks = [b for b in reply.get("content") or [] if isinstance(b, dict)]
    order = " ".join(str(b.get("type")) for b in blocks)
    keys = sorted(
        {
            key
            for b in blocks
            if b.get("type") == "web_search_tool_result" and isinstance(b.get("content"), list)
            for item in b["content"]
            if isinstance(item, dict)
            for key in item
        }
    )
    return f"blocks: {order}; result item keys: {', '.join(keys) or '(none)'}"


def web_search_extra_keys(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """K3.1 Messages: the web search tool with `allowed_domains` (not in 000's `WebSearchTool`,
    which does not close the object either): accepted, and are the results from that domain?
    ChatKimi's `bind_tools` refuses such a tool."""
    exchange = probe.post("anthropic", _search_request(allowed_domains=["python.org"]))
    reply = _body(exchange)
    if exchange.status != 200 or not isinstance(reply, dict):
        return _outcome(exchange)
    urls = [
        str(item.get("url"))
        for b in reply.get("content") or []
        if isinstance(b, dict) and isinstance(b.get("content"), list)
        for item in b["content"]
        if isinstance(item, dict) and item.get("url")
    ]
    outside = [u for u in urls if "python.org" not in u]
    return f"accepted; {len(urls)} result URLs, {len(outside)} outside python.org"


def _tool_call_ids(exchange: Exchange) -> list[str]:
    """The ids of the tool calls a reply made (`tool_calls[].id`, `tool_use.id`)."""
    payloads = (
        [p for _, p in stream_payloads(exchange)] if exchange.is_stream else [_body(exchange)]
    )
    ids: list[str] = []
    for payload in payloads:
        if not isinstance(payload, dict):
            continue
        block = payload.get("content_block")
        if isinstance(block, dict) and block.get("type") == "tool_use":
            ids.append(str(block.get("id")))
        for item in payload.get("content") or []:
            if isinstance(item, dict) and item.get("type") == "tool_use":
                ids.append(str(item.get("id")))
        for choice in payload.get("choices") or []:
            message = (
                (choice.get("message") or choice.get("delta") or {})
                if isinstance(choice, dict)
                else {}
            )
            ids += [str(c["id"]) for c in message.get("tool_calls") or [] if c.get("id")]
    return ids


def tool_call_ids(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """The form of the tool-call ids the run's replies carried, per protocol (the documents fix
    none; other Kimi services use `functions.<name>:<n>`). ChatKimi keeps them as received."""
    forms: dict[str, set[str]] = {}
    for exchange in [*exchanges, *probe.log.items]:
        if exchange.status == 200 and exchange.protocol is not None:
            for call_id in _tool_call_ids(exchange):
                forms.setdefault(exchange.protocol, set()).add(_id_form(call_id))
    if not forms:
        return "no tool call observed in this run"
    return "; ".join(f"{p}: {', '.join(sorted(f))}" for p, f in sorted(forms.items()))


def _id_form(call_id: str) -> str:
    """An id's form: letters and punctuation kept, every run of digits or other letters shown
    as `N` / `x` past a known prefix (`functions.get_weather:0` -> `functions.get_weather:N`)."""
    head, sep, tail = call_id.rpartition(":")
    if sep and tail.isdigit():
        return f"{head}:N"
    prefix = call_id.split("_", 1)[0] if "_" in call_id else call_id[:4]
    return f"{prefix}_..."


CONTEXT_WINDOW = 1_048_576
MESSAGES_MAX_TOKENS = 131_072
"""What ChatKimi sends as `max_tokens` on Messages when the caller sets none."""
_FILLER = "Reference notes, repeated to fill the context window. "
_CALIBRATION_REPEATS = 1000


def max_tokens_near_full_context(probe: Probe, exchanges: Sequence[Exchange]) -> str:
    """Costly: a K3.1 Messages prompt of about 983,000 tokens (halfway between 1,048,576 −
    131,072 and 1,048,576) with `max_tokens` 131,072, so input + max_tokens exceeds the window
    while the input alone fits. A small request first measures the tokens of the filler."""
    if not probe.costly:
        return "not asked: needs --costly (one billed prompt of about 983,000 tokens)"

    def body(repeats: int, max_tokens: int) -> dict[str, Any]:
        content = _FILLER * repeats + "Reply with OK."
        return {
            "model": "kimi-k3.1-pro",
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": content}],
        }

    calibration = probe.post("anthropic", body(_CALIBRATION_REPEATS, 16))
    usage = _body(calibration).get("usage") if calibration.status == 200 else None
    measured = usage.get("input_tokens") if isinstance(usage, dict) else None
    per_repeat = measured / _CALIBRATION_REPEATS if isinstance(measured, int) else 0.0
    # A tokenizer gives between one token per character and one per eight characters.
    if not len(_FILLER) / 8 <= per_repeat <= len(_FILLER):
        return f"undetermined: the calibration request gave input_tokens={measured}"
    target = CONTEXT_WINDOW - MESSAGES_MAX_TOKENS // 2
    exchange = probe.post("anthropic", body(int(target / per_repeat), MESSAGES_MAX_TOKENS))
    reply = _body(exchange)
    if exchange.status != 200 or not isinstance(reply, dict):
        return f"refused: {_outcome(exchange)}"
    usage = reply.get("usage") or {}
    return (
        f"accepted, not refused: input_tokens={usage.get('input_tokens')} + max_tokens "
        f"{MESSAGES_MAX_TOKENS} > {CONTEXT_WINDOW}; output_tokens={usage.get('output_tokens')}, "
        f"stop_reason={reply.get('stop_reason')}"
    )


# Each id is also a row of `langchain_kimi/testing/assumptions.py` (the fake gateway's table of
# assumptions, in this order; tests/unit_tests/testing/test_fake_assumptions.py keeps the two
# equal): an answer from a live run is what flips that row's default.
QUESTIONS: tuple[Question, ...] = (
    Question(
        "messages-stream-end",
        "Does a Messages stream always end with message_stop?",
        messages_stream_end,
    ),
    Question(
        "stop-sequence-reason",
        "Messages: is stop_reason `stop_sequence` when a stop sequence matches?",
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
        "Chat: do streams carry usage without stream_options (each model), and where?",
        chat_stream_usage,
    ),
    Question("chat-stop", "Is `stop` accepted on Chat Completions?", chat_stop_accepted),
    Question("error-400", "What error body does a 400 have?", error_400),
    Question("error-401", "What error body does a 401 have?", error_401),
    Question(
        "error-429",
        "What exact 429 bodies come for a rate limit and for an exhausted balance?",
        error_429,
    ),
    Question("fallback", "Is the fallback base URL answering?", fallback_answers),
    Question(
        "chat-tool-turn-reasoning",
        "Chat: is an assistant tool-call turn without reasoning_content rejected, and is a placeholder accepted?",
        chat_tool_turn_without_reasoning,
    ),
    Question(
        "web-search-limit-answer",
        "Chat: is a $web_search call answered with text other than its arguments (ChatKimi's stand-in beyond max_uses) accepted, does the model answer without searching again, and when is a search billed?",
        web_search_limit_answer,
    ),
    Question(
        "messages-tool-turn-thinking",
        "Messages: is an assistant tool-call turn without a thinking block rejected, and is a placeholder accepted?",
        messages_tool_turn_without_thinking,
    ),
    Question(
        "reply-model-echo",
        "Does the reply's model echo the request's model id exactly?",
        reply_model_echo,
    ),
    Question(
        "anthropic-version",
        "Messages: is the anthropic-version header needed?",
        anthropic_version,
    ),
    Question(
        "output-format-non-strict",
        "K3.1 Messages: does output_config.format accept a non-strict schema?",
        output_format_non_strict,
    ),
    Question(
        "k3-tool-blocks-without-tools",
        "kimi-k3 Messages: is a request with tool blocks in its history and no tools accepted?",
        k3_tool_blocks_without_tools,
    ),
    Question(
        "tools-omit-history-tools",
        "K3.1: is a request whose tools omit a tool its history used accepted?",
        tools_omit_history_tools,
    ),
    Question(
        "max-tokens-near-full-context",
        "Messages: is max_tokens 131,072 with a near-full context clamped or refused?",
        max_tokens_near_full_context,
    ),
    Question(
        "messages-web-search-blocks",
        "K3.1 Messages web search: in which order do the blocks come, and what keys do the result items carry?",
        messages_web_search_blocks,
    ),
    Question(
        "web-search-extra-keys",
        "K3.1 Messages: is a web search tool with allowed_domains accepted, and does it restrict the results?",
        web_search_extra_keys,
    ),
    Question(
        "tool-call-ids",
        "What form do the service's tool-call ids have on each protocol?",
        tool_call_ids,
    ),
    Question(
        "reply-optional-fields",
        "Which keys the response schemas leave optional do the replies carry when they say nothing (a zero, a null, an empty value)?",
        reply_optional_fields,
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
