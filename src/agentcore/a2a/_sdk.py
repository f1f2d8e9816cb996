"""The a2a-sdk, imported through `import_sdk` (the `[a2a]` extra) when first needed."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

from .._optional import import_sdk

__all__ = ["import_sdk_client", "import_sdk_server"]

_WHAT = "a2a-sdk (with its http-server extra)"


def _import(module: str) -> Any:
    return import_sdk(module, "a2a", needed_by="agentcore.a2a", what=_WHAT)


@functools.cache
def _common() -> dict[str, Any]:
    return {
        "a2a_types": _import("a2a.types.a2a_pb2"),
        "json_format": _import("google.protobuf.json_format"),
        "struct_pb2": _import("google.protobuf.struct_pb2"),
    }


@functools.cache
def import_sdk_server() -> Any:
    """The SDK's server parts (and Starlette, uvicorn) as one namespace."""
    execution = _import("a2a.server.agent_execution")
    tasks = _import("a2a.server.tasks")
    routes = _import("a2a.server.routes")
    handlers = _import("a2a.server.request_handlers")
    return SimpleNamespace(
        **_common(),
        AgentExecutor=execution.AgentExecutor,
        TaskUpdater=tasks.TaskUpdater,
        TaskStore=tasks.TaskStore,
        InMemoryTaskStore=tasks.InMemoryTaskStore,
        DefaultRequestHandler=handlers.DefaultRequestHandler,
        routes=routes,
        starlette=_import("starlette.applications"),
        uvicorn=_import("uvicorn"),
    )


@functools.cache
def import_sdk_client() -> Any:
    """The SDK's client parts (and httpx) as one namespace."""
    return SimpleNamespace(
        **_common(),
        client=_import("a2a.client"),
        httpx=_import("httpx"),
    )
