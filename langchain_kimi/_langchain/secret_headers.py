"""Credentials in `default_headers`, kept out of every view of a model as the API key is.

A proxy in front of the gateway may need a credential of its own (`Proxy-Authorization`,
`X-Proxy-Token`), and ChatKimi's refusal of `user:password@` URLs sends users to `default_headers`
for it. A header whose name, in any case, contains one of `CREDENTIAL_STEMS` is sent unchanged and
shown nowhere (over-inclusive on purpose: hiding a harmless header costs nothing in a view):

- `repr`, `str` and `model_dump` show its value as `SecretStr('**********')` (`model_dump_json`:
  `"**********"`), as they show the key; a dump given back to `ChatKimi` works (a `SecretStr`
  header value is taken);
- `dumpd` / `dumps`, and so every callback's `serialized`, write it as a LangChain secret
  reference `EVOLINK_HEADER_<NAME>` (upper case, `_` for anything but letters and digits), read
  back by `load` / `loads` from `secrets_map` (or the environment, `secrets_from_env=True`);
- a pickle leaves it out; the loading process reads the same name from its environment, and
  without it the model refuses to call (a `ValueError` naming the header) instead of calling
  without it;
- the errors of a call are cleaned of its values, as of the key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr

CREDENTIAL_STEMS = (
    "auth",
    "token",
    "secret",
    "key",
    "cookie",
    "password",
    "passwd",
    "credential",
    "session",
)
SECRET_ID_PREFIX = "EVOLINK_HEADER_"
_NOT_ALPHANUMERIC = re.compile(r"[^A-Z0-9]")


def is_credential(name: str) -> bool:
    """`Proxy-Authorization`, `X-Proxy-Token`, `x-api-key`, `Cookie`, `X-Session-Id`, ..."""
    lowered = name.lower()
    return any(stem in lowered for stem in CREDENTIAL_STEMS)


def secret_id(name: str) -> str:
    """The name a serialized or pickled model reads the header's value back from."""
    return SECRET_ID_PREFIX + _NOT_ALPHANUMERIC.sub("_", name.upper())


def accepted(headers: Any) -> Any:
    """The field's input with `SecretStr` values unwrapped (what `model_dump` gives back); a
    missing value (a `load` without the header's secret) refused, naming what to pass."""
    if not isinstance(headers, Mapping):
        return headers
    for name, value in headers.items():
        if value is None and isinstance(name, str):
            msg = (
                f"default_headers[{name!r}] has no value. Loading a serialized ChatKimi? "
                f"Its credential headers are secret references: pass "
                f"secrets_map={{{secret_id(name)!r}: ...}} to load / loads"
            )
            raise ValueError(msg)
    return {
        name: value.get_secret_value() if isinstance(value, SecretStr) else value
        for name, value in headers.items()
    }


def shown(headers: Mapping[str, str] | None) -> dict[str, str | SecretStr] | None:
    """The headers as `repr` and `model_dump` show them: credentials as `SecretStr`."""
    if headers is None:
        return None
    return {name: SecretStr(v) if is_credential(name) else v for name, v in headers.items()}


def serialized(headers: Mapping[str, str]) -> dict[str, Any]:
    """The headers as `dumpd` writes them: credentials as secret references."""
    return {
        name: {"lc": 1, "type": "secret", "id": [secret_id(name)]} if is_credential(name) else v
        for name, v in headers.items()
    }


def for_pickle(
    headers: Mapping[str, str] | None, withheld: tuple[str, ...]
) -> tuple[dict[str, str] | None, tuple[str, ...]]:
    """The headers a pickle keeps, and the names of the credential headers it leaves out (with
    those an earlier pickle left out and nobody set again)."""
    if headers is None:
        return None, withheld
    kept = {name: v for name, v in headers.items() if not is_credential(name)}
    present = {name.lower() for name in headers}
    still_missing = [name for name in withheld if name.lower() not in present]
    return kept, (*(name for name in headers if is_credential(name)), *still_missing)


def from_environment(
    headers: Mapping[str, str] | None, withheld: tuple[str, ...]
) -> tuple[dict[str, str] | None, tuple[str, ...]]:
    """An unpickled model's headers with the withheld ones its process has in its environment,
    and the names still missing."""
    found = {
        name: os.environ[secret_id(name)] for name in withheld if secret_id(name) in os.environ
    }
    missing = tuple(name for name in withheld if name not in found)
    if not found:
        return (None if headers is None else dict(headers)), missing
    return {**(headers or {}), **found}, missing


def check_present(headers: Mapping[str, str] | None, withheld: tuple[str, ...]) -> None:
    """Refuse to call without a credential header a pickle left out (unless set again)."""
    present = {name.lower() for name in headers or {}}
    missing = [name for name in withheld if name.lower() not in present]
    if missing:
        name = missing[0]
        msg = (
            f"default_headers[{name!r}] holds a credential, which a pickle does not carry, and "
            f"{secret_id(name)} is not set in this process's environment: set it before "
            "unpickling, or set the header again (model.default_headers = {...})"
        )
        raise ValueError(msg)


def values(headers: Mapping[str, str] | None) -> tuple[str, ...]:
    """The credential values, for removing them from errors: each whole, and the credentials
    of an `<scheme> <credentials>` value (`Basic dXNlcjpwdw==`) alone as well."""
    found: list[str] = []
    for name, value in (headers or {}).items():
        if is_credential(name):
            found += {value, value.split()[-1] if value.strip() else value}
    return tuple(found)
