"""The web chat's settings of the network guard every server shares (`agentcore.netguard.Guard`,
see its docstring and docs/security.md):

- With a token, every request must carry it: `Authorization: Bearer <token>`, or the cookie the
  server sets when the page is opened as `/?token=<token>` (the page then reloads without it in
  the address bar; a browser's `EventSource` cannot set headers). Any Host name is served then
  (`agentcore serve --host 0.0.0.0` is reached under the machine's names): the token protects.
- Without a token (`agentcore serve --no-token`), only requests whose `Host` is in
  `allowed_hosts` are served (loopback names; every loopback address counts).
- Always: an `Origin` other than the request's own is refused (the page is served by the same
  server), state-changing requests must be JSON, and bodies are capped. Refusals are
  `{"error": "..."}`; a refused Host is 403.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..netguard import Guard

__all__ = ["ChatGuard"]


class ChatGuard(Guard):
    """The network guard as the web chat uses it (see the module docstring)."""

    def __init__(
        self,
        app: Any,
        *,
        token: str | None,
        allowed_hosts: Sequence[str] | None,
        max_body_bytes: int | None = None,
    ) -> None:
        super().__init__(
            app,
            token=token,
            allowed_hosts=allowed_hosts if token is None else None,
            max_body_bytes=max_body_bytes,
            browser_login=True,
            host_status=403,
        )
