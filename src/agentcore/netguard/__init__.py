"""Who may talk to an agentcore server, and how it is served: one guard for every surface.

`agentcore.web` (the chat), `agentcore.mcp`'s `serve_http` and `agentcore.a2a` put the same
ASGI middleware, `Guard`, in front of their apps and run them with the same hardened uvicorn
server, `serve` (see docs/security.md). The guard is plain ASGI: it needs neither Starlette nor
uvicorn, so the MCP and A2A servers do not pull in the web chat's dependencies.

What `Guard` checks, in this order, before the app sees a request:

1. **Host** (`allowed_hosts`): the `Host` header must name an allowed host (a name, `name:port`
   or `name:*`; IPv6 as `[::1]:8000`). When a loopback name is allowed, every loopback address
   is (127.0.0.0/8, `::1`): a page on another site cannot reach the server by pointing its own
   domain at 127.0.0.1 (DNS rebinding). Names are compared exactly (`localhost.` is not
   `localhost`). `None` serves any Host (a token protects the server).
2. **Origin**: a request with an `Origin` header must come from the same origin as its `Host`
   (scheme http or https, same name and port), or from a host of `allowed_origins`; `null`
   and any other Origin are refused with 403 (cross-site requests).
3. **Token**: with a `token`, every request must carry `Authorization: Bearer <token>`
   (compared in constant time), else 401 with a `WWW-Authenticate: Bearer` challenge. With
   `browser_login`, opening `/?token=<token>` sets an `HttpOnly`, `SameSite=Strict` cookie that
   holds a digest of the token (a browser's `EventSource` cannot send headers), and redirects
   to the same path on this server without the token.
4. **JSON only** (`json_types`): a request other than GET, HEAD, OPTIONS that has a body must
   say `Content-Type: application/json` (or another of `json_types`), which a cross-site form
   cannot send without a CORS preflight (415). A request without a body (no `Content-Length`
   or `0`, not chunked: a POST that only names an action, such as A2A's `:subscribe` or the
   web chat's `/abort`) may omit the type; one that names a type must name a JSON one (a form
   always does, so an empty form is still 415).
5. **Body cap** (`max_body_bytes`): a `Content-Length` that is not a number is 400, one past the
   cap 413; a body without one (chunked) is read up to the cap before the app sees it and
   refused with 413 when it grows past it. What the guard holds is bounded by the cap.

Refusals are JSON: `{"error": "..."}`, or with `errors="json-rpc"` a JSON-RPC error with id
`null` (what MCP and A2A clients show).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import string
from collections.abc import Awaitable, Callable, Collection, MutableMapping, Sequence
from typing import Any, Literal
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from ..errors import ConfigError
from ._server import listen, serve

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "LOOPBACK_HOSTS",
    "Guard",
    "bound_hosts",
    "check_bearer_token",
    "is_loopback",
    "listen",
    "serve",
]

LOOPBACK_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
"""The names of this machine a loopback server answers to (every loopback address counts)."""

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""The largest request body `Guard` accepts by default (4 MiB)."""

