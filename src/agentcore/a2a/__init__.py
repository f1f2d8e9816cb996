"""A2A for agentcore: agentcore agents served to other agents, and remote agents as tools.

```python
from agentcore.a2a import a2a_tool, serve_a2a

await serve_a2a(agent, port=8000)                       # this agent, for other agents
helper = a2a_tool("http://127.0.0.1:8001", name="helper",
                  description="Answers questions about the build.")  # another, as a tool
```

- `a2a_app` builds an ASGI app serving an `Agent` or an `AgentLoopConfig` as an A2A agent (an
  agent card, JSON-RPC and HTTP+JSON, streaming over SSE, tasks, cancel, `input-required` for
  calls waiting for approval); `serve_a2a` runs one with uvicorn.
- `a2a_tool` wraps a remote A2A agent as an `AgentTool`.

Needs the `[a2a]` extra (`pip install 'agentcore-loop[a2a]'`: the official `a2a-sdk` with its
HTTP server parts). `import agentcore.a2a` works without it; its names raise
`MissingExtraError` naming the extra when used. See docs/a2a.md.
"""

from __future__ import annotations

import typing as _typing

from .._optional import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from ._server import a2a_app as a2a_app
    from ._server import serve_a2a as serve_a2a
    from ._tool import a2a_tool as a2a_tool

__all__ = ["a2a_app", "a2a_tool", "serve_a2a"]

_WHERE: dict[str, str] = {
    "a2a_app": "._server",
    "a2a_tool": "._tool",
    "serve_a2a": "._server",
}

__getattr__ = _lazy_exports(__name__, _WHERE, globals())
