"""The one scrubber of the doctor and the live tools: every encoding of a key, every place."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from langchain_kimi._secrets import (
    REDACTED,
    Scrubber,
    is_credential_name,
    split_userinfo,
    url_credentials,
)
from tests.support.secret_forms import ENCODINGS, KEYS, forms, leaks


@pytest.mark.parametrize("key", KEYS.values(), ids=KEYS.keys())
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_text_loses_the_key_in_every_encoding(key: str, encoding: str) -> None:
    echoed = f"invalid api key {ENCODINGS[encoding](key)} (check it)"
    assert leaks(echoed, key)  # the probe sees it before scrubbing
    cleaned = Scrubber.for_key(key).text(echoed)
    assert leaks(cleaned, key) == []
    assert cleaned.startswith("invalid api key ")
    assert cleaned.endswith(" (check it)")


@pytest.mark.parametrize("key", KEYS.values(), ids=KEYS.keys())
def test_a_padded_environment_value_finds_the_key_it_pads(key: str) -> None:
    scrubber = Scrubber.for_key(forms(key)["padded"])
    for form in forms(key).values():
        assert leaks(scrubber.text(f"echo: {form}"), key) == []


def test_mixed_and_nested_escapes_are_found() -> None:
    key = KEYS["unprefixed"]
    mixed = "".join(
        f"\\u{ord(c):04X}" if i % 3 == 0 else ("%25" + f"{ord(c):02x}" if i % 3 == 1 else c)
        for i, c in enumerate(key)
    )
    double_escaped = json.dumps(json.dumps(key).replace("/", "\\/"))
    scrubber = Scrubber.for_key(key)
    assert REDACTED in scrubber.text(mixed)
    assert key[1:] not in scrubber.text(mixed)
    assert leaks(scrubber.text(double_escaped), key) == []


def test_an_unknown_key_shaped_string_is_removed_without_being_given() -> None:
    assert Scrubber().text("keys sk-placeholder-abcdefgh and sk-short") == "keys *** and sk-short"


def test_a_parsed_structure_loses_the_key_everywhere_and_keeps_its_shape() -> None:
    key = KEYS["sk-prefixed"]
    body = {
        "error": {"message": f"bad key {key}", "details": [f"x={forms(key)['url-encoded']}"]},
        "api_key": "short",
        "max_tokens": 12,
        "usage": {"input_tokens": 3, "completion_tokens_details": {"reasoning_tokens": 1}},
        "signature": "EqQBCkgIARABGAIiQ",
    }
    cleaned = Scrubber.for_key(key).value(body)
    assert leaks(json.dumps(cleaned), key) == []
    assert cleaned["api_key"] == REDACTED
    assert cleaned["error"]["message"] == "bad key ***"
    assert {k: cleaned[k] for k in ("max_tokens", "usage", "signature")} == {
        k: body[k] for k in ("max_tokens", "usage", "signature")
    }


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "Proxy-Authorization",
        "x-api-key",
        "api-key",
        "X-Proxy-Token",
        "Cookie",
        "cookie2",
        "Set-Cookie",
        "X-Amz-Security-Token",
        "access_token",
        "apiKey",
        "apikey",
        "client_secret",
        "password",
        "passwd",
        "secret",
        "auth",
        "X-Auth",
        "session",
        "X-Session",
        "sessionToken",
        "credential",
        "credentials",
        "X-Amz-Credential",
    ],
)
def test_credential_names(name: str) -> None:
    assert is_credential_name(name)


def test_values_under_session_and_credential_names_are_replaced_whole() -> None:
    body = {
        "session": "s-0123",
        "nested": {"credential": "c-4567", "X-Session": "x"},
        "sessions_count": 3,
        "note": "session credential",
    }
    cleaned = Scrubber().value(body)
    assert cleaned == {
        "session": REDACTED,
        "nested": {"credential": REDACTED, "X-Session": REDACTED},
        "sessions_count": 3,
        "note": "session credential",
    }


def test_a_credential_named_list_or_object_is_replaced_whole_a_count_is_kept() -> None:
    body = {
        "credentials": ["c-4567", "c-8901"],
        "auth": {"user": "me", "scheme": "basic"},
        "session": {"id": "s-0123"},
        "x_api_key": None,
        "secret_count": 2,
    }
    assert Scrubber().value(body) == {
        "credentials": REDACTED,
        "auth": REDACTED,
        "session": REDACTED,
        "x_api_key": None,
        "secret_count": 2,
    }


@pytest.mark.parametrize(
    "name",
    [
        "max_tokens",
        "MAX_TOKENS",
        "completion_tokens_details",
        "x-ratelimit-remaining-tokens",
        "anthropic-ratelimit-tokens-reset",
        "www-authenticate",
        "x-request-id",
        "signature",
        "keyword",
        "content-type",
        "token",  # logprobs[].token is text
        "key",  # a tool argument
        "input_token_details",
    ],
)
def test_names_that_are_not_credentials(name: str) -> None:
    assert not is_credential_name(name)


def test_headers_lose_credential_values_and_echoed_keys() -> None:
    key = KEYS["unprefixed"]
    headers = {
        "Authorization": f"Bearer {key}",
        "X-Proxy-Token": "proxy-secret",
        "Set-Cookie": "__session=abc; Path=/",
        "X-Echo": forms(key)["json-unicode-escaped"],
        "x-ratelimit-remaining-tokens": "9000",
    }
    cleaned = Scrubber.for_key(key).headers(headers)
    assert cleaned == {
        "authorization": REDACTED,
        "x-proxy-token": REDACTED,
        "set-cookie": REDACTED,
        "x-echo": REDACTED,
        "x-ratelimit-remaining-tokens": "9000",
    }


def test_url_loses_userinfo_and_credential_query_values() -> None:
    url = "https://user:hunter2-password@gateway.example/v1?api_key=sk-placeholder-not-a-real-key&mode=x"
    scrubber = Scrubber.for_key(None, url)
    cleaned = scrubber.url(url)
    assert cleaned == "https://***@gateway.example/v1?api_key=***&mode=x"
    # The URL's secrets are secrets everywhere else too, e.g. in an error message quoting it.
    message = scrubber.text(f"refused {url!r}; password hunter2-password")
    assert "hunter2-password" not in message
    assert "user:" not in message
    assert "not-a-real-key" not in message


def test_a_url_echoing_the_key_in_its_query_loses_it() -> None:
    key = KEYS["sk-prefixed"]
    url = f"https://gateway.example/v1/messages?echo={forms(key)['url-encoded']}"
    assert leaks(Scrubber.for_key(key).url(url), key) == []


def test_a_password_with_an_unencoded_slash_is_still_userinfo() -> None:
    url = "https://svc:ab/cd+ef=gh1234@gateway.example/v1?x=1"
    assert split_userinfo(url) == ("svc:ab/cd+ef=gh1234", "gateway.example/v1?x=1")
    assert Scrubber.for_key(None, url).url(url) == "https://***@gateway.example/v1?x=1"
    assert split_userinfo("https://gateway.example/v1?mail=a@b") == (
        None,
        "https://gateway.example/v1?mail=a@b",
    )


def test_key_and_token_alone_are_credentials_in_a_query() -> None:
    url = "https://gateway.example/?key=abc123456789&token=zz&mode=fast"
    assert Scrubber().url(url) == "https://gateway.example/?key=***&token=***&mode=fast"


def test_userinfo_is_found_inside_one_json_string_only() -> None:
    text = '{"u":"https://x","e":"a@b","v":"https://svc:pw@host"}'
    cleaned = Scrubber().text(text)
    assert json.loads(cleaned) == {"u": "https://x", "e": "a@b", "v": "https://***@host"}


# --- the parts the scrubber is built from (mutmut survivors of issue 31's re-sample) ------------


@dataclasses.dataclass(frozen=True)
class _Record:
    note: str
    api_key: str
    count: int
    items: tuple[Any, ...] = ()
    cached: str = dataclasses.field(default="", init=False)


def test_a_dataclass_is_copied_with_every_field_cleaned() -> None:
    secret = "rec-secret-0123456789"
    record = _Record(note=f"echo {secret}", api_key="plain", count=3, items=(secret, [secret]))
    cleaned = Scrubber((secret,)).value(record)
    assert cleaned == _Record(
        note="echo ***", api_key=REDACTED, count=3, items=(REDACTED, [REDACTED])
    )
    assert type(cleaned.items) is tuple
    assert Scrubber((secret,)).value(_Record) is _Record, "a class is not an instance to copy"


def test_the_longest_secret_is_replaced_first_and_eight_characters_count_as_long() -> None:
    scrubber = Scrubber(("12345678", "012345678"))
    assert scrubber.text("id 012345678.") == "id ***."
    assert Scrubber(("abcdefgh",)).text("xx abcdefgh yy") == "xx *** yy"
    assert Scrubber((" pw1 ",)).text("pw1") == REDACTED, "a padded short secret matches trimmed"


def test_a_form_encoded_space_in_a_secret_is_found() -> None:
    assert Scrubber(("pass word12",)).text("q=pass+word12&x=1") == "q=***&x=1"


def test_for_key_keeps_the_key_and_the_url_credentials_together() -> None:
    scrubber = Scrubber.for_key("key-abcdefgh", "https://u:pw12345678@h.example")
    assert scrubber.text("key-abcdefgh pw12345678") == "*** ***"
    assert Scrubber.for_key(None).secrets == ()
    assert Scrubber.for_key(None, None).secrets == ()


def test_url_credentials_are_user_password_and_credential_parameters() -> None:
    url = "https://user:pa:ss@h.example/v1?api_key=q1w2e3r4t5&x=1&token=t0k"
    assert url_credentials(url) == ["user", "pa:ss", "q1w2e3r4t5", "t0k"]
    assert url_credentials("https://u:p@[::1/x?token=abc") == ["u", "p"], "invalid IPv6: no query"


def test_userinfo_is_up_to_the_last_at_before_the_query() -> None:
    assert split_userinfo("https://u:p@ss@h.example/a?next=x@y#z@w") == (
        "u:p@ss",
        "h.example/a?next=x@y#z@w",
    )
    assert split_userinfo("https://u:p@h.example/?r=https://v:q@other") == (
        "u:p",
        "h.example/?r=https://v:q@other",
    )


def test_a_url_keeps_its_blank_query_values() -> None:
    assert Scrubber().url("https://h.example/v1?flag=&api_key=k") == (
        "https://h.example/v1?flag=&api_key=***"
    )


def test_userinfo_is_cut_at_the_first_scheme_separator() -> None:
    """A later `://` (a redirect target in the query) is not where the authority starts."""
    cleaned = Scrubber(()).url("https://user:pw@host/cb?to=https://other")
    assert cleaned == "https://***@host/cb?to=https%3A%2F%2Fother"


def test_a_url_no_parser_reads_is_cleaned_as_text() -> None:
    assert Scrubber(("sekret-value-1",)).url("http://[::1/sekret-value-1") == "http://[::1/***"


def test_json_text_is_cleaned_as_its_value_and_kept_as_written_when_clean() -> None:
    scrubber = Scrubber(("sekret-value-1",))
    cleaned = scrubber.json_text('{"a": "x sekret-value-1",   "b": "é"}')
    assert cleaned == '{"a": "x ***", "b": "é"}', "re-encoded, non-ASCII kept as is"
    assert scrubber.json_text('{ "a" : 1 }') == '{ "a" : 1 }', (
        "nothing changed: the text as written"
    )
    assert scrubber.json_text("not json sekret-value-1") == "not json ***"


def test_only_slash_quote_and_backslash_have_a_backslash_escape() -> None:
    """JSON writes `\\/`, `\\"`, `\\\\`; a backslash before a letter is no form of the letter."""
    scrubber = Scrubber(("keyXkeyXkey",))
    assert scrubber.text("keyXkeyXkey") == REDACTED
    assert scrubber.text("key\\Xkey\\Xkey") == "key\\Xkey\\Xkey"


def test_percent_forms_are_for_ascii_only() -> None:
    """U+0080 percent-encodes as UTF-8 (`%C2%80`); `%80` alone is not its encoding."""
    scrubber = Scrubber(("abcdefgh\x80",))
    assert scrubber.text("abcdefgh%80") == "abcdefgh%80"
    assert Scrubber(("abcdefgh\x7f",)).text("abcdefgh%7F") == REDACTED
