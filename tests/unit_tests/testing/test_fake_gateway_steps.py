"""What the project's own tests need from the fake (issue 31: one fake gateway): a step that
repeats, a raw step (any response, raw event-stream bytes, an exception), a key check answering
the documented 401, and an offline gateway that fails the test when anything is sent."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from langchain_kimi import KimiAPIError, KimiAuthenticationError, KimiConnectionError
from langchain_kimi.testing import FakeKimiGateway, ScriptError
from tests.unit_tests.testing.raw import post, user

# Issue 31: each test also runs on replies without the optional keys that say nothing.
pytestmark = pytest.mark.usefixtures("both_reply_forms")

OPENAI_SSE = (
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"kimi-k3.1-pro",'
    '"choices":[{"index":0,"delta":{"role":"assistant","content":"raw"},"finish_reason":null}]}'
    "\n\n"
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"kimi-k3.1-pro",'
    '"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    "data: [DONE]\n\n"
)


# -- repeat ---------------------------------------------------------------------------------


def test_a_repeating_reply_answers_every_request() -> None:
    gw = FakeKimiGateway().add_reply(text="again", repeat=True)
    model = gw.chat_model()
    assert gw.remaining == 1
    assert [model.invoke(f"q{i}").content for i in range(3)] == ["again"] * 3
    assert len(gw.requests) == 3
    assert gw.remaining == 0  # used, yet still answering
    assert model.invoke("more").content == "again"


def test_steps_before_a_repeating_one_are_served_first() -> None:
    gw = FakeKimiGateway().add_reply(text="first").add_reply(text="rest", repeat=True)
    model = gw.chat_model(protocol="anthropic")
    assert [model.invoke("q").content for _ in range(3)] == ["first", "rest", "rest"]


def test_a_repeating_error_answers_every_retry() -> None:
    gw = FakeKimiGateway().add_error(500, repeat=True)
    model = gw.chat_model(max_retries=2)
    with pytest.raises(KimiAPIError):
        model.invoke("Hi")
    assert len(gw.requests) == 3


def test_an_unbound_step_after_a_repeating_one_is_refused() -> None:
    gw = FakeKimiGateway().add_reply(text="forever", repeat=True)
    with pytest.raises(ValueError, match="would never be served"):
        gw.add_reply(text="never")
    gw.add_reply(text="bound", when="special")  # a bound step can still come after it
    model = gw.chat_model()
    assert model.invoke("special").content == "bound"
    assert model.invoke("other").content == "forever"


def test_a_repeating_step_is_not_ambiguous_under_concurrency() -> None:
    gw = FakeKimiGateway().add_reply(text="same", repeat=True)
    replies = gw.chat_model().batch(["a", "b", "c", "d"])
    assert [r.content for r in replies] == ["same"] * 4


# -- raw steps --------------------------------------------------------------------------------


def test_a_raw_response_is_sent_as_it_is() -> None:
    odd = httpx.Response(418, json={"teapot": True}, headers={"x-odd": "1"})
    response = post(FakeKimiGateway().add_raw(odd), "openai", user("Hi"))
    assert (response.status_code, response.json()) == (418, {"teapot": True})
    assert response.headers["x-odd"] == "1"
    assert "x-request-id" not in response.headers  # raw: nothing added


@pytest.mark.parametrize("kind", [str, bytes])
def test_raw_event_stream_text_or_bytes(kind: type) -> None:
    body = OPENAI_SSE if kind is str else OPENAI_SSE.encode()
    gw = FakeKimiGateway().add_raw(body)
    chunks = list(gw.chat_model().stream("Hi"))
    assert "".join(str(c.content) for c in chunks) == "raw"
    assert gw.requests[0]["stream"] is True


def test_a_raw_json_body_with_status_and_headers() -> None:
    gw = FakeKimiGateway().add_raw({"odd": 1}, status=202, headers={"x-a": "b"})
    response = post(gw, "openai", user("Hi"))
    assert (response.status_code, response.json(), response.headers["x-a"]) == (
        202,
        {"odd": 1},
        "b",
    )


def test_a_raw_exception_is_raised_where_the_transport_would() -> None:
    gw = FakeKimiGateway().add_raw(httpx.ConnectError("refused"), repeat=True)
    with pytest.raises(KimiConnectionError):
        gw.chat_model().invoke("Hi")
    with pytest.raises(KimiConnectionError):
        asyncio.run(gw.chat_model().ainvoke("Hi"))
    assert len(gw.requests) == 2


def test_a_repeating_raw_response_is_served_fresh_each_time() -> None:
    gw = FakeKimiGateway().add_raw(OPENAI_SSE, repeat=True)
    model = gw.chat_model()
    for _ in range(3):
        assert "".join(str(c.content) for c in model.stream("Hi")) == "raw"


def test_a_raw_step_still_judges_the_request() -> None:
    gw = FakeKimiGateway().add_raw({"never": "sent"})
    bad = {"model": "kimi-k3.1-pro", "messages": []}  # the schema's minItems 1
    assert post(gw, "openai", bad).status_code == 400
    assert gw.remaining == 1
    assert post(gw, "openai", user("Hi")).json() == {"never": "sent"}


def test_raw_scripting_mistakes_are_named() -> None:
    gw = FakeKimiGateway()
    with pytest.raises(ValueError, match="go with a body"):
        gw.add_raw(httpx.Response(200), status=500)
    with pytest.raises(ValueError, match="a Response, bytes, str"):
        gw.add_raw(42)  # type: ignore[arg-type]
    assert gw.remaining == 0


# -- the key ----------------------------------------------------------------------------------


def test_a_keyed_gateway_serves_its_key() -> None:
    gw = FakeKimiGateway(key="sk-right").add_reply(text="in")
    assert gw.chat_model().invoke("Hi").content == "in"


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_another_key_gets_the_documented_401(protocol: str) -> None:
    gw = FakeKimiGateway(key="sk-right").add_reply(text="never")
    with pytest.raises(KimiAuthenticationError) as caught:
        gw.chat_model(protocol=protocol, api_key="sk-wrong").invoke("Hi")
    assert caught.value.status_code == 401
    assert caught.value.request_id == "req_fake_0001"
    assert "sk-wrong" not in str(caught.value)
    assert gw.remaining == 1  # the 401 used no step


def test_the_401_bodies_are_the_documented_ones() -> None:
    gw = FakeKimiGateway(key="sk-right")
    wrong = {"authorization": "Bearer sk-wrong", "anthropic-version": "2023-06-01"}
    chat = post(gw, "openai", user("Hi"), headers=wrong)
    messages = post(gw, "anthropic", user("Hi", protocol="anthropic"), headers=wrong)
    assert chat.status_code == messages.status_code == 401
    assert chat.json() == {
        "error": {
            "message": "invalid API key",
            "type": "authentication_error",
            "code": "invalid_api_key",
        }
    }
    assert messages.json() == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid API key"},
        "request_id": "req_fake_0002",
    }


def test_a_gateway_without_a_key_accepts_any_bearer_key() -> None:
    gw = FakeKimiGateway().add_reply(text="in")
    assert gw.chat_model(api_key="anything").invoke("Hi").content == "in"


# -- offline ----------------------------------------------------------------------------------


def test_an_offline_gateway_fails_the_test_when_anything_is_sent() -> None:
    gw = FakeKimiGateway(offline=True)
    with pytest.raises(ScriptError, match=r"request #1 \(POST /v1/chat/completions\) was sent"):
        gw.chat_model().invoke("Hi")
    with pytest.raises(ScriptError, match="offline"):
        asyncio.run(gw.chat_model(protocol="anthropic").ainvoke("Hi"))
    assert gw.paths == ["/v1/chat/completions", "/v1/messages"]
    assert gw.requests[0]["messages"] == [{"role": "user", "content": "Hi"}]


def test_an_offline_gateway_lets_bad_input_be_refused_first() -> None:
    model = FakeKimiGateway(offline=True).chat_model()
    with pytest.raises(ValueError, match="non-empty strings"):
        model.invoke("Hi", stop=[""])


# -- paths --------------------------------------------------------------------------------------


def test_a_base_url_path_prefix_is_served_a_doubled_v1_is_not() -> None:
    gw = FakeKimiGateway().add_reply(text="behind a proxy")
    model = gw.chat_model(base_url="https://proxy.example.com/kimi")
    assert model.invoke("Hi").content == "behind a proxy"
    assert gw.paths == ["/kimi/v1/chat/completions"]
    with httpx.Client(transport=gw.transport) as client:
        doubled = client.post(
            "https://direct.evolink.ai/v1/v1/messages",
            json=user("Hi", protocol="anthropic"),
            headers={"authorization": "Bearer k"},
        )
    assert doubled.status_code == 404


def test_the_fallback_host_is_served_to_any_client_only_when_asked() -> None:
    for asked in (False, True):
        gw = FakeKimiGateway(fallback=asked).add_reply(text="from the fallback")
        with httpx.Client(transport=gw.transport) as client:
            send = lambda: client.post(  # noqa: E731
                "https://api.evolink.ai/v1/chat/completions",
                json=user("Hi"),
                headers={"authorization": "Bearer k"},
            )
            if not asked:
                with pytest.raises(ScriptError, match="fallback"):
                    send()
                continue
            assert send().json()["choices"][0]["message"]["content"] == "from the fallback"
        assert gw.hosts == ["api.evolink.ai"]


def test_chat_model_still_sets_no_fallback_unless_asked() -> None:
    for gw in (FakeKimiGateway(), FakeKimiGateway(key="k", fallback=True)):
        assert gw.chat_model().fallback_base_url is None  # the gateway's option is for clients
        assert gw.chat_model(fallback=True).fallback_base_url == "https://api.evolink.ai"
