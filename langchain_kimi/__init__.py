"""LangChain integration for the Kimi models on the EvoLink gateway.

The public names load on first use (PEP 562 `__getattr__`): every pytest run imports this
package once it is installed (its `pytest11` plugin lives in `langchain_kimi.testing`), and must
not pay for langchain-core, pydantic and httpx in projects that never use Kimi.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from langchain_kimi._version import __version__

if TYPE_CHECKING:
    from langchain_kimi._contract import FOREIGN_TURN_REASONING
    from langchain_kimi._errors import (
        KimiAPIError,
        KimiAuthenticationError,
        KimiConnectionError,
        KimiContextOverflowError,
        KimiError,
        KimiForkedStreamError,
        KimiInvalidRequestError,
        KimiNotFoundError,
        KimiPermissionDeniedError,
        KimiQuotaExceededError,
        KimiRateLimitError,
        KimiStreamError,
        KimiTimeoutError,
    )
    from langchain_kimi.chat_models import ChatKimi

__all__ = [
    "FOREIGN_TURN_REASONING",
    "ChatKimi",
    "KimiAPIError",
    "KimiAuthenticationError",
    "KimiConnectionError",
    "KimiContextOverflowError",
    "KimiError",
    "KimiForkedStreamError",
    "KimiInvalidRequestError",
    "KimiNotFoundError",
    "KimiPermissionDeniedError",
    "KimiQuotaExceededError",
    "KimiRateLimitError",
    "KimiStreamError",
    "KimiTimeoutError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    value = getattr(_home_of(name), name)
    globals()[name] = value  # later lookups find it without coming here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _home_of(name: str) -> ModuleType:
    """The module defining a public name (plain imports: every arrow stays visible)."""
    if name == "ChatKimi":
        from langchain_kimi import chat_models

        return chat_models
    if name == "FOREIGN_TURN_REASONING":
        from langchain_kimi import _contract

        return _contract
    if name in __all__:
        from langchain_kimi import _errors

        return _errors
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
