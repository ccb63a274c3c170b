"""The clients under test, each pointed at the loopback server.

Pairs compared on the same replies: `kimi-anthropic` vs `ChatAnthropic` (Messages protocol);
`kimi-openai` vs `ChatOpenAI` and `ChatDeepSeek` (Chat Completions). Peers are imported only
when built, so timing one client never pays for another's imports.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage

MODEL = "kimi-k3.1-pro"
API_KEY = "bench"

KIMI_ANTHROPIC = "kimi-anthropic"
KIMI_OPENAI = "kimi-openai"
CHAT_ANTHROPIC = "ChatAnthropic"
CHAT_OPENAI = "ChatOpenAI"
CHAT_DEEPSEEK = "ChatDeepSeek"

CLIENTS = (KIMI_ANTHROPIC, CHAT_ANTHROPIC, KIMI_OPENAI, CHAT_OPENAI, CHAT_DEEPSEEK)
PROTOCOL = {
    KIMI_ANTHROPIC: "anthropic",
    CHAT_ANTHROPIC: "anthropic",
    KIMI_OPENAI: "openai",
    CHAT_OPENAI: "openai",
    CHAT_DEEPSEEK: "openai",
}


def _kimi(protocol: str) -> Callable[[str], BaseChatModel]:
    def build(root: str) -> BaseChatModel:
        from langchain_kimi import ChatKimi

        return ChatKimi.model_validate(
            {
                "model": MODEL,
                "protocol": protocol,
                "base_url": root,
                "api_key": API_KEY,
                "max_retries": 0,
            }
        )

    return build


def _anthropic(root: str) -> BaseChatModel:
    from langchain_anthropic import ChatAnthropic

    return ChatAnthropic.model_validate(
        {"model": MODEL, "base_url": root, "api_key": API_KEY, "max_retries": 0}
    )


def _openai(root: str) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI.model_validate(
        {"model": MODEL, "base_url": f"{root}/v1", "api_key": API_KEY, "max_retries": 0}
    )


def _deepseek(root: str) -> BaseChatModel:
    from langchain_deepseek import ChatDeepSeek

    return ChatDeepSeek.model_validate(
        {"model": MODEL, "api_base": f"{root}/v1", "api_key": API_KEY, "max_retries": 0}
    )


_FACTORIES: dict[str, Callable[[str], BaseChatModel]] = {
    KIMI_ANTHROPIC: _kimi("anthropic"),
    KIMI_OPENAI: _kimi("openai"),
    CHAT_ANTHROPIC: _anthropic,
    CHAT_OPENAI: _openai,
    CHAT_DEEPSEEK: _deepseek,
}


def build(name: str, port: int) -> BaseChatModel:
    """A fresh instance of client `name` aimed at the loopback server on `port`."""
    return _FACTORIES[name](f"http://127.0.0.1:{port}")


def parsed_chunks(model: BaseChatModel, messages: list[BaseMessage]) -> list[AIMessageChunk]:
    """The chunks `model._stream` yields for `messages`, before LangChain's wrapper touches them."""
    chunks = []
    for generation in model._stream(messages):
        message = generation.message
        if not isinstance(message, AIMessageChunk):  # pragma: no cover - a chat model's contract
            msg = f"expected AIMessageChunk, got {type(message).__name__}"
            raise TypeError(msg)
        chunks.append(message)
    return chunks
