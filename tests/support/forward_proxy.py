"""A loopback forward proxy for tests: plain HTTP (absolute-form requests) and `CONNECT` tunnels.

Every host it is asked for is reached on 127.0.0.1 at the port asked for, so a test can name a
gateway `kimi.proxy-test` (which no resolver knows: a request that skips the proxy fails) and still
reach its loopback server. It records what it was asked (`seen`: "GET http://...", "CONNECT
host:port").
"""

from __future__ import annotations

import select
import socket
import threading
from urllib.parse import urlsplit

from tests.support.loopback import LoopbackServer, QuietHandler


class ProxyHandler(QuietHandler):
    server: ForwardProxy

    def do_CONNECT(self) -> None:
        self.server.record(f"CONNECT {self.path}")
        _, _, port = self.path.rpartition(":")
        with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as upstream:
            self.send_response(200, "Connection established")
            self.end_headers()
            self.wfile.flush()
            _pipe(self.connection, upstream)
        self.close_connection = True

    def _forward(self) -> None:
        self.server.record(f"{self.command} {self.path}")
        target = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        lines = [
            f"{self.command} {target.path or '/'}{'?' + target.query if target.query else ''} HTTP/1.1"
        ]
        lines += [f"{name}: {value}" for name, value in self.headers.items()
                  if name.lower() not in ("proxy-connection", "connection")]  # fmt: skip
        lines.append("connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        with socket.create_connection(("127.0.0.1", target.port or 80), timeout=10) as upstream:
            upstream.sendall(head + body)
            while chunk := upstream.recv(65536):
                self.wfile.write(chunk)
        self.close_connection = True

    do_GET = do_POST = _forward  # noqa: N815


def _pipe(client: socket.socket, upstream: socket.socket) -> None:
    """Copy bytes both ways until one side closes."""
    sockets = [client, upstream]
    while True:
        readable, _, _ = select.select(sockets, [], [], 10)
        if not readable:
            return
        for source in readable:
            data = source.recv(65536)
            if not data:
                return
            (upstream if source is client else client).sendall(data)


class ForwardProxy(LoopbackServer):
    def __init__(self) -> None:
        super().__init__(ProxyHandler)
        self.seen: list[str] = []
        self._lock = threading.Lock()

    def record(self, line: str) -> None:
        with self._lock:
            self.seen.append(line)

    def __repr__(self) -> str:
        return f"ForwardProxy({self.url}, seen={len(self.seen)})"
