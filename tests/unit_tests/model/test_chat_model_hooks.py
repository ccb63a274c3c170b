"""What each ChatKimi field and hook argument reaches: the request body, LangSmith's params,
`generate()`'s `llm_output`, the transport, copies, pickles and the token estimate (the
chat_models.py survivors of the mutation sample of issue 31)."""

from __future__ import annotations

import copy
import pickle
import warnings

import httpx
import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from langchain_kimi import ChatKimi
from langchain_kimi._langchain.token_estimate import estimate_message_tokens, estimate_text_tokens
from langchain_kimi._request import profiles, resolve
from langchain_kimi.testing import FakeKimiGateway

KEY = "hooks-key-not-real-0123"


@tool
def lookup(word: str) -> str:
    """Look a word up."""
    return word


class Answer(BaseModel):
    """An answer."""

    value: str


# --- the model's fields reach the body -------------------------------------------------------


def test_stop_cache_ttl_and_top_p_fields_reach_the_body() -> None:
    gateway = FakeKimiGateway().add_reply("OK").add_reply("OK")
    gateway.chat_model(protocol="anthropic", stop=["END"], cache_ttl="1h").invoke("hi")
    body = gateway.requests[0]
    assert body["stop_sequences"] == ["END"]
    assert "'ttl': '1h'" in repr(body)
    gateway.chat_model(protocol="openai", top_p=0.95).invoke("hi")
    assert gateway.requests[1]["top_p"] == 0.95


# --- LangSmith params --------------------------------------------------------------------------


@pytest.mark.parametrize(("protocol", "reported"), [("openai", True), ("anthropic", False)])
def test_ls_temperature_is_the_calls_when_the_wire_carries_it(
    protocol: str, reported: bool
) -> None:
    model = ChatKimi(api_key=KEY, protocol=protocol, model="kimi-k3.1-pro")  # type: ignore[arg-type]
    params = model._get_ls_params(temperature=1.0)
    assert params.get("ls_temperature") == (1.0 if reported else None)


def test_ls_stop_is_the_calls_then_the_models() -> None:
    model = ChatKimi(api_key=KEY, stop=["model"])
    assert model._get_ls_params()["ls_stop"] == ["model"]
    assert model._get_ls_params(stop=("call",))["ls_stop"] == ["call"]
    assert ChatKimi(api_key=KEY)._get_ls_params(["call"])["ls_stop"] == ["call"]
    assert "ls_stop" not in ChatKimi(api_key=KEY)._get_ls_params()


def test_ls_stop_takes_one_string_and_leaves_what_the_call_refuses() -> None:
    model = ChatKimi(api_key=KEY)
    assert model._get_ls_params(stop="END")["ls_stop"] == ["END"]  # type: ignore[arg-type]
    for refused in (3, 1.5, True):
        assert "ls_stop" not in model._get_ls_params(stop=refused)  # type: ignore[arg-type]


# --- headers and transport ---------------------------------------------------------------------


def test_protocol_headers_and_the_callers_replacing_them_in_any_case() -> None:
    assert ChatKimi(api_key=KEY, protocol="anthropic")._request_headers() == {
        "anthropic-version": "2023-06-01"
    }
    custom = ChatKimi(api_key=KEY, protocol="anthropic", default_headers={"Anthropic-Version": "x"})
    assert custom._request_headers() == {"Anthropic-Version": "x"}


def test_the_missing_key_message_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVOLINK_API_KEY", raising=False)
    with pytest.raises(ValueError) as raised:
        ChatKimi().invoke("hi")
    assert str(raised.value) == (
        "No EvoLink API key: set the EVOLINK_API_KEY environment variable or pass "
        "ChatKimi(api_key=...). To try ChatKimi without a key (FakeKimiGateway, "
        "replayed cassettes), see docs/without-a-key.md"
    )


def _ok_reply(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "kimi-k3.1-pro",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "OK"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
        },
    )


def test_allow_insecure_http_reaches_the_transport() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return _ok_reply(request)

    model = ChatKimi(
        api_key=KEY,
        base_url="http://gw.example",
        allow_insecure_http=True,
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(answer)),
    )
    assert model.invoke("hi").content == "OK"
    assert seen == ["http://gw.example/v1/chat/completions"]


