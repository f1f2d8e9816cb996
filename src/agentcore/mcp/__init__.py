"""MCP for agentcore: tools from any MCP server, agentcore tools served over MCP, agents as tools.

```python
from agentcore.mcp import MCPClient

async with MCPClient.stdio("python", ["-m", "mcp_server_time"]) as time_server:
    context = AgentContext(tools=time_server.tools)
```

- `MCPClient` connects to one server, over stdio (`MCPClient.stdio`) or streamable HTTP
  (`MCPClient.http`), and turns its tools into `MCPTool`s, ordinary `AgentTool`s.
  `refresh_tools` is a `prepare_next_turn` hook that swaps in a server's new tool list
  between turns after the server announced a change. A client may let its server sample a
  model (`MCPSampling`; off by default), ask the user for input (`MCPElicitation`, answered
  with an `MCPElicitationAnswer`), and know its roots (`roots=[...]`).
- `tools_server`, `serve_stdio` and `serve_http` serve any list of `AgentTool`s over MCP.
- `agent_tool` moved to `agentcore.agent_tool` (it needs no MCP); `agentcore.mcp.agent_tool`
  still gives it, with a `DeprecationWarning`.

Everything here needs the official MCP SDK: `pip install 'agentcore-loop[mcp]'`. This package
imports it lazily: the names raise `MissingExtraError` naming the extra when the SDK is missing.
"""

from __future__ import annotations

import typing as _typing

from .._optional import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from ._client import MCPClient as MCPClient
    from ._client import MCPConnectionError as MCPConnectionError
    from ._elicitation import MCPElicitation as MCPElicitation
    from ._elicitation import MCPElicitationAnswer as MCPElicitationAnswer
    from ._refresh import refresh_tools as refresh_tools
    from ._sampling import MCPSampling as MCPSampling
    from ._sampling import MCPSamplingRequest as MCPSamplingRequest
    from ._server import serve_http as serve_http
    from ._server import serve_stdio as serve_stdio
    from ._server import tools_server as tools_server
    from ._tools import MCPProgress as MCPProgress
    from ._tools import MCPTool as MCPTool

__all__ = [
    "MCPClient",
    "MCPConnectionError",
    "MCPElicitation",
    "MCPElicitationAnswer",
    "MCPProgress",
    "MCPSampling",
    "MCPSamplingRequest",
    "MCPTool",
    "refresh_tools",
    "serve_http",
    "serve_stdio",
    "tools_server",
]

# name -> the module that defines it (each imports the SDK, through `_sdk`)
_WHERE: dict[str, str] = {
    "MCPClient": "._client",
    "MCPConnectionError": "._client",
    "MCPElicitation": "._elicitation",
    "MCPElicitationAnswer": "._elicitation",
    "MCPSampling": "._sampling",
    "MCPSamplingRequest": "._sampling",
    "MCPProgress": "._tools",
    "MCPTool": "._tools",
    "refresh_tools": "._refresh",
    "serve_http": "._server",
    "serve_stdio": "._server",
    "tools_server": "._server",
}

_lazy = _lazy_exports(__name__, _WHERE, globals())


def __getattr__(name: str) -> _typing.Any:
    if name == "agent_tool":  # moved to the core (issue 34): the old name still works
        import warnings

        warnings.warn(
            "agentcore.mcp.agent_tool moved to agentcore.agent_tool (it needs no MCP); "
            "import it from agentcore",
            DeprecationWarning,
            stacklevel=2,
        )
        from agentcore import agent_tool

        return agent_tool
    return _lazy(name)
