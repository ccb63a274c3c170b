"""What the models of one process share: per gateway its clients, per gateway and key its gate.

A gateway is its base URLs, what its clients read from the environment when made (proxies, CA
settings: a model made after they change gets new clients) and the caller's own clients. Its keys
share its connections, as ChatOpenAI's default client is shared per base URL; the gate is per key,
as rate limits are, and lives as long as a model of its key does. No key is kept, and no client
of the caller's once its models are gone.

Each `Transport` holds a `Share`. Closing the last model of a gateway closes its clients (closing
one never breaks another); a model collected without a close leaves them open, warm for the next
one (idle connections capped, expiring as httpx expires them), and the sync clients close at
interpreter exit. A forked child starts with an empty registry: none of its parent's connections,
gates or calls in flight.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
import urllib.request
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from langchain_kimi._http.limits.gate import Gate
from langchain_kimi._http.pool.clients import GatewayClients


def environment() -> tuple[tuple[str, str], ...]:
    """What a new httpx client reads from the environment (`trust_env`): its proxies, as httpx
    reads them (`urllib.request.getproxies`), and its CA settings."""
    proxies = sorted(urllib.request.getproxies().items())
    tls = [
        (name, os.environ[name]) for name in ("SSL_CERT_FILE", "SSL_CERT_DIR") if name in os.environ
    ]
    return (*proxies, *tls)


@dataclass(frozen=True)
class GatewayKey:
    bases: tuple[str, ...]
    environment: tuple[tuple[str, str], ...] = field(repr=False)
    http_client: httpx.Client | None = field(default=None, repr=False)
    http_async_client: httpx.AsyncClient | None = field(default=None, repr=False)


def key_digest(api_key: str) -> str:
    """Gates are per key (rate limits are); the registry keeps a digest, never the key."""
    return hashlib.sha256(api_key.encode()).hexdigest()


class _Gateway:
    def __init__(self, key: GatewayKey) -> None:
        self.clients = GatewayClients(key.http_client, key.http_async_client)
        self.users: weakref.WeakSet[object] = weakref.WeakSet()
        self.gates: weakref.WeakValueDictionary[tuple[object, ...], Gate] = (
            weakref.WeakValueDictionary()
        )


@dataclass(frozen=True)
class Share:
    """One Transport's share of its gateway (of this process: `current`)."""

    clients: GatewayClients
    gate: Gate
    generation: int

    @property
    def current(self) -> bool:
        return self.generation == _generation


_GATEWAYS: dict[GatewayKey, _Gateway] = {}
_LOCK = threading.Lock()
_generation = 0
"""Bumped in a forked child: shares taken before the fork are of the parent's registry."""


def share(
    key: GatewayKey,
    digest: str,
    owner: object,
    *,
    adaptive: bool,
    clock: Callable[[], float],
) -> Share:
    """`owner`'s share of the gateway `key` (made on first use), with its key's gate."""
    with _LOCK:
        _forget_unused_injected()
        gateway = _GATEWAYS.get(key)
        if gateway is None:
            gateway = _GATEWAYS[key] = _Gateway(key)
        gateway.users.add(owner)
        gate_key = (digest, adaptive, clock)
        gate = gateway.gates.get(gate_key)
        if gate is None:
            gate = gateway.gates[gate_key] = Gate(clock, adaptive=adaptive)
        return Share(gateway.clients, gate, _generation)


def give_back(key: GatewayKey, owner: object) -> GatewayClients | None:
    """`owner` is closed: the gateway's clients, to close, when no other model uses them."""
    with _LOCK:
        gateway = _GATEWAYS.get(key)
        if gateway is None:
            return None
        gateway.users.discard(owner)
        if gateway.users:
            return None
        del _GATEWAYS[key]
        return gateway.clients


def _forget_unused_injected() -> None:
    """The caller's own clients are not kept once no model uses them (ours are, warm)."""
    for key in [key for key, gateway in _GATEWAYS.items() if not gateway.users]:
        if key.http_client is not None or key.http_async_client is not None:
            del _GATEWAYS[key]


def _fresh_registry_in_child() -> None:
    global _GATEWAYS, _LOCK, _generation
    _GATEWAYS = {}
    _LOCK = threading.Lock()  # the parent's is held across the fork (`before` below)
    _generation += 1


# No registry change is half done in the child: the forking thread holds the lock across the fork.
os.register_at_fork(
    before=lambda: _LOCK.acquire(),
    after_in_parent=lambda: _LOCK.release(),
    after_in_child=_fresh_registry_in_child,
)


@atexit.register
def _close_sync_clients_at_exit() -> None:
    # Their sockets would raise `ResourceWarning` when collected at shutdown.
    with _LOCK:
        gateways = list(_GATEWAYS.values())
    for gateway in gateways:
        gateway.clients.close()
