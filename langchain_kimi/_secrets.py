"""Secrets removed from whatever a tool writes: parsed bodies, headers, URLs and plain text.

One scrubber for the doctor (`python -m langchain_kimi doctor`) and the live tools (the
recorder and the report of `./dev live`). It works on the parsed structure: every string of a
JSON value, every header, every query value of a URL. A string is cleaned of

- each known secret in any encoding, character by character: as is, JSON-escaped (`\\/`,
  `\\u0073`), percent-encoded (`%2F`, also twice) or form-encoded (`+` for a space), so a
  gateway echoing the key in an escaped form is caught whatever a writer later decodes;
- anything shaped like an API key (`sk-` and 16 more key characters), known or not;
- the `user:password@` part of a URL;

and a value is replaced as a whole when its name (a header, a JSON field, a query parameter)
says it is a credential (`Authorization`, `X-Proxy-Token`, `Cookie`, `api_key`, ...). Names of
counts such as `max_tokens` or `x-ratelimit-remaining-tokens` are not credentials.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

REDACTED = "***"
_KEY_SHAPED = re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")
_USERINFO = re.compile(r"(?<=://)[^/?#@\s\"'<>]*@")
_CREDENTIAL_WORDS = frozenset(
    {
        "auth",
        "authorization",
        "apikey",
        "secret",
        "password",
        "passwd",
        "cookie",
        "cookie2",
        "session",
        "credential",
        "credentials",
    }
)
_CREDENTIAL_LAST_WORDS = frozenset({"key", "token"})
"""Credentials when they end a longer name (`x-api-key`, `access_token`); alone they are often
data (`logprobs[].token`, a tool argument `key`), and `input_token_details` is a count."""
_NAME_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_MIN_SECRET_LENGTH = 8
"""Shorter "secrets" (test placeholders, a one-letter password) are matched only as a whole value
or a URL part: replacing every occurrence of two letters would corrupt the text and protect
nothing."""


def is_credential_name(name: str) -> bool:
    """A header, field or parameter name that holds a credential: `x-api-key`, `Set-Cookie`,
    `X-Proxy-Token`, `access_token`, `apiKey`; not `max_tokens` (a count, plural)."""
    words = [word.lower() for word in _NAME_WORDS.findall(name)]
    if any(word in _CREDENTIAL_WORDS for word in words):
        return True
    return len(words) > 1 and words[-1] in _CREDENTIAL_LAST_WORDS


def _any_encoding(char: str) -> str:
    """A regex for one character as is, JSON-escaped or percent-encoded (any case, nested)."""
    code = ord(char)
    forms = [re.escape(char), rf"\\+u(?i:{code:04x})"]
    if char in '/"\\':
        forms.append(r"\\+" + re.escape(char))
    if code < 0x80:
        forms.append(rf"%(?:25)*(?i:{code:02x})")
    if char == " ":
        forms.append(r"\+")
    return "(?:" + "|".join(forms) + ")"


def _pattern(secret: str) -> re.Pattern[str]:
    return re.compile("".join(_any_encoding(char) for char in secret))


@dataclasses.dataclass(frozen=True)
class Scrubber:
    """Removes the given secrets (and key-shaped strings) from text and parsed structures."""

    secrets: tuple[str, ...] = dataclasses.field(default=(), repr=False)
    _patterns: tuple[re.Pattern[str], ...] = dataclasses.field(init=False, repr=False)
    _whole: frozenset[str] = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        cores = {s.strip() for s in self.secrets if s.strip()}
        # Longest first, so a secret containing another is replaced as a whole.
        long = sorted((s for s in cores if len(s) >= _MIN_SECRET_LENGTH), key=len, reverse=True)
        object.__setattr__(self, "_patterns", tuple(_pattern(s) for s in long))
        object.__setattr__(self, "_whole", frozenset(cores | set(self.secrets)))

    @classmethod
    def for_key(cls, key: str | None, *urls: str | None) -> Scrubber:
        """The key (padded or not) and the credentials inside the given URLs."""
        secrets = [key or ""]
        for url in urls:
            secrets += url_credentials(url or "")
        return cls(tuple(s for s in secrets if s))

    def text(self, text: str) -> str:
        if text in self._whole:
            return REDACTED
        for pattern in self._patterns:
            text = pattern.sub(REDACTED, text)
        return _USERINFO.sub(REDACTED + "@", _KEY_SHAPED.sub(REDACTED, text))

    def url(self, url: str) -> str:
        """The URL without `user:password@`, credential-named query values replaced, every
        other part cleaned as text."""
        userinfo, rest = split_userinfo(url)
        if userinfo is not None:
            url = f"{url[: url.index('://') + 3]}{REDACTED}@{rest}"
        try:
            parts = urlsplit(url)
        except ValueError:
            return self.text(url)
        query = urlencode(
            [
                (name, REDACTED if _is_credential_parameter(name) else self.text(value))
                for name, value in _query(parts.query)
            ],
            safe="*",
        )
        cleaned = urlunsplit(
            (parts.scheme, parts.netloc, self.text(parts.path), query, self.text(parts.fragment))
        )
        return self.text(cleaned)

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """Lower-cased headers; a credential-named header's value replaced as a whole."""
        return {name.lower(): self._field(name, value) for name, value in headers.items()}

    def value(self, value: Any) -> Any:
        """A copy of a parsed structure (JSON values, dataclasses) with every string cleaned."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {key: self._field(key, item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.value(item) for item in value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = [f.name for f in dataclasses.fields(value) if f.init]
            changes = {name: self._field(name, getattr(value, name)) for name in fields}
            return dataclasses.replace(value, **changes)
        return value

    def json_text(self, text: str) -> str:
        """A JSON text cleaned as its parsed value (re-encoded only when something changed);
        anything else cleaned as text."""
        try:
            parsed = json.loads(text)
        except ValueError:
            return self.text(text)
        cleaned = self.value(parsed)
        return text if cleaned == parsed else json.dumps(cleaned, ensure_ascii=False)

    def _field(self, name: Any, value: Any) -> Any:
        # A credential-named list or object goes whole too (its items carry no names that say
        # so); a count (`secret_count: 2`) or a null says nothing.
        if isinstance(name, str) and _holds_text(value) and is_credential_name(name):
            return REDACTED
        return self.value(value)


def _holds_text(value: Any) -> bool:
    return isinstance(value, str | Mapping | list | tuple)


def _is_credential_parameter(name: str) -> bool:
    """A query parameter holding a credential: a credential name, or `key` / `token` alone
    (`?key=` is how many HTTP APIs take a key)."""
    return is_credential_name(name) or name.lower() in _CREDENTIAL_LAST_WORDS


def _query(query: str) -> list[tuple[str, str]]:
    return parse_qsl(query, keep_blank_values=True)


def split_userinfo(url: str) -> tuple[str | None, str]:
    """(`user:password`, the URL after its `@`), or (None, url) when the URL has none.

    Everything between `://` and the last `@` before the query counts: a password holding an
    unencoded `/` (`https://u:ab/cd@host`) ends the authority for a URL parser, which then sees a
    host `u` with port `ab` and a path `/cd@host`; it is a password all the same."""
    _, separator, rest = url.partition("://")
    before_query = re.split(r"[?#]", rest, maxsplit=1)[0]
    if not separator or "@" not in before_query:
        return None, url
    userinfo = before_query.rpartition("@")[0]
    return userinfo, rest[len(userinfo) + 1 :]


def url_credentials(url: str) -> list[str]:
    """The secrets a URL carries: user and password, credential-named query values."""
    userinfo, _ = split_userinfo(url)
    user, _, password = (userinfo or "").partition(":")
    found = [unquote(user), unquote(password)]
    with contextlib.suppress(ValueError):  # an invalid IPv6 host: no query to read
        found += [v for name, v in _query(urlsplit(url).query) if _is_credential_parameter(name)]
    return [item for item in found if item]
