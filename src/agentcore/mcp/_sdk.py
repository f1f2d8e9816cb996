"""The MCP SDK, imported when `agentcore.mcp` first needs it.

`import agentcore.mcp` and `agent_tool` work without the `[mcp]` extra; the other names import
their module, which imports the SDK from here: through `import_sdk`, so that a missing SDK is a
`MissingExtraError` naming the extra instead of a bare `ModuleNotFoundError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._optional import import_sdk

__all__ = ["httpx2", "import_sdk", "mcp", "types"]


if TYPE_CHECKING:
    import httpx2
    import mcp
    import mcp.client.streamable_http
    import mcp.server.lowlevel
    import mcp.server.stdio
    import mcp.server.transport_security
    import mcp.types as types
    import mcp.types.version
else:
    mcp = import_sdk("mcp", "mcp", needed_by="agentcore.mcp")
    import_sdk("mcp.client.streamable_http", "mcp", needed_by="agentcore.mcp")
    import_sdk("mcp.server.lowlevel", "mcp", needed_by="agentcore.mcp")
    import_sdk("mcp.server.stdio", "mcp", needed_by="agentcore.mcp")
    import_sdk("mcp.server.transport_security", "mcp", needed_by="agentcore.mcp")
    types = import_sdk("mcp.types", "mcp", needed_by="agentcore.mcp")
    import_sdk("mcp.types.version", "mcp", needed_by="agentcore.mcp")
    httpx2 = import_sdk("httpx2", "mcp", needed_by="agentcore.mcp")
