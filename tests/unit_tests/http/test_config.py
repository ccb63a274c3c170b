"""The settings checked once at construction (`langchain_kimi._settings`) and the headers every
request carries (`langchain_kimi._http.config`), rule by rule."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr

from langchain_kimi._http.config import build_headers
from langchain_kimi._settings import (
    check_connection_settings,
    normalize_base_url,
    transport_timeout,
    validate_config,
)
from tests.support.fake_transport import transport_config


def _normalized(url: str) -> str:
    return normalize_base_url(url, label="base_url", allow_insecure_http=False)


@pytest.mark.parametrize("port", [1, 443, 65535])
def test_a_port_in_range_is_kept(port: int) -> None:
    assert _normalized(f"https://h.example:{port}/v1") == f"https://h.example:{port}"


@pytest.mark.parametrize("port", [0, 65536])
def test_a_port_out_of_range_is_refused(port: int) -> None:
    with pytest.raises(ValueError, match="port out of range"):
        _normalized(f"https://h.example:{port}")


def test_a_url_httpx_cannot_parse_is_a_value_error_naming_the_setting() -> None:
    with pytest.raises(ValueError, match=r"^base_url 'https://\[::1' is not a valid URL: ") as info:
        _normalized("https://[::1")
    assert info.value.__cause__ is None


def test_the_connection_settings_come_back_normalized_and_no_fallback_is_none() -> None:
    assert check_connection_settings(
        "https://a.example/v1/", None, {}, allow_insecure_http=False
    ) == ("https://a.example", None)
    assert check_connection_settings(
        "https://a.example", "https://b.example/v1", {"X-Team": "t"}, allow_insecure_http=False
    ) == ("https://a.example", "https://b.example")


def test_a_transport_config_refuses_negative_retries() -> None:
    with pytest.raises(ValueError, match="max_retries must be >= 0"):
        transport_config(
            "https://a.example", None, SecretStr("sk-x"), httpx.Timeout(1.0), max_retries=-1
        )


# --- every refusal, word for word (the messages are what a user reads) -----------------------

_INSECURE = (
    "base_url 'http://h.example' uses plain http://, which would send the API key unencrypted. "
    "Use https://, or set allow_insecure_http=True if you really mean it."
)
_QUERY = (
    "base_url 'https://h.example?x=1' has a query string or fragment: the protocol path is "
    "appended to the base URL, so it would end up inside them. Use the bare host root, e.g. "
    "'https://direct.evolink.ai'"
)
_USERINFO = (
    "{label} must not contain user:password@ (httpx would send Basic auth instead of the API "
    "key); pass the key as api_key and other headers via default_headers"
)


@pytest.mark.parametrize(
    ("base", "fallback", "headers", "message"),
    [
        ("http://h.example", None, {}, _INSECURE),
        ("https://h.example?x=1", None, {}, _QUERY),
        (3, None, {}, "base_url must be a string, got int"),
        ("https://u:p@h.example", None, {}, _USERINFO.format(label="base_url")),
        (
            "https://h.example",
            "https://u:p@f.example",
            {},
            _USERINFO.format(label="fallback_base_url"),
        ),
        (
            "https://h.example",
            "ftp://f.example",
            {},
            "fallback_base_url must be an absolute https:// URL, got 'ftp://f.example'",
        ),
        (
            "https://h.example",
            None,
            {"X-A": "a\nb"},
            "default_headers['X-A'] contains CR, LF or another control character (not allowed "
            "in an HTTP header value)",
        ),
        (
            "https://h.example",
            None,
            {"X-A": "é"},
            "default_headers['X-A'] holds non-ASCII characters, which httpx cannot send in a "
            "header: percent-encode the value (or use ASCII only)",
        ),
        (
            "https://h.example",
            None,
            {"authorization": "Bearer x"},
            "default_headers may not set Authorization; pass the key as api_key",
        ),
    ],
    ids=[
        "insecure",
        "query",
        "not-a-string",
        "userinfo",
        "fallback-userinfo",
        "fallback-scheme",
        "header-newline",
        "header-non-ascii",
        "authorization",
    ],
)
def test_each_refusal_says_exactly_what_to_change(
    base: object, fallback: str | None, headers: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError) as info:
        check_connection_settings(base, fallback, headers, allow_insecure_http=False)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_an_ipv6_loopback_may_use_plain_http() -> None:
    assert _normalized("http://[::1]:8080/") == "http://[::1]:8080"


@pytest.mark.parametrize(
    ("given", "root"),
    [
        ("https://h.example/", "https://h.example"),
        ("https://h.example/v1/", "https://h.example"),
        ("https://h.example/p/v1", "https://h.example/p"),
        ("https://h.example/v1//", "https://h.example"),
    ],
)
def test_the_root_loses_trailing_slashes_and_one_v1(given: str, root: str) -> None:
    assert _normalized(given) == root


def test_a_refused_url_shows_its_credentials_nowhere_in_the_message() -> None:
    secret = "Credential-0123456789"
    with pytest.raises(ValueError) as info:
        _normalized(f"https://h.example/{secret}?token={secret}")
    assert secret not in str(info.value)


def test_a_key_that_breaks_a_header_is_refused_without_echo() -> None:
    with pytest.raises(ValueError) as info:
        validate_config(
            "https://h.example", None, "sk-a\nb", {}, allow_insecure_http=False, max_retries=0
        )
    assert str(info.value) == "api_key contains characters that are not allowed in an HTTP header"
    for bad in ("sk-a\rb", "sk-a\0b", "sk-é"):
        with pytest.raises(ValueError, match="not allowed in an HTTP header"):
            validate_config(
                "https://h.example", None, bad, {}, allow_insecure_http=False, max_retries=0
            )
    with pytest.raises(ValueError) as padded:
        validate_config(
            "https://h.example", None, " sk-a ", {}, allow_insecure_http=False, max_retries=0
        )
    assert str(padded.value) == (
        "api_key has surrounding whitespace, which an HTTP header cannot carry: remove it "
        "(check EVOLINK_API_KEY)"
    )
    with pytest.raises(ValueError) as retries:
        validate_config(
            "https://h.example", None, "sk-a", {}, allow_insecure_http=False, max_retries=-1
        )
    assert str(retries.value) == "max_retries must be >= 0"


@pytest.mark.parametrize(
    ("stream", "accept"), [(False, "application/json"), (True, "text/event-stream")]
)
def test_every_request_carries_these_headers(stream: bool, accept: str) -> None:
    headers = build_headers(
        api_key="sk-a", user_agent="ua/1", default_headers={"X-Team": "t"}, stream=stream
    )
    assert list(headers.raw) == [
        (b"User-Agent", b"ua/1"),
        (b"X-Team", b"t"),
        (b"Authorization", b"Bearer sk-a"),
        (b"Content-Type", b"application/json"),
        (b"Accept", accept.encode()),
    ]


def test_a_callers_user_agent_replaces_ours() -> None:
    headers = build_headers(
        api_key="sk-a", user_agent="ua/1", default_headers={"user-agent": "mine"}, stream=False
    )
    assert headers.get_list("User-Agent") == ["mine"]


@pytest.mark.parametrize(
    ("timeout", "message"),
    [
        ("5", "timeout must be a number of seconds or an httpx.Timeout, got '5'"),
        (httpx.Timeout(5, read=True), "timeout.read must be a number of seconds or None, got True"),
        (
            httpx.Timeout(5, pool=-1),
            "timeout.pool must be a finite number of seconds > 0 and at most 86,400 s (one day), "
            "got -1.0; None means no limit for that wait",
        ),
        (
            0,
            "timeout must be a finite number of seconds > 0 and at most 86,400 s (one day), got 0.0",
        ),
    ],
)
def test_each_timeout_refusal_word_for_word(timeout: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        transport_timeout(timeout)  # type: ignore[arg-type]
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("given", "root"),
    [
        ("https://h.example//v1", "https://h.example"),
        ("https://h.example/X/v1", "https://h.example/X"),
        ("https://h.example/X/", "https://h.example/X"),
    ],
)
def test_only_slashes_are_stripped_around_the_v1(given: str, root: str) -> None:
    assert _normalized(given) == root


def test_validate_config_checks_the_fallback_and_honours_the_opt_in() -> None:
    with pytest.raises(ValueError, match=r"^fallback_base_url must not contain user:password@"):
        validate_config(
            "https://h.example",
            "https://u:p@f.example",
            "sk-X",
            {},
            allow_insecure_http=False,
            max_retries=0,
        )
    validate_config(
        "http://h.example", "http://f.example", "sk-X", {}, allow_insecure_http=True, max_retries=0
    )
    assert check_connection_settings(
        "http://h.example", "http://f.example/v1", {}, allow_insecure_http=True
    ) == ("http://h.example", "http://f.example")


@pytest.mark.parametrize("value", [-1, -0.001, float("nan"), float("inf"), float("-inf")])
def test_a_rate_limit_timeout_that_never_ends_or_is_negative_is_refused(value: float) -> None:
    from langchain_kimi import ChatKimi

    with pytest.raises(ValueError) as refused:
        ChatKimi(api_key="sk-placeholder", rate_limit_timeout=value)
    assert f"rate_limit_timeout must be a finite number of seconds >= 0, got {value!r}" in str(
        refused.value
    )


@pytest.mark.parametrize("value", [0, 0.5, 300])
def test_a_rate_limit_timeout_of_zero_or_more_seconds_is_kept(value: float) -> None:
    from langchain_kimi import ChatKimi

    model = ChatKimi(api_key="sk-placeholder", rate_limit_timeout=value)
    assert model.rate_limit_timeout == value
