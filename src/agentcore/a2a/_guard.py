"""Who may talk to an A2A server: Host and Origin checks, the bearer token, bounded bodies.

A small ASGI middleware of its own (the rules are those of `agentcore.mcp`'s and
`agentcore.web`'s servers, see docs/security.md; integrations do not share private modules):

- the `Host` header, and the `Origin` header when there is one, must name an allowed host
  (421 / 403): a page on another site cannot reach a loopback server through DNS rebinding;
- with a token, every request (the agent card included) must carry `Authorization: Bearer
  <token>`, compared in constant time (401 with a `WWW-Authenticate: Bearer` challenge);
- a request with a body must say it is JSON (`application/json` or `application/a2a+json`), which
  a cross-site form cannot send without a preflight (415);
- a body is capped at `max_body_bytes` (413), whether or not it announces its length.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import string
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from .. import ConfigError

__all__ = ["Guard", "allowed_hosts", "check_token", "is_loopback"]

_WILDCARD = frozenset({"", "0.0.0.0", "::"})
_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "-._~+/=")
_MIN_TOKEN = 16
_JSON_TYPES = frozenset({"application/json", "application/a2a+json"})

Hosts = list[tuple[str, int | None]]


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (`localhost`, 127.0.0.0/8, `::1`)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, int | None] | None:
    """(name, port) of a Host header or an allowed-host entry; None when it cannot be read."""
    value = value.strip().lower()
    port: str | None = None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                return None
            port = rest[1:]
    elif value.count(":") == 1:
        name, port = value.split(":")
    else:
        name = value
    if not name:
        return None
    if port is None or port == "*":
        return name, None
    return (name, int(port)) if port.isdigit() else None


def allowed_hosts(host: str, extra: Sequence[str] | None) -> Hosts | None:
    """The Host (and Origin) names a server bound to `host` answers; None: any (a wildcard
    address without `extra`: the token protects it)."""
    allowed: Hosts = []
    for entry in extra or ():
        parsed = _split_host(entry) if isinstance(entry, str) else None
        if parsed is None:
            raise ConfigError(
                "allowed_hosts entries are host names or addresses, optionally with ':port', "
                f"got {entry!r}"
            )
        allowed.append(parsed)
    if host in _WILDCARD:
        return allowed or None
    allowed.append((host.lower(), None))
    if is_loopback(host):
        allowed.extend((name, None) for name in ("localhost", "127.0.0.1", "::1"))
    return allowed


def check_token(token: str | None) -> bytes | None:
    """The token as bytes, or None; a `ConfigError` for one too short or with odd characters."""
    if token is None:
        return None
    if not isinstance(token, str) or len(token) < _MIN_TOKEN or not set(token) <= _TOKEN_CHARS:
        raise ConfigError(
            f"token must be at least {_MIN_TOKEN} characters of letters, digits or '-._~+/=' "
            "(what an 'Authorization: Bearer' header carries), e.g. secrets.token_urlsafe(32); "
            f"got {'an empty string' if token == '' else 'another value'}"
        )
    return token.encode()


class Guard:
    """The ASGI middleware in front of the A2A app (see the module docstring)."""

    def __init__(
        self, app: Any, *, hosts: Hosts | None, token: bytes | None, max_body_bytes: int
    ) -> None:
        self._app = app
        self._hosts = hosts
        self._token = token
        self._max = max_body_bytes

    def _allows(self, value: str | None) -> bool:
        if self._hosts is None:
            return True
        parsed = _split_host(value) if value else None
        if parsed is None:
            return False
        name, port = parsed
        if any(name == n and (p is None or port == p) for n, p in self._hosts):
            return True
        # 127.0.0.2 is as local as 127.0.0.1
        return is_loopback(name) and any(is_loopback(n) for n, _ in self._hosts)

    def _problem(self, method: str, headers: dict[str, str]) -> tuple[int, str] | None:
        if not self._allows(headers.get("host")):
            return 421, "Invalid Host header: this A2A server does not answer to that name"
        origin = headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or not self._allows(parts.netloc):
                return 403, "Invalid Origin header: requests from that site are refused"
        if self._token is not None:
            scheme, _, credential = headers.get("authorization", "").partition(" ")
            if not (
                scheme.lower() == "bearer"
                and hmac.compare_digest(credential.strip().encode("latin-1"), self._token)
            ):
                sent = " (the one sent is wrong)" if headers.get("authorization") else ""
                return 401, (
                    "Unauthorized: this A2A server needs 'Authorization: Bearer <token>' with its "
                    f"token{sent}"
                )
        if method not in ("GET", "HEAD", "OPTIONS"):
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind not in _JSON_TYPES:
                return 415, f"expected a JSON body (Content-Type: application/json), got {kind!r}"
        length = headers.get("content-length")
        if length is not None:
            if not (length.isascii() and length.isdigit() and len(length) <= 20):
                return 400, f"expected a number of bytes in Content-Length, got {length[:40]!r}"
            if int(length) > self._max:
                return 413, self._too_large()
        return None

    def _too_large(self) -> str:
        return f"the request body is larger than this A2A server accepts ({self._max} bytes)"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers: dict[str, str] = {}
        for key, value in scope.get("headers", ()):
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        problem = self._problem(scope["method"], headers)
        if problem is not None:
            await _refuse(send, *problem, bearer=problem[0] == 401)
            return
        if scope["method"] in ("GET", "HEAD"):
            await self._app(scope, receive, send)
            return
        # The body is read here, up to the cap, before the app sees it: the SDK turns any error
        # while it reads into a JSON-RPC error of its own, so a cap checked as it reads would be
        # lost. What is held is bounded by `max_body_bytes`.
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            if len(body) > self._max:
                await _refuse(send, 413, self._too_large())
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()  # after the body: the disconnect, when it comes

        await self._app(scope, replay, send)


async def _refuse(send: Any, status: int, text: str, *, bearer: bool = False) -> None:
    # A JSON-RPC error (id null: the request was not read), which the SDK's client shows.
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": text}}
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if bearer:
        headers.append((b"www-authenticate", b'Bearer realm="a2a"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
