"""Connections as httpx means them: proxies and CA settings from the environment, exactly as
`httpx.Client()` reads them, through a loopback forward proxy (plain HTTP and `CONNECT`); the
caller's own clients keep their own settings; no cookie goes from one key's answer to another
key's request; idle keep-alives stay within the cap after a load from many threads."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import trustme

from langchain_kimi import ChatKimi
from langchain_kimi._http.limits.knobs import KNOBS
from tests.support.echo_gateway import EchoServer
from tests.support.forward_proxy import ForwardProxy
from tests.support.loopback import running

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

KEY = "sk-proxy-test-0123456789abcdef"
HOST = "kimi.proxy-test"  # known to no resolver: only the proxy reaches it
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


@pytest.fixture
def proxy() -> Iterator[ForwardProxy]:
    with running(ForwardProxy()) as server:
        assert isinstance(server, ForwardProxy)
        yield server


@pytest.fixture
def gateway() -> Iterator[EchoServer]:
    with running(EchoServer()) as server:
        assert isinstance(server, EchoServer)
        yield server


@pytest.fixture
def tls_gateway(tmp_path: Path) -> Iterator[tuple[EchoServer, Path]]:
    """The echo gateway over TLS, its certificate for HOST from a throwaway CA (in a file)."""
    authority = trustme.CA()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert(HOST).configure_cert(context)
    ca_file = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    server = EchoServer()
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with running(server):
        yield server, ca_file


def _port(server: EchoServer) -> int:
    return int(server.server_address[1])


def _ask(model: ChatKimi, text: str, mode: str) -> str:
    if mode == "sync":
        return str(model.invoke(text).content)
    return str(asyncio.run(model.ainvoke(text)).content)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"])
def test_a_plain_http_gateway_is_reached_through_the_environments_proxy(
    gateway: EchoServer,
    proxy: ForwardProxy,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    mode: str,
) -> None:
    monkeypatch.setenv(variable, proxy.url)
    url = f"http://{HOST}:{_port(gateway)}"
    model = ChatKimi(api_key=KEY, base_url=url, allow_insecure_http=True, max_retries=0)
    assert _ask(model, f"through {variable}", mode) == f"through {variable}"
    assert proxy.seen == [f"POST {url}/v1/chat/completions"]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "https_proxy", "ALL_PROXY"])
def test_an_https_gateway_is_tunnelled_through_the_environments_proxy_with_its_ca(
    tls_gateway: tuple[EchoServer, Path],
    proxy: ForwardProxy,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    mode: str,
) -> None:
    server, ca_file = tls_gateway
    monkeypatch.setenv(variable, proxy.url)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    model = ChatKimi(api_key=KEY, base_url=f"https://{HOST}:{_port(server)}", max_retries=0)
    assert _ask(model, "tunnelled", mode) == "tunnelled"
    assert proxy.seen == [f"CONNECT {HOST}:{_port(server)}"]
    assert server.seen == [(f"Bearer {KEY}", f"{HOST}:{_port(server)}")]


def test_without_the_ca_variable_the_gateways_certificate_is_refused(
    tls_gateway: tuple[EchoServer, Path], proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, _ = tls_gateway
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    model = ChatKimi(api_key=KEY, base_url=f"https://{HOST}:{_port(server)}", max_retries=0)
    with pytest.raises(Exception, match="CERTIFICATE_VERIFY_FAILED"):
        model.invoke("untrusted")


@pytest.mark.parametrize("no_proxy", ["NO_PROXY", "no_proxy"])
def test_no_proxy_sends_the_gateways_calls_direct(
    gateway: EchoServer, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch, no_proxy: str
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv(no_proxy, "127.0.0.1")
    model = ChatKimi(api_key=KEY, base_url=gateway.url, max_retries=0)
    assert model.invoke("direct").content == "direct"
    assert proxy.seen == []


def test_the_callers_own_client_keeps_its_own_settings(
    gateway: EchoServer, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    own = httpx.Client(trust_env=False)  # the caller's choice: no proxy from the environment
    model = ChatKimi(api_key=KEY, base_url=gateway.url, max_retries=0, http_client=own)
    assert model.invoke("mine").content == "mine"
    assert proxy.seen == []


class _CookieGateway(EchoServer):
    """Sets a cookie naming the key each answer went to, and records the cookies it is sent."""

    def __init__(self) -> None:
        super().__init__()
        self.cookies: list[tuple[str, str | None]] = []

    def _answer(self, request: httpx.Request) -> httpx.Response:
        key = request.headers["authorization"].removeprefix("Bearer ")
        with self._lock:
            self.cookies.append((key, request.headers.get("cookie")))
        response = super()._answer(request)
        response.headers["set-cookie"] = f"tenant={key[-8:]}; Path=/"
        return response


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_no_cookie_set_for_one_key_is_sent_with_another_keys_request(mode: str) -> None:
    with running(_CookieGateway()) as server:
        assert isinstance(server, _CookieGateway)
        keys = [f"sk-tenant-{name}-0123456789abcdef" for name in "ab"]
        models = [ChatKimi(api_key=key, base_url=server.url, max_retries=0) for key in keys]
        asked = [(model, f"round {round_}") for round_ in range(3) for model in models]
        if mode == "sync":
            answers = [model.invoke(text).content for model, text in asked]
        else:  # one event loop: its one client serves both keys

            async def ask_all() -> list[object]:
                return [(await model.ainvoke(text)).content for model, text in asked]

            answers = asyncio.run(ask_all())
        assert answers == [text for _, text in asked]
        assert len(server.cookies) == 6
        assert [cookie for _, cookie in server.cookies] == [None] * 6


def _idle_sockets_to(port: int) -> int:
    """Established sockets of this process to `port` (in the kernel's TCP tables)."""
    import os

    inodes = set()
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/self/fd/{name}")
            if link.startswith("socket:["):
                inodes.add(link[len("socket:[") : -1])
    count = 0
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                count += int(fields[2].rsplit(":", 1)[1], 16) == port and fields[9] in inodes
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts /proc/self/fd")
def test_idle_keep_alives_stay_within_the_cap_after_a_load_from_many_threads(
    gateway: EchoServer,
) -> None:
    import threading

    arrived = threading.Barrier(2 * KNOBS.idle_connections, timeout=30)
    gateway.on_request = lambda body: arrived.wait()  # every call in flight at once
    model = ChatKimi(api_key=KEY, base_url=gateway.url, max_retries=0, timeout=60)
    calls = 2 * KNOBS.idle_connections
    with ThreadPoolExecutor(calls) as threads:
        answers = list(threads.map(lambda i: model.invoke(f"load {i}").content, range(calls)))
    assert answers == [f"load {i}" for i in range(calls)]
    assert 1 <= _idle_sockets_to(_port(gateway)) <= KNOBS.idle_connections
    model.close()
