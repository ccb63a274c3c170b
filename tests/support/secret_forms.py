"""One API key in every form a gateway or an environment may hand it back, for the leak tests.

The keys hold `/`, `+` and `=` so that JSON's `\\/` escape and percent-encoding change them; one
has the `sk-` prefix, one has not (a key-shaped pattern alone would not find it).
"""

from __future__ import annotations

import json
from urllib.parse import quote

KEYS = {
    "sk-prefixed": "sk-Test/Key+With=Symbols0123456789",
    "unprefixed": "evo_Test/Key+With=Symbols9876543210",
}


def escaped_slash(key: str) -> str:
    return json.dumps(key)[1:-1].replace("/", "\\/")


def escaped_unicode(key: str) -> str:
    return "".join(f"\\u{ord(char):04x}" for char in key)


def url_encoded(key: str) -> str:
    return quote(key, safe="")


def padded(key: str) -> str:
    return f"  {key}\t"


ENCODINGS = {
    "plain": lambda key: key,
    "json-escaped-slash": escaped_slash,
    "json-unicode-escaped": escaped_unicode,
    "url-encoded": url_encoded,
    "padded": padded,
}
"""How the key travels: each is what a JSON or form body, or an environment value, holds."""


def forms(key: str) -> dict[str, str]:
    return {name: encode(key) for name, encode in ENCODINGS.items()}


def leaks(text: str, key: str) -> list[str]:
    """The forms of `key` found in `text`, ignoring case (so `%2f` and `\\u004B` count too)."""
    haystack = text.lower()
    return [name for name, form in forms(key).items() if form.strip().lower() in haystack]
