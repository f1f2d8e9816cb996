"""Shared parts of the A2A tests: an agentcore agent served on 127.0.0.1 (port 0), the SDK's own
client, and a few scripted agents."""

from __future__ import annotations

import functools
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
from a2a.client import ClientConfig, create_client
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, StreamResponse
from google.protobuf.json_format import MessageToDict

from agentcore import AbortSignal, Agent, tool
from agentcore.a2a import serve_a2a

TOKEN = "a2a-test-token-0123456789"


@tool
def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


@tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
async def wait_forever(signal: AbortSignal) -> str:
    """Wait until the run is aborted."""
    await signal.wait()
    return "stopped waiting"


@asynccontextmanager
async def served(agent: Any, **options: Any) -> AsyncIterator[str]:
    """`serve_a2a(agent)` on a free port of 127.0.0.1; yields its URL."""
    async with anyio.create_task_group() as group:
        url = await group.start(functools.partial(serve_a2a, agent, port=0, **options))
        try:
            yield url
        finally:
            group.cancel_scope.cancel()


@asynccontextmanager
async def sdk_client(
    url: str, binding: str = "JSONRPC", headers: dict[str, str] | None = None
) -> AsyncIterator[Any]:
    """The a2a-sdk's own client for the agent at `url`, preferring `binding`."""
    async with httpx.AsyncClient(headers=headers or {}, timeout=30) as http:
        config = ClientConfig(
            streaming=True, httpx_client=http, supported_protocol_bindings=[binding]
        )
        client = await create_client(url, config)
        try:
            yield client
        finally:
            await client.close()


def user_message(
    text: str = "", *, task_id: str = "", context_id: str = "", data: Any = None
) -> SendMessageRequest:
    """A `SendMessageRequest` with a text part (and a data part)."""
    parts = [Part(text=text)] if text else []
    if data is not None:
        from google.protobuf.json_format import ParseDict
        from google.protobuf.struct_pb2 import Value

        parts.append(Part(data=ParseDict(data, Value())))
    return SendMessageRequest(
        message=Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            task_id=task_id,
            context_id=context_id,
            parts=parts,
        )
    )


async def collect(stream: AsyncIterator[StreamResponse]) -> list[dict[str, Any]]:
    """Every event of a stream, as JSON."""
    return [MessageToDict(event) async for event in stream]


def states(events: list[dict[str, Any]]) -> list[str]:
    """The task states the events report, in order."""
    out = []
    for event in events:
        if "task" in event:
            out.append(event["task"]["status"]["state"])
        elif "statusUpdate" in event:
            out.append(event["statusUpdate"]["status"]["state"])
    return out


def answer_text(events: list[dict[str, Any]]) -> str:
    """The text of the streamed `answer-*` artifacts, concatenated per artifact (last one)."""
    texts: dict[str, str] = {}
    for event in events:
        update = event.get("artifactUpdate")
        if update:
            key = update["artifact"]["artifactId"]
            chunk = "".join(p.get("text", "") for p in update["artifact"].get("parts", []))
            texts[key] = (texts.get(key, "") if update.get("append") else "") + chunk
    return list(texts.values())[-1] if texts else ""


def new_agent(model: Any, tools: list[Any], **options: Any) -> Agent:
    """An Agent template to serve."""
    return Agent(
        initial_state={"model": model, "tools": tools, "system_prompt": "You help.\nBe brief."},
        **options,
    )


@asynccontextmanager
async def served_asgi(make_app: Any) -> AsyncIterator[str]:
    """The ASGI app `make_app(base_url)` with uvicorn on a free port of 127.0.0.1; yields the
    base URL."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    port = sock.getsockname()[1]
    app = make_app(f"http://127.0.0.1:{port}")
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    config.load()
    server.lifespan = config.lifespan_class(config)
    await server.startup(sockets=[sock])
    async with anyio.create_task_group() as group:
        group.start_soon(server.main_loop)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
    await server.shutdown(sockets=[sock])
    sock.close()


def sdk_app(executor: Any, url: str, seen_headers: list[dict[str, str]] | None = None) -> Any:
    """The a2a-sdk's own server (JSON-RPC, its agent card) around one of its `AgentExecutor`s;
    `seen_headers` collects each request's headers."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
    from starlette.applications import Starlette

    card = AgentCard(
        name="their agent",
        description="An agent written with the a2a-sdk.",
        version="1",
        supported_interfaces=[
            AgentInterface(url=url + "/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echoes", tags=["echo"])],
    )
    handler = DefaultRequestHandler(executor, InMemoryTaskStore(), card)
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and seen_headers is not None:
            seen_headers.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await app(scope, receive, send)

    return recording
