"""Clients that open a connection and never finish their request headers ("slowloris"), for the
tests of the servers' header timeout and connection cap (`agentcore.netguard.serve`): the web
chat, MCP's `serve_http` and `serve_a2a`, each run as a subprocess with a low file descriptor
limit (`low_fd_limit`, its `preexec_fn`)."""

from __future__ import annotations

import resource
import socket
import time

__all__ = ["FD_LIMIT", "all_closed_within", "low_fd_limit", "open_slow_connections"]

FD_LIMIT = 256
"""The server's file descriptor limit in these tests: fewer than the slow clients opened."""


def low_fd_limit() -> None:
    """`preexec_fn` of the server's subprocess: at most `FD_LIMIT` file descriptors."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


def open_slow_connections(port: int, count: int = 300) -> list[socket.socket]:
    """`count` connections to 127.0.0.1:`port`, each having sent a request line and one header
    but never the blank line that ends the headers (stops after a few refused connects)."""
    slow: list[socket.socket] = []
    failures = 0
    for _ in range(count):
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
        except OSError:
            s.close()
            failures += 1
            if failures > 3:
                break
            continue
        slow.append(s)
    return slow


def all_closed_within(slow: list[socket.socket], seconds: float) -> int:
    """After `seconds`, how many of `slow` the server has closed (each read gives EOF or fails)."""
    time.sleep(seconds)
    closed = 0
    for s in slow:
        try:
            s.settimeout(0.5)
            closed += s.recv(1) == b""
        except OSError:
            closed += 1
    return closed
