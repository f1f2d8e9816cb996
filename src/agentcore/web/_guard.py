"""Who may talk to the server: the token, the Host and Origin checks (an ASGI middleware).

- With a token, every request must carry it: `Authorization: Bearer <token>`, or the cookie the
  server sets when the page is opened as `/?token=<token>` (the page then reloads without it in
  the address bar, always on this server: a path like `//evil.example/` cannot send it away).
  A browser's `EventSource` cannot set headers; the cookie is how it is sent. The cookie holds
  a digest of the token (any token fits in a cookie, `;` and spaces included), and it is
  `HttpOnly` and `SameSite=Strict`, so other sites' pages cannot use it.
- Without a token (`agentcore serve --no-token`), only requests whose `Host` is in
  `allowed_hosts` are served (loopback names; every loopback address counts, `127.0.0.2` too):
  a web page on another site cannot reach the server by pointing its own domain at 127.0.0.1
  (DNS rebinding).
- Request bodies are capped (`max_body_bytes`): a larger one is refused with 413 before the
  handler reads it.
- Always: a request with an `Origin` header from another host than the one it is addressed to
  is refused (cross-site requests), and state-changing requests must be JSON (`POST` with
  `Content-Type: application/json`, which cross-site forms cannot send without a preflight).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

__all__ = ["LOOPBACK_HOSTS", "Guard"]

LOOPBACK_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
"""Host names served without a token by default."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _is_loopback_address(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _digest(token: str) -> str:
    """What the cookie holds: a digest of the token (hex, so any token fits in a cookie)."""
    return hashlib.sha256(b"agentcore-web-cookie\0" + token.encode("utf-8")).hexdigest()


def _host_name(host: str) -> str:
    """`example.com:8000` -> `example.com`; `[::1]:8000` -> `::1`."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """The ASGI middleware in front of the app (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        allowed_hosts: Sequence[str] | None,
        max_body_bytes: int | None = None,
    ) -> None:
        if token is not None and not token.strip():
            raise ValueError("the token is empty: give a real one, or None for no token")
        self.app = app
        self.token = token
        self.allowed_hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}
        self.max_body_bytes = max_body_bytes

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
            token = self.token
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            if "token" in query and scope["method"] == "GET":
                if _same(query["token"], token):
                    await self._set_cookie_and_redirect(scope, send, query)
                    return
                problem = (401, "wrong token in the address")
            elif not self._carries_token(scope, headers, token):
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
        if problem is None and self.max_body_bytes is not None:
            problem = _check_length(headers, self.max_body_bytes)
        if problem is not None:
            await _refuse(send, *problem)
            return
        if self.max_body_bytes is None or scope["method"] in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, _capped(receive, self.max_body_bytes), tracked)
        except BodyTooLargeError as exc:
            if started:
                raise
            await _refuse(send, 413, str(exc))

    def _cookie_name(self, scope: Scope) -> str:
        server = scope.get("server") or ("", 0)
        return f"agentcore_token_{server[1]}"

    def _carries_token(self, scope: Scope, headers: dict[str, str], token: str) -> bool:
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            return _same(auth[7:].strip(), token)
        name = self._cookie_name(scope)
        expected = _digest(token)
        for part in headers.get("cookie", "").split(";"):
            key, _, value = part.strip().partition("=")
            if key == name and value and _same(value, expected):
                return True
        return False

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
        # One leading slash: `//evil.example/` (or `/\\evil.example`) would be another site.
        path = "/" + (scope.get("root_path", "") + scope["path"]).lstrip("/\\")
        location = quote(path, safe="/:@!$&'()*+,;=-._~%") + ("?" + urlencode(rest) if rest else "")
        value = _digest(self.token or "")
        cookie = f"{self._cookie_name(scope)}={value}; Path=/; HttpOnly; SameSite=Strict"
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


def _same(given: str, expected: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _check_host(host: str, allowed: set[str]) -> tuple[int, str] | None:
    name = _host_name(host)
    if name in allowed:
        return None
    if _is_loopback_address(name) and any(_is_loopback_address(h) for h in allowed):
        return None  # 127.0.0.2 is as local as 127.0.0.1
    names = ", ".join(sorted(allowed))
    return (
        403,
        f"this server answers only requests addressed to {names} (got Host {host!r}); "
        "serve it with a token to reach it under other names",
    )


def _too_large(limit: int) -> tuple[int, str]:
    return 413, f"the request body is larger than this server accepts ({limit} bytes)"


def _check_length(headers: dict[str, str], limit: int) -> tuple[int, str] | None:
    length = headers.get("content-length")
    if length is None:
        return None
    if not (length.isascii() and length.isdigit() and len(length) <= 20):
        return 400, f"expected a number of bytes in Content-Length, got {length[:40]!r}"
    return _too_large(limit) if int(length) > limit else None


class BodyTooLargeError(Exception):
    """The body grew past the cap while being read (no Content-Length, or a wrong one)."""


def _capped(receive: Receive, limit: int) -> Receive:
    """`receive` that refuses a body growing past `limit` (413) instead of handing it on."""
    seen = 0

    async def capped() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLargeError(_too_large(limit)[1])
        return message

    return capped


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