async def test_the_callers_async_client_is_used() -> None:
    seen: list[str] = []

    async def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.host)
        return _ok_reply(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        model = ChatKimi(api_key=KEY, max_retries=0, http_async_client=client)
        assert (await model.ainvoke("hi")).content == "OK"
    assert seen == ["direct.evolink.ai"]


def test_close_drops_the_pooled_transport() -> None:
    model = ChatKimi(api_key=KEY)
    first = model._transport()
    model.close()
    assert model._transport() is not first


async def test_aclose_drops_the_pooled_transport() -> None:
    model = ChatKimi(api_key=KEY)
    first = model._transport()
    await model.aclose()
    assert model._transport() is not first


# --- copies and pickles ------------------------------------------------------------------------


def test_a_pickle_leaves_out_the_callers_clients() -> None:
    sync_client, async_client = httpx.Client(), httpx.AsyncClient()
    model = ChatKimi(api_key=KEY, http_client=sync_client, http_async_client=async_client)
    loaded = pickle.loads(pickle.dumps(model))
    assert loaded.http_client is None
    assert loaded.http_async_client is None
    assert set(loaded.__dict__) == set(model.__dict__)
    sync_client.close()


def test_a_deep_copy_shares_the_callers_clients_and_copies_the_rest() -> None:
    sync_client, async_client = httpx.Client(), httpx.AsyncClient()
    model = ChatKimi(
        api_key=KEY,
        http_client=sync_client,
        http_async_client=async_client,
        model_kwargs={"a": {"b": 1}},
    )
    copied, kwargs = copy.deepcopy([model, model.model_kwargs])
    assert copied.http_client is sync_client
    assert copied.http_async_client is async_client
    assert copied.model_kwargs == model.model_kwargs
    assert copied.model_kwargs is not model.model_kwargs
    assert copied.model_kwargs is kwargs, "one memo for the whole deep copy"
    assert copied.model_fields_set == model.model_fields_set
    sync_client.close()


# --- generate()'s llm_output -------------------------------------------------------------------


def test_generate_adds_up_the_token_usage_of_its_calls() -> None:
    gateway = (
        FakeKimiGateway()
        .add_reply("A", usage={"input_tokens": 10, "output_tokens": 2}, when="a")
        .add_reply("B", usage={"input_tokens": 20, "output_tokens": 3}, when="b")
    )
    model = gateway.chat_model()
    result = model.generate([[HumanMessage("a")], [HumanMessage("b")]])
    output = result.llm_output
    assert output is not None
    assert output["model_name"] == "kimi-k3.1-pro"
    assert output["token_usage"]["prompt_tokens"] == 30
    assert output["token_usage"]["completion_tokens"] == 5
    assert model._combine_llm_outputs([None, {"token_usage": {"prompt_tokens": 1}}]) == {
        "model_name": "kimi-k3.1-pro",
        "token_usage": {"prompt_tokens": 1},
    }
    assert model._combine_llm_outputs([None]) == {"model_name": "kimi-k3.1-pro"}


# --- web search rounds, the token estimate ----------------------------------------------------


def test_the_token_estimate_takes_messages_in_any_form_and_counts_tools() -> None:
    model = ChatKimi(api_key=KEY)
    assert model.get_num_tokens("abcdefgh") == estimate_text_tokens("abcdefgh")
    messages = [HumanMessage("What does kimi mean?")]
    without = model.get_num_tokens_from_messages(messages)
    assert without == estimate_message_tokens(messages, ())
    assert model.get_num_tokens_from_messages([("user", "What does kimi mean?")]) == without  # type: ignore[list-item]
    with_tools = model.get_num_tokens_from_messages(messages, tools=[lookup])
    assert with_tools == estimate_message_tokens(messages, [lookup]) > without


# --- bind_tools and with_structured_output ---------------------------------------------------


def test_bind_tools_sends_the_tools_choice_parallel_flag_strict_and_other_arguments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(resolve, "_parallel_warned", False)  # warned once per process
    gateway = FakeKimiGateway().add_reply(tool_calls=[{"name": "lookup", "args": {"word": "x"}}])
    model = gateway.chat_model()
    with pytest.warns(UserWarning, match="parallel_tool_calls=False has no documented field"):
        bound = model.bind_tools(
            [lookup], tool_choice="lookup", parallel_tool_calls=False, strict=True, max_tokens=64
        )
    bound.invoke("hi")
    (body,) = gateway.requests
    assert [t["function"]["name"] for t in body["tools"]] == ["lookup"]
    assert body["tools"][0]["function"]["strict"] is True
    assert body["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}
    assert "parallel_tool_calls" not in body  # no documented field: warned about, not sent
    assert body["max_completion_tokens"] == 64


def test_with_structured_output_defaults_and_arguments() -> None:
    gateway = FakeKimiGateway().add_reply('{"value": "x"}').add_reply('{"value": "y"}')
    model = gateway.chat_model()
    assert model.with_structured_output(Answer).invoke("hi") == Answer(value="x")
    out = model.with_structured_output(Answer, include_raw=True, strict=False).invoke("hi")
    assert out["parsed"] == Answer(value="y")
    assert gateway.requests[1]["response_format"]["json_schema"]["strict"] is False
    with pytest.raises(ValueError, match="unsupported arguments"):
        model.with_structured_output(Answer, bogus=1)


def test_ls_params_look_the_model_up_by_its_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """A known model's row is read: no "unknown model" warning from reporting LangSmith params."""
    monkeypatch.setattr(profiles, "_warned_unknown", set())
    model = ChatKimi(api_key=KEY, model="kimi-k3")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert model._get_ls_params(temperature=1.0)["ls_temperature"] == 1.0
