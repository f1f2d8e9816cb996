"""The MCP SDK, imported when `agentcore.mcp` first needs it.

`import agentcore.mcp` and `agent_tool` work without the `[mcp]` extra; the other names import
their module, which imports the SDK from here: through `import_sdk`, so that a missing SDK is a
`MissingExtraError` naming the extra instead of a bare `ModuleNotFoundError`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from .. import MissingExtraError

__all__ = ["httpx2", "import_sdk", "mcp", "types"]


def import_sdk(module: str, extra: str) -> ModuleType:
    """Import `module`, which the `extra` extra installs.

    Raises:
        MissingExtraError: it is not installed; the message says `pip install 'agentcore[extra]'`.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"agentcore.mcp needs the {module.split('.')[0]!r} package, which is not installed: "
            f"pip install 'agentcore[{extra}]'"
        ) from exc


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
    mcp = import_sdk("mcp", "mcp")
    import_sdk("mcp.client.streamable_http", "mcp")
    import_sdk("mcp.server.lowlevel", "mcp")
    import_sdk("mcp.server.stdio", "mcp")
    import_sdk("mcp.server.transport_security", "mcp")
    types = import_sdk("mcp.types", "mcp")
    import_sdk("mcp.types.version", "mcp")
    httpx2 = import_sdk("httpx2", "mcp")
