"""Who may talk to the server: the token, the Host and Origin checks (an ASGI middleware).

- With a token, every request must carry it: `Authorization: Bearer <token>`, or the cookie the
  server sets when the page is opened as `/?token=<token>` (the page then reloads without it in
  the address bar). A browser's `EventSource` cannot set headers; the cookie is how it is sent.
  The cookie is `HttpOnly` and `SameSite=Strict`, so other sites' pages cannot use it.
- Without a token (the loopback default), only requests whose `Host` is in `allowed_hosts`
  (loopback names) are served: a web page on another site cannot reach the server by pointing
  its own domain at 127.0.0.1 (DNS rebinding).
- Always: a request with an `Origin` header from another host than the one it is addressed to
  is refused (cross-site requests), and state-changing requests must be JSON (`POST` with
  `Content-Type: application/json`, which cross-site forms cannot send without a preflight).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

__all__ = ["LOOPBACK_HOSTS", "Guard"]

LOOPBACK_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
"""Host names served without a token by default."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _host_name(host: str) -> str:
    """`example.com:8000` -> `example.com`; `[::1]:8000` -> `::1`."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """The ASGI middleware in front of the app (see the module docstring)."""

    def __init__(
        self, app: ASGIApp, *, token: str | None, allowed_hosts: Sequence[str] | None
    ) -> None:
        self.app = app
        self.token = token
        self.allowed_hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        problem = self._check_origin(headers, host)
        allowed = self.allowed_hosts
        if problem is None and self.token is None and allowed is not None:
            problem = _check_host(host, allowed)
        if problem is None and self.token is not None:
            given = self._given_token(scope, headers)
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            if "token" in query and scope["method"] == "GET":
                if hmac.compare_digest(query["token"].encode(), self.token.encode()):
                    await self._set_cookie_and_redirect(scope, send, query)
                    return
                problem = (401, "wrong token in the address")
            elif given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
                problem = (
                    401,
                    "this server needs its token: open the address `agentcore serve` printed "
                    "(…/?token=…), or send the header Authorization: Bearer <token>",
                )
        if problem is None and scope["method"] not in ("GET", "HEAD", "OPTIONS"):
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "application/json":
                problem = (
                    415,
                    f"expected a JSON body (Content-Type: application/json), got {kind!r}",
                )
        if problem is not None:
            await _refuse(send, *problem)
            return
        await self.app(scope, receive, send)

    def _cookie_name(self, scope: Scope) -> str:
        server = scope.get("server") or ("", 0)
        return f"agentcore_token_{server[1]}"

    def _given_token(self, scope: Scope, headers: dict[str, str]) -> str | None:
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        name = self._cookie_name(scope)
        for part in headers.get("cookie", "").split(";"):
            key, _, value = part.strip().partition("=")
            if key == name:
                return value
        return None

    @staticmethod
    def _check_origin(headers: dict[str, str], host: str) -> tuple[int, str] | None:
        origin = headers.get("origin")
        if origin is None:
            return None
        netloc = urlsplit(origin).netloc.lower()
        if netloc != host.strip().lower():
            return 403, f"cross-origin request refused (Origin {origin!r}, Host {host!r})"
        return None

    async def _set_cookie_and_redirect(
        self, scope: Scope, send: Send, query: dict[str, str]
    ) -> None:
        rest = {k: v for k, v in query.items() if k != "token"}
        location = (
            scope.get("root_path", "") + scope["path"] + ("?" + urlencode(rest) if rest else "")
        )
        cookie = f"{self._cookie_name(scope)}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode("latin-1")),
                    (b"set-cookie", cookie.encode("latin-1")),
                    (b"cache-control", b"no-store"),
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})


def _check_host(host: str, allowed: set[str]) -> tuple[int, str] | None:
    if _host_name(host) in allowed:
        return None
    names = ", ".join(sorted(allowed))
    return (
        403,
        f"this server answers only requests addressed to {names} (got Host {host!r}); "
        "serve it with a token to reach it under other names",
    )


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