_WILDCARD = frozenset({"", "0.0.0.0", "::"})
_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "-._~+/=")
_MIN_TOKEN = 16
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
_ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]
_Entry = tuple[str, int | None]


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only: `localhost`, 127.0.0.0/8 or `::1` (`[::1]` too)."""
    host = host.strip().lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]")).is_loopback
    except ValueError:
        return False


def _split_host(value: str, *, entry: bool = False) -> _Entry | None:
    """(name, port) of a Host header, an Origin's host or (`entry`) an allowed-host entry:
    `name`, `name:port`, `[v6]:port`, a bare IPv6 address, and for an entry `name:*` (any
    port: None); None when it cannot be read."""
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
        name = value  # a name, or a bare IPv6 address
    if not name or any(c in name for c in "/@\\ \t"):
        return None
    if port is None or (entry and port == "*"):
        return name, None
    if not (port.isascii() and port.isdigit() and len(port) <= 5):
        return None
    return name, int(port)


def _parse_entries(entries: Sequence[str], what: str) -> list[_Entry]:
    if isinstance(entries, str):
        raise ConfigError(f"{what} is a list of host names, got the string {entries!r}")
    parsed: list[_Entry] = []
    for entry in entries:
        one = _split_host(entry, entry=True) if isinstance(entry, str) else None
        if one is None:
            raise ConfigError(
                f"{what} entries are host names or addresses, optionally with ':port' or ':*', "
                f"got {entry!r}"
            )
        parsed.append(one)
    return parsed


def bound_hosts(host: str, extra: Sequence[str] | None = None) -> list[str] | None:
    """The `allowed_hosts` of a server bound to `host`: the address itself (for a loopback
    address also `LOOPBACK_HOSTS`) and `extra`; None (any Host) for a wildcard address
    (`0.0.0.0`, `::`) without `extra`, where the token is the protection.

    Raises:
        ConfigError: an `extra` entry that is not a host name or address (with `:port`).
    """
    _parse_entries(extra or (), "allowed_hosts")
    extras = list(extra or ())
    if host in _WILDCARD:
        return extras or None
    names = [host, *extras]
    if is_loopback(host):
        names.extend(LOOPBACK_HOSTS)
    return names


def check_bearer_token(token: str | None) -> str | None:
    """`token` when it is fit for `Authorization: Bearer`: at least 16 characters of letters,
    digits or `-._~+/=` (e.g. `secrets.token_urlsafe(32)`); None stays None.

    Raises:
        ConfigError: a token too short or with other characters.
    """
    if token is None:
        return None
    if not isinstance(token, str) or len(token) < _MIN_TOKEN or not set(token) <= _TOKEN_CHARS:
        raise ConfigError(
            f"token must be at least {_MIN_TOKEN} characters of letters, digits or '-._~+/=' "
            "(what an 'Authorization: Bearer' header carries), e.g. secrets.token_urlsafe(32); "
            f"got {'an empty string' if token == '' else 'another value'}"
        )
    return token


def _same(given: bytes, expected: bytes) -> bool:
    return bool(given) and hmac.compare_digest(given, expected)


def _digest(token: str) -> str:
    """What the login cookie holds: a digest of the token (hex: any token fits in a cookie)."""
    return hashlib.sha256(b"agentcore-web-cookie\0" + token.encode("utf-8")).hexdigest()


def _matches(entry: _Entry, name: str, port: int | None) -> bool:
    return entry[0] == name and (entry[1] is None or entry[1] == port)


class Guard:
    """The ASGI middleware that checks who may talk to the app (see the module docstring).

    ```python
    app = Guard(my_asgi_app, token=secrets.token_urlsafe(32), allowed_hosts=bound_hosts(host))
    ```

    Args:
        app: the ASGI app behind it (lifespan and other non-HTTP scopes pass through).
        token: the token every request must carry (`Authorization: Bearer <token>`); None:
            none (then keep `allowed_hosts` to loopback names).
        allowed_hosts: the names the `Host` header may carry (`name`, `name:port`, `name:*`);
            None: any (a wildcard address behind a token).
        allowed_origins: hosts of other sites whose pages may call the server (an `Origin`
            other than the request's own); same forms as `allowed_hosts`.
        max_body_bytes: the largest request body; None: no cap.
        json_types: the content types a state-changing request may have; None: any.
        browser_login: also accept the token as the cookie that opening `/?token=<token>` sets.
        host_status: the status of a refused Host (421 Misdirected Request; the web chat 403).
        realm: the `realm` of the `WWW-Authenticate` challenge.
        name: how refusals call the server ("this MCP server").
        errors: the shape of a refusal's JSON body: `{"error": text}` or a JSON-RPC error.

    Raises:
        ConfigError: an empty token, a malformed host entry or a cap below 1.
    """

    def __init__(
        self,
        app: _ASGIApp,
        *,
        token: str | None = None,
        allowed_hosts: Sequence[str] | None = LOOPBACK_HOSTS,
        allowed_origins: Sequence[str] = (),
        max_body_bytes: int | None = DEFAULT_MAX_BODY_BYTES,
        json_types: Collection[str] | None = ("application/json",),
        browser_login: bool = False,
        host_status: int = 421,
        realm: str = "agentcore",
        name: str = "this server",
        errors: Literal["json", "json-rpc"] = "json",
    ) -> None:
        if token is not None and (not isinstance(token, str) or not token.strip()):
            raise ConfigError("the token is empty: give a real one, or None for no token")
        if max_body_bytes is not None and (
            not isinstance(max_body_bytes, int) or max_body_bytes < 1
        ):
            raise ConfigError(f"max_body_bytes must be an int >= 1 or None, got {max_body_bytes!r}")
        if errors not in ("json", "json-rpc"):
            raise ConfigError(f"errors must be 'json' or 'json-rpc', got {errors!r}")
        self.app = app
        self._token = None if token is None else token.encode("utf-8")
        self._cookie = None if token is None or not browser_login else _digest(token)
        self._hosts = (
            None if allowed_hosts is None else _parse_entries(allowed_hosts, "allowed_hosts")
        )
        self._origins = _parse_entries(allowed_origins, "allowed_origins")
        self._names = ", ".join(sorted({h for h in allowed_hosts or ()}))
        self._max = max_body_bytes
        self._json = None if json_types is None else frozenset(t.lower() for t in json_types)
        self._host_status = host_status
        self._realm = realm
        self._name = name
        self._errors = errors

    # -- the checks -----------------------------------------------------------------------

    def _host_allowed(self, host: str) -> bool:
        if self._hosts is None:
            return True
        parsed = _split_host(host) if host else None
        if parsed is None:
            return False
        name, port = parsed
        if any(_matches(entry, name, port) for entry in self._hosts):
            return True
        # 127.0.0.2 is as local as 127.0.0.1 (a loopback IP address; `localhost` is listed)
        return (
            name != "localhost"
            and is_loopback(name)
            and any(is_loopback(n) and (p is None or p == port) for n, p in self._hosts)
        )

    def _origin_problem(self, origin: str, host: str) -> str | None:
        try:
            parts = urlsplit(origin.strip())
        except ValueError:  # "http://[::1"
            parts = urlsplit("")
        default = {"http": 80, "https": 443}.get(parts.scheme.lower())
        source = _split_host(parts.netloc) if default and parts.netloc else None
        if source is not None and not (parts.path or parts.query or parts.fragment):
            name, port = source[0], default if source[1] is None else source[1]
            target = _split_host(host) if host else None
            if target is not None and target[0] == name and (target[1] or default) == port:
                return None  # the same origin as the request's own
            if any(_matches(entry, name, port) for entry in self._origins):
                return None
        return (
            f"Invalid Origin header: cross-origin request refused (Origin {origin[:200]!r}, "
            f"Host {host[:200]!r})"
        )

    def _token_problem(self, scope: _Scope, headers: dict[str, str], token: bytes) -> str | None:
        given = headers.get("authorization", "")
        scheme, _, credential = given.partition(" ")
        if scheme.lower() == "bearer":
            if _same(credential.strip().encode("latin-1"), token):
                return None
        elif self._cookie is not None:  # (another scheme may be a proxy's in front of us)
            cookie = f"agentcore_token_{(scope.get('server') or ('', 0))[1]}"
            for part in headers.get("cookie", "").split(";"):
                key, _, value = part.strip().partition("=")
                if key == cookie and _same(value.encode("latin-1"), self._cookie.encode()):
                    return None
        hint = ""
        if self._cookie is not None:
            hint = "; or open the address with ?token=<token> (as `agentcore serve` prints it)"
        return (
            f"Unauthorized: {self._name} needs 'Authorization: Bearer <token>' with its token"
            + (" (the one sent is wrong)" if given else "")
            + hint
        )

    def _body_problem(self, method: str, headers: dict[str, str]) -> tuple[int, str] | None:
        length = headers.get("content-length")
        has_body = length not in (None, "0") or "transfer-encoding" in headers
        if self._json is not None and method not in _SAFE:
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind not in self._json and (has_body or kind):
                return (
                    415,
                    f"expected a JSON body (Content-Type: application/json), got {kind[:100]!r}",
                )
        if length is not None and not (length.isascii() and length.isdigit() and len(length) <= 20):
            return 400, f"expected a number of bytes in Content-Length, got {length[:40]!r}"
        if self._max is not None and length is not None and int(length) > self._max:
            return 413, self._too_large()
        return None

    def _too_large(self) -> str:
        return f"the request body is larger than {self._name} accepts ({self._max} bytes)"

    # -- the middleware ---------------------------------------------------------------------

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[str, str] = {}
        for key, value in scope.get("headers", ()):
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        host = headers.get("host", "")
        method = scope["method"]
        if not self._host_allowed(host):
            names = f" ({self._names})" if self._names else ""
            text = (
                f"Invalid Host header: {self._name} answers only requests addressed to its own "
                f"names{names}, got Host {host[:200]!r}"
            )
            await self._refuse(send, self._host_status, text)
            return
        origin = headers.get("origin")
        if origin is not None and (problem := self._origin_problem(origin, host)) is not None:
            await self._refuse(send, 403, problem)
            return
        if self._token is not None:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            if self._cookie is not None and "token" in query and method == "GET":
                if _same(query["token"].encode("utf-8"), self._token):
                    await self._log_in(scope, send, query)
                else:
                    challenge = f'Bearer realm="{self._realm}", error="invalid_token"'
                    await self._refuse(
                        send,
                        401,
                        "Unauthorized: wrong token in the address",
                        [(b"www-authenticate", challenge.encode())],
                    )
                return
            problem = self._token_problem(scope, headers, self._token)
            if problem is not None:
                challenge = f'Bearer realm="{self._realm}"'
                if headers.get("authorization"):
                    challenge += ', error="invalid_token", error_description="wrong token"'
                await self._refuse(send, 401, problem, [(b"www-authenticate", challenge.encode())])
                return
        checked = self._body_problem(method, headers)
        if checked is not None:
            await self._refuse(send, *checked)
            return
        length = headers.get("content-length")
        bodiless = length in (None, "0") and "transfer-encoding" not in headers
        if self._max is None or (method in ("GET", "HEAD") and bodiless):
            await self.app(scope, receive, send)
            return
        # A body is read here, up to the cap, before the app sees it: an app (or an SDK) may turn
        # an error while it reads into an answer of its own, so a cap checked as the app reads
        # could be lost. What is held is bounded by `max_body_bytes`.
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            if len(body) > self._max:
                await self._refuse(send, 413, self._too_large())
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> _Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()  # after the body: the disconnect, when it comes

        await self.app(scope, replay, send)

    async def _log_in(self, scope: _Scope, send: _Send, query: dict[str, str]) -> None:
        """303 to the same path without the token, setting the login cookie."""
        rest = {k: v for k, v in query.items() if k != "token"}
        # One leading slash: `//evil.example/` (or `/\\evil.example`) would be another site.
        path = "/" + (scope.get("root_path", "") + scope["path"]).lstrip("/\\")
        location = quote(path, safe="/:@!$&'()*+,;=-._~%") + ("?" + urlencode(rest) if rest else "")
        port = (scope.get("server") or ("", 0))[1]
        cookie = f"agentcore_token_{port}={self._cookie}; Path=/; HttpOnly; SameSite=Strict"
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

    async def _refuse(
        self, send: _Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        if self._errors == "json-rpc":  # id null: the request was not read
            payload: Any = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32001, "message": text},
            }
        else:
            payload = {"error": text}
        body = json.dumps(payload).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *(extra or []),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
