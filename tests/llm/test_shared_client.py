"""The SDK-backed adapters share one HTTP client per event loop (`agentcore.llm._pool`):
successive requests reuse their connection; every loop, thread and aborted answer keeps its own
contract; the loop's clients are closed when it ends."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from typing import Any

import anyio
import pytest

from agentcore.abort import AbortController
from agentcore.llm import Context, Model, StreamOptions
from agentcore.llm.providers import anthropic, openai_completions, openai_responses
from agentcore.messages import UserMessage

from .helpers import collect, collect_aborting
from .replay_server import ReplayServer, ScriptedResponse, load_fixture

pytestmark = pytest.mark.anyio

ADAPTERS: dict[str, Any] = {
    "openai-completions": openai_completions,
    "openai-responses": openai_responses,
    "anthropic-messages": anthropic,
}


def model(api: str, server: ReplayServer) -> Model:
    return Model(
        id="m",
        api=api,
        provider="anthropic" if api == "anthropic-messages" else "openai",
        base_url=server.url if api == "anthropic-messages" else server.base_url(),
        max_tokens=1024,
    )


def text(api: str, **kwargs: Any) -> ScriptedResponse:
    return ScriptedResponse.sse(load_fixture(api, "text"), **kwargs)


async def ask(api: str, server: ReplayServer, options: StreamOptions | None = None) -> Any:
    stream = ADAPTERS[api].stream(
        model(api, server),
        Context(messages=[UserMessage(content="Hi")]),
        options or StreamOptions(api_key="k"),
    )
    return await collect(stream)


def wait_closed(server: ReplayServer) -> int:
    """The server's open connections once the client's close reached it (5 s at most)."""
    deadline = time.monotonic() + 5
    while server.open_connections and time.monotonic() < deadline:
        time.sleep(0.01)
    return server.open_connections


async def test_successive_requests_reuse_one_connection(replay_server: ReplayServer) -> None:
    api = "openai-completions"  # ended by `[DONE]`, whose body is read to its end
    replay_server.enqueue(text(api), text(api), text(api))
    for _ in range(3):
        _, message = await ask(api, replay_server)
        assert message.stop_reason == "stop", message.error_message
    assert len(replay_server.requests) == 3
    assert replay_server.connections == 1


@pytest.mark.parametrize("api", ["openai-responses", "anthropic-messages"])
async def test_an_answer_ended_by_its_own_event_is_not_drained(
    api: str, replay_server: ReplayServer
) -> None:
    # `done` must not wait on the network: the body after `response.completed`/`message_stop`
    # is not read, so the connection is closed and each request has its own (on the same client)
    replay_server.enqueue(text(api), text(api))
    for _ in range(2):
        _, message = await ask(api, replay_server)
        assert message.stop_reason == "stop", message.error_message
    assert len(replay_server.requests) == 2
    assert replay_server.connections == 2


@pytest.mark.parametrize("api", list(ADAPTERS))
async def test_an_aborted_answer_leaves_the_next_request_whole(
    api: str, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(text(api, delay=0.05), text(api))
    controller = AbortController()
    stream = ADAPTERS[api].stream(
        model(api, replay_server),
        Context(messages=[UserMessage(content="Hi")]),
        StreamOptions(api_key="k", signal=controller.signal),
    )
    _, aborted = await collect_aborting(stream, controller)
    assert aborted.stop_reason == "aborted"
    _, message = await ask(api, replay_server)
    assert message.stop_reason == "stop", message.error_message
    assert [block.type for block in message.content] == ["text"]
    assert len(replay_server.requests) == 2


def test_the_loops_clients_are_closed_when_it_ends() -> None:
    with ReplayServer() as server:
        server.enqueue(*(text(api) for api in ADAPTERS), text("openai-completions"))
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)

            async def main() -> None:
                for api in [*ADAPTERS, "openai-completions"]:
                    _, message = await ask(api, server)
                    assert message.stop_reason == "stop", message.error_message
                # the last answer's connection is kept by the loop's openai client
                assert server.open_connections >= 1

            asyncio.run(main())
        assert wait_closed(server) == 0


def test_each_loop_and_thread_has_its_own_client() -> None:
    api = "openai-completions"
    with ReplayServer() as server:
        server.enqueue(*(text(api) for _ in range(6)))
        failures: list[BaseException] = []

        def run_twice() -> None:
            async def main() -> None:
                for _ in range(2):
                    _, message = await ask(api, server)
                    assert message.stop_reason == "stop", message.error_message

            try:
                anyio.run(main)
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=run_twice) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        run_twice()  # and a loop after them in this thread
        assert not failures, failures
        assert len(server.requests) == 6
        assert server.connections == 3  # one per loop, each reused for its second request
        assert wait_closed(server) == 0
