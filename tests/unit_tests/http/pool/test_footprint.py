"""What one process holds follows the work in flight, not the keys, loops and bursts it has seen
(issue 28, items 1, 2, 3, 5). Sockets and descriptors are counted in `/proc/self/fd`; the gateway
runs in another process (an echo gateway: each answer is its request's last message), so every
socket counted is one of ours.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from langchain_kimi import ChatKimi
from langchain_kimi._http.limits.knobs import KNOBS
from langchain_kimi._http.pool import clients as pool_clients
from tests.support.echo_gateway import EchoServer
from tests.support.fake_transport import idle_clients
from tests.support.loopback import running

pytestmark = [
    pytest.mark.enable_socket,
    pytest.mark.allow_hosts(["127.0.0.1"]),
    pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd"),
]

ROOT = Path(__file__).resolve().parents[4]
_GATEWAY = textwrap.dedent(
    """
    import sys, time
    from tests.support.echo_gateway import EchoHandler, EchoServer
    from tests.support.loopback import running

    # A reused connection otherwise waits for the client's delayed ACK (~40 ms) on each answer:
    # http.server writes its headers and its body apart.
    EchoHandler.disable_nagle_algorithm = True

    delay = float(sys.argv[1])
    with running(EchoServer()) as server:
        if delay:
            server.on_request = lambda body: time.sleep(delay)
        print(server.url, flush=True)
        sys.stdin.read()  # until the test closes our stdin
    """
)


def _gateway_process(delay: float = 0.0) -> Iterator[str]:
    with subprocess.Popen(
        [sys.executable, "-c", _GATEWAY, str(delay)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdout is not None
        assert child.stdin is not None
        url = child.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        try:
            yield url
        finally:
            child.stdin.close()
            child.wait(timeout=30)


@pytest.fixture
def gateway() -> Iterator[str]:
    yield from _gateway_process()


@pytest.fixture
def slow_gateway() -> Iterator[str]:
    """Each answer after 50 ms, so that 64 threads hold 64 connections at once."""
    yield from _gateway_process(0.05)


def _sockets() -> int:
    count = 0
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile
            count += os.readlink(f"/proc/self/fd/{name}").startswith("socket:")
    return count


def _sockets_to(url: str) -> int:
    """This process's sockets connected to `url`'s port: the open descriptors' socket inodes
    found in the kernel's TCP tables with that remote port. Other tests' pools, shared by the
    process and expiring on their own clock, are not counted."""
    port = httpx.URL(url).port
    inodes = set()
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed meanwhile
            link = os.readlink(f"/proc/self/fd/{name}")
            if link.startswith("socket:["):
                inodes.add(link[len("socket:[") : -1])
    count = 0
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as lines:
            next(lines)  # the header
            for line in lines:
                fields = line.split()
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                count += remote_port == port and fields[9] in inodes
    return count


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _model(url: str, key: str, **fields: object) -> ChatKimi:
    return ChatKimi(api_key=key, base_url=url, timeout=10, max_retries=0, **fields)


def test_four_hundred_tenants_share_one_set_of_connections(gateway: str) -> None:
    """One model per tenant key, one call each, models dropped: the keys share the gateway's
    connections (main: one pool, one socket, per key; ~391 sockets held)."""
    gc.collect()
    before = _sockets()
    for i in range(400):
        model = _model(gateway, f"sk-tenant-{i:04d}-0123456789abcdef")
        assert model.invoke(f"tenant {i}").content == f"tenant {i}"
        del model
    gc.collect()
    assert _sockets() - before <= 10


def test_four_hundred_tenants_in_one_event_loop_share_its_connections(gateway: str) -> None:
    async def tenants() -> int:
        for i in range(400):
            model = _model(gateway, f"sk-atenant-{i:04d}-0123456789abcdef")
            assert (await model.ainvoke(f"tenant {i}")).content == f"tenant {i}"
            del model
        gc.collect()
        return _sockets()

    gc.collect()
    before = _sockets()
    assert asyncio.run(tenants()) - before <= 10


class _KeyedEcho(EchoServer):
    """Records, for each request, the key it carried and the message it asked to echo."""

    def __init__(self) -> None:
        super().__init__()
        self.pairs: list[tuple[str, str]] = []

    def _answer(self, request: httpx.Request) -> httpx.Response:
        messages = json.loads(request.content)["messages"]
        with self._lock:
            self.pairs.append((request.headers.get("authorization", ""), messages[-1]["content"]))
        return super()._answer(request)


def test_two_keys_on_one_gateway_share_connections_and_send_only_their_own_key() -> None:
    """The key travels in each request's header, never on the shared client: calls of two keys
    interleaved on the same connections each carry their own key."""
    keys = {"a": "sk-tenant-a-0123456789abcdef", "b": "sk-tenant-b-0123456789abcdef"}
    with running(_KeyedEcho()) as server:
        models = {name: _model(server.url, key) for name, key in keys.items()}
        with ThreadPoolExecutor(8) as threads:
            asked = [(name, f"{name}-{i}") for i in range(40) for name in keys]
            answers = list(threads.map(lambda job: models[job[0]].invoke(job[1]).content, asked))
        assert answers == [text for _, text in asked]
        shares = {name: model._transport()._shared() for name, model in models.items()}
        assert shares["a"].clients is shares["b"].clients
        assert shares["a"].gate is not shares["b"].gate
        assert all("authorization" not in c.headers for c in idle_clients(models["a"]._transport()))
        assert len(server.pairs) == 80
        for authorization, text in server.pairs:
            assert authorization == f"Bearer {keys[text[0]]}", text
        for model in models.values():
            model.close()


@pytest.mark.filterwarnings("ignore::ResourceWarning")  # loops dropped unclosed, on purpose
def test_event_loops_dropped_without_close_go_with_their_sockets(gateway: str) -> None:
    """150 loops, each for one `ainvoke`, dropped without `close()`: after `gc.collect()` the
    descriptors are back (main: +600, 4 per loop: selector, self-pipe pair, one connection)."""
    model = _model(gateway, "sk-loops-0123456789abcdef")
    asyncio.run(model.ainvoke("warm"))
    gc.collect()
    before = _fds()
    for i in range(150):
        loop = asyncio.new_event_loop()
        assert loop.run_until_complete(model.ainvoke(f"loop {i}")).content == f"loop {i}"
        del loop
    gc.collect()
    assert _fds() - before <= 8


def test_idle_connections_after_a_burst_are_capped(
    slow_gateway: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sync load from 64 threads, then no traffic: the idle clients beyond the keep-alive cap
    (one connection each) are closed at once; the idle ones expire as httpx expires them."""
    monkeypatch.setattr(pool_clients, "KNOBS", dataclasses.replace(KNOBS, idle_connections=8))
    model = _model(slow_gateway, "sk-burst-0123456789abcdef")
    assert _sockets_to(slow_gateway) == 0
    with ThreadPoolExecutor(64) as threads:
        answers = list(threads.map(lambda i: model.invoke(f"burst {i}").content, range(256)))
    assert answers == [f"burst {i}" for i in range(256)]
    assert 1 <= _sockets_to(slow_gateway) <= 8
    assert model.invoke("after").content == "after"


def test_shutdown_without_close_leaves_no_resource_warning(gateway: str) -> None:
    """One sync `invoke`, then exit without `close()`: no `ResourceWarning: unclosed socket` at
    interpreter shutdown (main: one)."""
    program = textwrap.dedent(
        f"""
        from langchain_kimi import ChatKimi

        model = ChatKimi(api_key="sk-exit-0123456789abcdef", base_url={gateway!r}, timeout=10)
        assert model.invoke("bye").content == "bye"
        """
    )
    child = subprocess.run(
        [sys.executable, "-W", "error::ResourceWarning", "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    assert "ResourceWarning" not in child.stderr
    assert "unclosed" not in child.stderr


def test_a_gateway_is_also_its_tls_and_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client reads the CA and proxy variables when it is made: a model made after they change
    gets its own connections (keys still share them)."""
    url = "http://127.0.0.1:9"
    monkeypatch.delenv("NO_PROXY", raising=False)
    first = _model(url, "sk-env-a-0123456789abcdef")._transport()._shared().clients
    assert _model(url, "sk-env-b-0123456789abcdef")._transport()._shared().clients is first
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    other = _model(url, "sk-env-a-0123456789abcdef")._transport()._shared().clients
    assert other is not first
