"""LangChain integration for the Kimi models on the EvoLink gateway."""

from langchain_kimi._contract import FOREIGN_TURN_REASONING
from langchain_kimi._errors import (
    KimiAPIError,
    KimiAuthenticationError,
    KimiConnectionError,
    KimiContextOverflowError,
    KimiError,
    KimiInvalidRequestError,
    KimiNotFoundError,
    KimiPermissionDeniedError,
    KimiQuotaExceededError,
    KimiRateLimitError,
    KimiStreamError,
    KimiTimeoutError,
)
from langchain_kimi._langchain.content_blocks import register as _register_block_translator
from langchain_kimi._version import __version__
from langchain_kimi.chat_models import ChatKimi

_register_block_translator()

__all__ = [
    "FOREIGN_TURN_REASONING",
    "ChatKimi",
    "KimiAPIError",
    "KimiAuthenticationError",
    "KimiConnectionError",
    "KimiContextOverflowError",
    "KimiError",
    "KimiInvalidRequestError",
    "KimiNotFoundError",
    "KimiPermissionDeniedError",
    "KimiQuotaExceededError",
    "KimiRateLimitError",
    "KimiStreamError",
    "KimiTimeoutError",
    "__version__",
]
