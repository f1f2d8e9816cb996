"""A web chat for agentcore: an ASGI app streaming each session's events as AG-UI over SSE.

```python
from agentcore.llm import get_model
from agentcore.sessions import JsonlSessionStore
from agentcore.web import create_app

app = create_app(JsonlSessionStore("chats"), model=get_model("openai", "gpt-4o-mini"))
# uvicorn module:app, or `agentcore serve` for the ready-made server
```

- `create_app` builds the app (Starlette): the chat page, a JSON API, and per session an
  AG-UI event stream that reconnecting clients resume with `Last-Event-ID`.
- `AgUiTranslator` turns agentcore events into AG-UI events, for your own endpoints.
- `serve` runs an app with uvicorn (`agentcore.netguard.serve`, the server every agentcore
  server shares).

Needs the `[web]` extra (`pip install 'agentcore-loop[web]'`): Starlette, uvicorn and
`ag-ui-protocol`. `import agentcore.web` works without it; its names raise `MissingExtraError`
naming the extra. See docs/web.md.
"""

from __future__ import annotations

import typing as _typing

from .._optional import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from ..netguard import LOOPBACK_HOSTS as LOOPBACK_HOSTS
    from ..netguard import serve as serve
    from ._app import create_app as create_app
    from ._translate import AgUiTranslator as AgUiTranslator

__all__ = ["LOOPBACK_HOSTS", "AgUiTranslator", "create_app", "serve"]

_WHERE: dict[str, str] = {
    "AgUiTranslator": "._translate",
    "LOOPBACK_HOSTS": "..netguard",
    "create_app": "._app",
    "serve": "..netguard",
}

__getattr__ = _lazy_exports(__name__, _WHERE, globals())
