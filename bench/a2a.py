"""A2A: what calling a sub-agent over A2A costs per call, against calling it in-process.

The same faux sub-agent (one answer, no tools, no model latency) is called three ways, each
`SEQUENTIAL_CALLS` times, one after another:

- direct: `agentcore.agent_tool` around its `AgentLoopConfig` (the sub-agent runs in-process);
- `a2a_tool`: the sub-agent served by `serve_a2a` on 127.0.0.1 in this process, called through
  `a2a_tool` (streaming, a new HTTP client per call: headers are never kept);
- the SDK's own client (one `Client`, kept open) sending the same message, to tell the SDK's round
  trip from what `a2a_tool` adds.

    .venv/bin/python bench/a2a.py
"""

from __future__ import annotations

import os
import sys

# This file has the name of the A2A SDK's package: keep its folder off the import path, or
# `import a2a` would import this script.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import functools  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402
from typing import Any  # noqa: E402

import anyio  # noqa: E402

from agentcore import AbortController, AgentLoopConfig  # noqa: E402
from agentcore.testing import FauxProvider, faux_text  # noqa: E402

SEQUENTIAL_CALLS = 200


async def per_call(call: Callable[[], Awaitable[Any]], n: int) -> float:
    """Median µs per call over 5 rounds of `n // 5` sequential calls."""
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n // 5):
            await call()
        rounds.append((time.perf_counter() - t0) / (n // 5) * 1e6)
    return statistics.median(rounds)


_PROVIDERS: list[FauxProvider] = []  # the faux registry holds providers weakly


def sub_agent() -> AgentLoopConfig:
    faux = FauxProvider([faux_text("The answer is 42.")] * (SEQUENTIAL_CALLS * 3))
    _PROVIDERS.append(faux)
    return AgentLoopConfig(model=faux.model)


async def main() -> None:
    import httpx
    from a2a.client import ClientConfig, create_client
    from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

    from agentcore import agent_tool
    from agentcore.a2a import a2a_tool, serve_a2a

    signal = AbortController().signal
    direct = agent_tool(sub_agent(), name="sub", description="answers")

    async def call_direct() -> None:
        result = await direct.execute("c", {"task": "question"}, signal, lambda _u: None)
        assert not result.is_error, result.content

    async with anyio.create_task_group() as group:
        url = await group.start(functools.partial(serve_a2a, sub_agent(), port=0))
        remote = a2a_tool(url, name="sub", description="answers")

        async def call_a2a() -> None:
            result = await remote.execute("c", {"task": "question"}, signal, lambda _u: None)
            assert not result.is_error, result.content

        async with httpx.AsyncClient(timeout=30) as http:
            client = await create_client(url, ClientConfig(streaming=True, httpx_client=http))

            async def call_sdk() -> None:
                request = SendMessageRequest(
                    message=Message(
                        role=Role.ROLE_USER,
                        message_id=str(uuid.uuid4()),
                        parts=[Part(text="question")],
                    )
                )
                async for _event in client.send_message(request):
                    pass

            for warm in (call_direct, call_a2a, call_sdk):
                await warm()
            direct_us = await per_call(call_direct, SEQUENTIAL_CALLS)
            a2a_us = await per_call(call_a2a, SEQUENTIAL_CALLS)
            sdk_us = await per_call(call_sdk, SEQUENTIAL_CALLS)
            await client.close()
        group.cancel_scope.cancel()

    print(f"calls: {SEQUENTIAL_CALLS} sequential, median of 5 rounds")
    print(f"direct agent_tool:          {direct_us:9.0f} µs per call")
    print(f"a2a_tool (serve_a2a):       {a2a_us:9.0f} µs per call  ratio {a2a_us / direct_us:.1f}x")
    print(f"SDK client, same server:    {sdk_us:9.0f} µs per call  ratio {sdk_us / direct_us:.1f}x")
    print(f"a2a_tool over the SDK's client: {a2a_us / sdk_us:.2f}x")


if __name__ == "__main__":
    anyio.run(main)
