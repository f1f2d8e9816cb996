"""The a2a-sdk, imported through `import_sdk` (the `[a2a]` extra) when first needed."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

from .._optional import import_sdk

__all__ = ["import_sdk_client", "import_sdk_server"]

_BY = "agentcore.a2a"
_WHAT = "a2a-sdk (with its http-server extra)"


@functools.cache
def _common() -> dict[str, Any]:
    return {
        "a2a_types": import_sdk("a2a.types.a2a_pb2", "a2a", needed_by=_BY, what=_WHAT),
        "json_format": import_sdk("google.protobuf.json_format", "a2a", needed_by=_BY),
        "struct_pb2": import_sdk("google.protobuf.struct_pb2", "a2a", needed_by=_BY),
    }


@functools.cache
def import_sdk_server() -> Any:
    """The SDK's server parts (and Starlette, uvicorn) as one namespace."""
    execution = import_sdk("a2a.server.agent_execution", "a2a", needed_by=_BY, what=_WHAT)
    tasks = import_sdk("a2a.server.tasks", "a2a", needed_by=_BY, what=_WHAT)
    routes = import_sdk("a2a.server.routes", "a2a", needed_by=_BY, what=_WHAT)
    handlers = import_sdk("a2a.server.request_handlers", "a2a", needed_by=_BY, what=_WHAT)
    return SimpleNamespace(
        **_common(),
        AgentExecutor=execution.AgentExecutor,
        TaskUpdater=tasks.TaskUpdater,
        TaskStore=tasks.TaskStore,
        InMemoryTaskStore=tasks.InMemoryTaskStore,
        DefaultRequestHandler=handlers.DefaultRequestHandler,
        routes=routes,
        starlette=import_sdk("starlette.applications", "a2a", needed_by=_BY, what=_WHAT),
        uvicorn=import_sdk("uvicorn", "a2a", needed_by=_BY),
    )


@functools.cache
def import_sdk_client() -> Any:
    """The SDK's client parts (and httpx) as one namespace."""
    return SimpleNamespace(
        **_common(),
        client=import_sdk("a2a.client", "a2a", needed_by=_BY, what=_WHAT),
        card_resolver=import_sdk("a2a.client.card_resolver", "a2a", needed_by=_BY, what=_WHAT),
        httpx=import_sdk("httpx", "a2a", needed_by=_BY),
    )
