"""The constructor: strict arguments, peer names, base URL and header checks, warnings once.

Each refusal is checked at construction (no call made); each accepted form is checked on the
request that actually leaves (a recording httpx transport or a loopback server).
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import httpx
import pytest
from langchain_core.load import dumpd, load
from pydantic import AliasChoices, Field

from langchain_kimi import ChatKimi, KimiAPIError
from langchain_kimi._langchain.arguments import accepted_names, public_fields
from tests.support.gateways import answering

KEY = "test-key-not-real"


def _recording(sent: list[httpx.Request]) -> httpx.Client:
    """A client on the fake gateway that also keeps each request as sent (URL, headers)."""
    gateway = answering()

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return gateway.transport.handle_request(request)

    return httpx.Client(transport=httpx.MockTransport(handler))


def _model(sent: list[httpx.Request], **fields: Any) -> ChatKimi:
    fields.setdefault("api_key", KEY)
    fields.setdefault("max_retries", 0)
    return ChatKimi(http_client=_recording(sent), **fields)


# --- unknown arguments -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "suggestion"),
    [
        ("api_base", "base_url"),  # ChatDeepSeek
        ("openai_api_base", "base_url"),  # ChatOpenAI
        ("anthropic_api_url", "base_url"),  # ChatAnthropic
        ("base_ur", "base_url"),  # a typo
        ("openai_api_key", "api_key"),
        ("request_timeout", "timeout"),
        ("max_retry", "max_retries"),
        ("reasoning_efort", "reasoning_effort"),
        ("max_tokens_to_sample", "max_tokens"),  # ChatAnthropic's alias
        ("reasoning", "reasoning_effort"),  # ChatOpenAI's reasoning={"effort": ...}
        ("prompt_cache_options", "cache_ttl"),  # the Chat Completions field cache_ttl sets
        ("client", "http_client"),  # ChatOpenAI's SDK clients: an httpx client here
        ("root_async_client", "http_async_client"),
    ],
)
def test_unknown_argument_names_the_closest_field(argument: str, suggestion: str) -> None:
    with pytest.raises(ValueError, match=f"did you mean `{suggestion}`") as info:
        ChatKimi(api_key=KEY, **{argument: "x"})
    assert argument in str(info.value)
    assert "model_kwargs" in str(info.value)


@pytest.mark.parametrize("argument", ["openai_proxy", "proxy", "n", "frequency_penalty"])
def test_unknown_argument_without_a_close_field_is_refused(argument: str) -> None:
    with pytest.raises(ValueError, match="model_kwargs") as info:
        ChatKimi(api_key=KEY, **{argument: 2})
    assert argument in str(info.value)


@pytest.mark.parametrize("argument", ["top_k", "verbosity", "store", "betas"])
def test_a_peer_setting_is_not_taken_for_a_field_spelled_like_it(argument: str) -> None:
    # ChatAnthropic's top_k is not top_p, ChatOpenAI's verbosity (of the answer) not verbose;
    # store and betas are only as close to stop and tags as a loose match would find.
    with pytest.raises(ValueError, match="model_kwargs") as info:
        ChatKimi(api_key=KEY, **{argument: 1})
    assert "did you mean" not in str(info.value)


_BODY_FIELDS = "Undocumented request-body fields go in model_kwargs={...} (or extra_body={...})."


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"n": 2}, f"ChatKimi got unexpected argument `n`. {_BODY_FIELDS}"),
        (
            {"openai_api_key": "k", "api_base": "u"},
            "ChatKimi got unexpected arguments `api_base`, `openai_api_key`. For `api_base`, did "
            "you mean `base_url`? For `openai_api_key`, did you mean `api_key`? " + _BODY_FIELDS,
        ),
        (
            {"anthropic_proxy": "http://proxy.internal:3128"},
            "ChatKimi got unexpected argument `anthropic_proxy`. For `anthropic_proxy`, pass "
            "http_client=httpx.Client(proxy=...) and http_async_client=httpx.AsyncClient("
            "proxy=...) (or set HTTPS_PROXY). " + _BODY_FIELDS,
        ),
    ],
)
def test_the_refusal_names_every_unknown_argument_and_its_field(
    arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as info:
        ChatKimi(api_key=KEY, **arguments)
    assert f"Value error, {message} [" in str(info.value)


def test_accepted_names_are_the_fields_and_every_alias() -> None:
    fields = {
        "plain": Field(default=1),
        "aliased": Field(default=1, validation_alias="other"),
        "both": Field(default=1, alias="named", validation_alias=AliasChoices("both", "two")),
    }
    assert accepted_names(fields) == {"plain", "aliased", "other", "both", "named", "two"}
    assert public_fields({"model": 1, "_transport": 2}) == ["model"]


def test_proxy_arguments_point_at_the_http_client() -> None:
    with pytest.raises(ValueError, match="http_client"):
        ChatKimi(api_key=KEY, openai_proxy="http://proxy.internal:3128")


def test_refusal_happens_before_any_request() -> None:
    sent: list[httpx.Request] = []
    with pytest.raises(ValueError):
        _model(sent, api_base="https://elsewhere.example")
    assert sent == []


@pytest.mark.parametrize(
    "fields",
    [
        {"model_name": "kimi-k3"},
        {"effort": "low"},
        {"max_completion_tokens": 10},
        {"stop_sequences": ["x"]},
        {"tags": ["a"], "metadata": {"k": "v"}, "callbacks": None, "verbose": False},
        {"disable_streaming": True, "rate_limiter": None, "cache": False},
    ],
)
def test_field_names_aliases_and_base_fields_are_accepted(fields: dict[str, Any]) -> None:
    ChatKimi(api_key=KEY, **fields)


# --- extra_body and stream_usage ---------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_extra_body_is_merged_into_every_body(protocol: str) -> None:
    sent: list[httpx.Request] = []
    model = _model(
        sent,
        protocol=protocol,
        extra_body={"service_tier": "auto", "shared": "extra"},
        model_kwargs={"shared": "kwargs", "user": "u1"},
    )
    model.invoke("hi")
    model.invoke("hi", extra_body={"user": "per-call"})
    first, second = (json.loads(r.content) for r in sent)
    assert first["service_tier"] == "auto"
    assert first["shared"] == "extra"  # extra_body is applied after model_kwargs
    assert first["user"] == "u1"
    assert second["user"] == "per-call"  # the call's extra_body wins
    assert second["service_tier"] == "auto"


def test_extra_body_round_trips_through_serialization() -> None:
    model = ChatKimi(api_key=KEY, extra_body={"service_tier": "auto"}, stream_usage=False)
    loaded = load(dumpd(model), allowed_objects=[ChatKimi], valid_namespaces=["langchain_kimi"])
    assert loaded.extra_body == {"service_tier": "auto"}
    assert loaded.stream_usage is False


def _sse_chat(model: str) -> str:
    events = [
        {"id": "c1", "model": model, "choices": [{"index": 0, "delta": {"content": "OK"}}]},
        {
            "id": "c1",
            "model": model,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        },
        {
            "id": "c1",
            "model": model,
            "choices": [],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        },
    ]
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"


def _streaming_model(**fields: Any) -> ChatKimi:
    def handler(request: httpx.Request) -> httpx.Response:
        model = json.loads(request.content)["model"]
        return httpx.Response(
            200,
            text=_sse_chat(model),
            headers={"content-type": "text/event-stream"},
        )

    return ChatKimi(
        api_key=KEY,
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        **fields,
    )


def test_stream_usage_default_puts_usage_on_a_chunk() -> None:
    chunks = list(_streaming_model().stream("hi"))
    assert sum(1 for c in chunks if c.usage_metadata) == 1


def test_stream_usage_false_leaves_usage_off_the_chunks() -> None:
    chunks = list(_streaming_model(stream_usage=False).stream("hi"))
    assert chunks
    assert all(c.usage_metadata is None for c in chunks)
    assert "".join(str(c.content) for c in chunks) == "OK"


def test_stream_usage_per_call_overrides_the_field() -> None:
    model = _streaming_model(stream_usage=False)
    chunks = list(model.stream("hi", stream_usage=True))
    assert sum(1 for c in chunks if c.usage_metadata) == 1


# --- base_url ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given",
    [
        "https://direct.evolink.ai/v1",
        "https://direct.evolink.ai/v1/",
        "https://direct.evolink.ai/",
        "https://direct.evolink.ai",
    ],
)
@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_base_url_with_v1_is_accepted(given: str, protocol: str) -> None:
    sent: list[httpx.Request] = []
    model = _model(sent, base_url=given, protocol=protocol)
    assert model.base_url == "https://direct.evolink.ai"
    assert model.fallback_base_url == "https://api.evolink.ai"  # still the documented primary
    model.invoke("hi")
    path = "/v1/messages" if protocol == "anthropic" else "/v1/chat/completions"
    assert str(sent[0].url) == f"https://direct.evolink.ai{path}"


def test_base_url_with_v1_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOLINK_BASE_URL", "https://gateway.example.com/kimi/v1/")
    sent: list[httpx.Request] = []
    model = _model(sent)
    assert model.base_url == "https://gateway.example.com/kimi"
    model.invoke("hi")
    assert str(sent[0].url) == "https://gateway.example.com/kimi/v1/chat/completions"


def test_fallback_base_url_with_v1_is_accepted() -> None:
    model = ChatKimi(api_key=KEY, fallback_base_url="https://api.evolink.ai/v1")
    assert model.fallback_base_url == "https://api.evolink.ai"


@pytest.mark.parametrize(
    ("base_url", "fragment"),
    [
        ("http://gateway.example.com", "http://"),
        ("ftp://gateway.example.com", "https://"),
        ("gateway.example.com", "https://"),
        ("https://", "https://"),
        ("https://gateway.example.com/gw?tenant=a", "query"),
        ("https://gateway.example.com/gw?", "query"),
        ("https://gateway.example.com/#frag", "fragment"),
        ("https://user:pw@gateway.example.com", "user:password"),
        ("https://user@gateway.example.com", "user:password"),
        ("https://gateway.example.com:99999", "valid URL"),
        ("https://gateway example.com", "whitespace"),
        ("https://gateway.example.com/\r\nX-Evil: 1", "control"),
    ],
)
def test_bad_base_url_is_refused_at_construction(base_url: str, fragment: str) -> None:
    with pytest.raises(ValueError, match="base_url") as info:
        ChatKimi(api_key=KEY, base_url=base_url)
    assert fragment in str(info.value)


def test_bad_fallback_base_url_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="fallback_base_url"):
        ChatKimi(api_key=KEY, fallback_base_url="https://backup.example.com/?x=1")


def test_bad_base_url_from_the_environment_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOLINK_BASE_URL", "http://gateway.example.com/v1")
    with pytest.raises(ValueError, match="plain http://"):
        ChatKimi(api_key=KEY)


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8080",
        "http://localhost:8080/v1",
        "http://[::1]:8080",
        "http://127.0.0.2:9000/proxy",
    ],
)
def test_plain_http_to_loopback_is_allowed(base_url: str) -> None:
    model = ChatKimi(api_key=KEY, base_url=base_url)
    assert model.base_url.startswith("http://")
    assert not model.base_url.endswith("/v1")


def test_plain_http_elsewhere_needs_the_explicit_opt_in() -> None:
    model = ChatKimi(api_key=KEY, base_url="http://gateway.internal/v1", allow_insecure_http=True)
    assert model.base_url == "http://gateway.internal"


# --- default_headers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Tenant": "a\r\nX-Injected: 1"},
        {"X-Tenant": "a\nb"},
        {"X-Tenant": "a\x00b"},
        {"X-Tenant": "a\x1bb"},
        {"X-Bad\r\nName": "a"},
        {"X Bad": "a"},
        {"": "a"},
        {"X-Colon:": "a"},
    ],
)
def test_bad_default_headers_are_refused_at_construction(headers: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="default_headers"):
        ChatKimi(api_key=KEY, default_headers=headers)


def test_good_default_headers_are_sent() -> None:
    sent: list[httpx.Request] = []
    model = _model(sent, default_headers={"X-Tenant": "team a\tb", "x-trace": "1"})
    model.invoke("hi")
    assert sent[0].headers["x-tenant"] == "team a\tb"
    assert sent[0].headers["x-trace"] == "1"


def test_authorization_in_default_headers_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="Authorization"):
        ChatKimi(api_key=KEY, default_headers={"authorization": "Bearer other"})


# --- warnings ----------------------------------------------------------------------------------


def test_ignored_temperature_warns_once_per_model() -> None:
    sent: list[httpx.Request] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _model(sent, temperature=0)
        model.invoke("hi")
        model.invoke("hi")
        model.bind_tools([]).invoke("hi")
    ignored = [w for w in caught if "ignores temperature" in str(w.message)]
    assert len(ignored) == 1, [str(w.message) for w in caught]


def test_a_construction_warning_points_at_the_line_that_built_the_model() -> None:
    with pytest.warns(UserWarning, match="ignores temperature") as record:
        ChatKimi(api_key=KEY, temperature=0.3)
    (warning,) = [w for w in record if "ignores temperature" in str(w.message)]
    assert warning.filename == __file__


def test_ignored_temperature_per_call_still_warns() -> None:
    sent: list[httpx.Request] = []
    model = _model(sent)
    with pytest.warns(UserWarning, match="ignores temperature") as record:
        model.invoke("hi", temperature=0.2)
    # ... pointing at the line that made the call, as at construction
    assert {w.filename for w in record if "ignores temperature" in str(w.message)} == {__file__}


# --- no key in construction errors -------------------------------------------------------------

_SECRET = "sk-" + "Zq8vLm2Xw9" * 5  # assembled so secret scanners stay quiet


@pytest.mark.parametrize(
    "fields",
    [
        {"api_base": "https://elsewhere.example"},
        {"base_url": "http://gateway.example.com"},
        {"default_headers": {"X-A": "a\r\nb"}},
        {"max_tokens": 0},
        {"protocol": "grpc"},
        {"reasoning_effort": "extreme"},
    ],
)
def test_construction_errors_never_show_the_key(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as info:
        ChatKimi(api_key=_SECRET, **fields)
    text = str(info.value) + repr(info.value)
    assert _SECRET[3:11] not in text
    assert _SECRET[-6:] not in text


# --- the fallback host and your own clients ------------------------------------------------------


def _failing(hosts: list[str]) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        return httpx.Response(500, json={"error": {"message": "down", "type": "server_error"}})

    return httpx.Client(transport=httpx.MockTransport(handler))


def test_fallback_base_url_none_stays_none_and_no_call_goes_to_the_fallback_host() -> None:
    hosts: list[str] = []
    model = ChatKimi(
        api_key=KEY, max_retries=0, fallback_base_url=None, http_client=_failing(hosts)
    )
    assert model.fallback_base_url is None
    with pytest.raises(KimiAPIError):
        model.invoke("hi")
    assert hosts == ["direct.evolink.ai"]


def test_the_documented_fallback_backs_the_default_primary_when_not_disabled() -> None:
    hosts: list[str] = []
    model = ChatKimi(api_key=KEY, max_retries=0, http_client=_failing(hosts))
    assert model.fallback_base_url == "https://api.evolink.ai"
    with pytest.raises(KimiAPIError):
        model.invoke("hi")
    assert hosts == ["direct.evolink.ai", "api.evolink.ai"]


def test_a_model_with_its_own_http_clients_dumps_to_json_without_them() -> None:
    sent: list[httpx.Request] = []
    model = _model(sent, http_async_client=httpx.AsyncClient())
    dumped = json.loads(model.model_dump_json())
    assert dumped["model"] == model.model
    assert "http_client" not in dumped
    assert "http_async_client" not in dumped
    assert "http_client" not in model.model_dump()
