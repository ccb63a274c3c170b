"""HTTP transport: pooled httpx clients, auth headers, retries, fallback base URL, I/O loops.

`Transport` is the sync I/O loops (`_sync/exchange.py`, generated from the async ones), the async
ones (`_async/exchange.py`) and what both share (`exchange.py`), plus its life cycle. An open event
stream is `event_stream`.

A `Transport` owns sockets, locks and loop-bound clients, so it is not picklable: ChatKimi keeps
only the (picklable) `TransportConfig` inputs and recreates the Transport lazily after unpickling.
"""

from __future__ import annotations

from typing import NoReturn

from langchain_kimi._http._async.exchange import AsyncExchange
from langchain_kimi._http._sync.exchange import SyncExchange
from langchain_kimi._http.exchange import JsonReply, TransportConfig

__all__ = ["JsonReply", "Transport", "TransportConfig"]


class Transport(SyncExchange, AsyncExchange):
    """HTTP to the Kimi gateway. Thread-safe; usable from several event loops in turn.

    Injected clients are used as-is (our timeout is still passed per request) and never closed.
    The gateway's clients and the key's gate (`limits/`) are shared with every Transport of the
    same gateway, and of the same key (`pool/registry.py`).
    """

    def __repr__(self) -> str:
        return f"Transport(base_urls={self._bases!r}, max_retries={self._config.max_retries})"

    def __reduce__(self) -> NoReturn:
        raise TypeError("Transport is not picklable; rebuild it from its TransportConfig")

    def close(self) -> None:
        """Return our share of the gateway; the last Transport using it closes its clients."""
        clients = self._give_back()
        if clients is not None:
            clients.close()

    async def aclose(self) -> None:
        """`close`, also closing the current loop's client there."""
        clients = self._give_back()
        if clients is not None:
            loop_client = clients.close()
            if loop_client is not None:
                await loop_client.aclose()

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
