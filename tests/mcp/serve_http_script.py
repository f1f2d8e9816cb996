"""`serve_http` of the test tools on 127.0.0.1, a free port, as a subprocess: prints its URL,
then serves until terminated.

Usage: python serve_http_script.py HEADER_TIMEOUT MAX_CONNECTIONS
"""

from __future__ import annotations

import functools
import sys

import anyio
from served_tools import TOOLS  # the script's directory is on sys.path

from agentcore.mcp import serve_http


async def main(header_timeout: float, max_connections: int) -> None:
    async with anyio.create_task_group() as group:
        url = await group.start(
            functools.partial(
                serve_http,
                TOOLS,
                port=0,
                header_timeout=header_timeout,
                max_connections=max_connections,
            )
        )
        print(url, flush=True)


if __name__ == "__main__":
    anyio.run(main, float(sys.argv[1]), int(sys.argv[2]))
