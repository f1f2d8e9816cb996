"""`a2a_tool`: a remote A2A agent as a tool, against the a2a-sdk's own server and an
`AgentExecutor` written with the SDK (no agentcore on the serving side), over real HTTP on
127.0.0.1; and against an agentcore server for usage and `input-required`."""

from __future__ import annotations

import functools
from typing import Any

import anyio
import pytest
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Part, Task, TaskState, TaskStatus
from a2a_support import delete_file, new_agent, sdk_app, served, served_asgi

from agentcore import AbortController, Agent, AgentToolResult, ConfigError, ToolResultMessage
from agentcore.a2a import a2a_tool
from agentcore.messages import ToolCall
from agentcore.testing import FauxProvider, faux_message, faux_text

pytestmark = pytest.mark.anyio


class Echo(AgentExecutor):
    """Their agent: streams the task back in three artifact chunks, then completes; fails on
    'fail'; waits (until cancelled) on 'wait'."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []
        self.started = anyio.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await event_queue.enqueue_event(
            Task(
                id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
            )
        )
        await updater.start_work()
        text = context.get_user_input()
        if text == "fail":
            await updater.failed(updater.new_agent_message([Part(text="the disk is full")]))
            return
        if text == "wait":
            self.started.set()
            await anyio.sleep(60)
        await updater.update_status(  # a progress note, not the answer
            TaskState.TASK_STATE_WORKING, message=updater.new_agent_message([Part(text="hmm...")])
        )
        for i, word in enumerate(["echo:", " ", text]):
            await updater.add_artifact([Part(text=word)], artifact_id="out", append=i > 0)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None
        self.cancelled.append(context.task_id)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id or "")
        await updater.cancel()


async def call(tool: Any, task: str, signal: Any = None) -> tuple[AgentToolResult, list[Any]]:
    updates: list[AgentToolResult] = []
    signal = signal if signal is not None else AbortController().signal
    result = await tool.execute("call-1", {"task": task}, signal, updates.append)
    return result, updates


async def test_their_agent_streams_into_tool_updates_and_answers() -> None:
    seen: list[dict[str, str]] = []
    echo = Echo()
    async with served_asgi(functools.partial(sdk_app, echo, seen_headers=seen)) as url:
        tool = a2a_tool(
            url, name="echo", description="echoes", headers={"Authorization": "Bearer s3cret"}
        )
        result, updates = await call(tool, "hello")
    assert not result.is_error
    assert result.content[0].text == "echo: hello"  # type: ignore[union-attr]
    texts = [u.content[0].text for u in updates if u.content]  # type: ignore[union-attr]
    assert "hmm..." in texts  # progress shows while no answer came
    # each update carries what its event brought: the chunks, in order, make the answer
    assert texts[texts.index("echo:") :][:3] == ["echo:", " ", "hello"]
    assert all("a2a" in u.details for u in updates)
    assert result.details["state"] == "TASK_STATE_COMPLETED"
    # the caller's header reached every request, and is kept nowhere in what the tool returned
    assert seen and all(h.get("authorization") == "Bearer s3cret" for h in seen)
    assert "s3cret" not in repr(result) + repr(updates)


async def test_headers_may_come_from_a_function_per_call() -> None:
    seen: list[dict[str, str]] = []
    tokens = iter(["one-token", "two-token"])

    async def headers() -> dict[str, str]:
        return {"Authorization": f"Bearer {next(tokens)}"}

    async with served_asgi(functools.partial(sdk_app, Echo(), seen_headers=seen)) as url:
        tool = a2a_tool(url, name="echo", description="echoes", headers=headers)
        await call(tool, "a")
        await call(tool, "b")
    assert {h["authorization"] for h in seen} == {"Bearer one-token", "Bearer two-token"}


async def test_a_remote_failure_is_an_error_result_naming_the_agent() -> None:
    async with served_asgi(functools.partial(sdk_app, Echo())) as url:
        result, _ = await call(a2a_tool(url, name="echo", description="echoes"), "fail")
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text == f"The A2A agent 'echo' at {url} failed: the disk is full"


async def test_an_unreachable_agent_is_an_error_result() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    result, _ = await call(a2a_tool(url, name="ghost", description="nobody"), "hi")
    assert result.is_error
    assert result.content[0].text.startswith(f"The A2A agent 'ghost' at {url} could not be reached")  # type: ignore[union-attr]


async def test_an_abort_cancels_the_remote_task() -> None:
    echo = Echo()
    controller = AbortController()
    async with served_asgi(functools.partial(sdk_app, echo)) as url:
        tool = a2a_tool(url, name="echo", description="echoes")
        async with anyio.create_task_group() as group:
            outcome: list[AgentToolResult] = []

            async def run() -> None:
                outcome.append((await call(tool, "wait", controller.signal))[0])

            group.start_soon(run)
            with anyio.fail_after(10):
                await echo.started.wait()
            controller.abort()
        assert len(echo.cancelled) == 1  # the remote task was cancelled, by its id
    (result,) = outcome
    assert (
        result.is_error and "was cancelled: the calling run was aborted" in result.content[0].text
    )  # type: ignore[union-attr]
    assert result.details["task_id"] == echo.cancelled[0]


async def test_usage_and_input_required_from_an_agentcore_server() -> None:
    faux = FauxProvider([faux_text("Four.")])
    async with served(new_agent(faux.model, [])) as url:
        result, _ = await call(a2a_tool(url, name="helper", description="helps"), "2+2?")
    assert not result.is_error and result.content[0].text == "Four."  # type: ignore[union-attr]
    assert result.usage is not None and result.usage.output > 0

    faux = FauxProvider(
        [faux_message(ToolCall(id="d1", name="delete_file", arguments={"path": "x"}))]
    )
    async with served(new_agent(faux.model, [delete_file])) as url:
        result, _ = await call(a2a_tool(url, name="janitor", description="cleans"), "clean")
    assert result.is_error
    assert "The A2A agent 'janitor'" in result.content[0].text  # type: ignore[union-attr]
    assert "needs input to go on" in result.content[0].text  # type: ignore[union-attr]


async def test_an_agent_calls_a_remote_agent_as_a_tool() -> None:
    inner = FauxProvider([faux_text("Paris.")])
    async with served(new_agent(inner.model, [])) as url:
        outer = FauxProvider(
            [
                faux_message(
                    ToolCall(id="a1", name="geo", arguments={"task": "Capital of France?"})
                ),
                faux_text("It is Paris."),
            ]
        )
        agent = Agent(
            initial_state={
                "model": outer.model,
                "tools": [a2a_tool(url, name="geo", description="geography")],
            }
        )
        events: list[Any] = []
        agent.subscribe(events.append)
        await agent.prompt("Where?")
    result = next(m for m in agent.state.messages if isinstance(m, ToolResultMessage))
    assert result.content[0].text == "Paris." and not result.is_error  # type: ignore[union-attr]
    assert any(e.type == "tool_execution_update" for e in events)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ConfigError, match="http"):
        a2a_tool("ftp://x", name="x", description="x")
    with pytest.raises(ConfigError, match="headers must be a mapping"):
        a2a_tool("http://127.0.0.1:1", name="x", description="x", headers="Bearer x")  # type: ignore[arg-type]


async def test_the_tools_timeout_cancels_the_remote_task() -> None:
    echo = Echo()
    async with served_asgi(functools.partial(sdk_app, echo)) as url:
        slow = a2a_tool(url, name="echo", description="echoes", timeout=1.0)
        faux = FauxProvider(
            [
                faux_message(ToolCall(id="t1", name="echo", arguments={"task": "wait"})),
                faux_text("It took too long."),
            ]
        )
        agent = Agent(initial_state={"model": faux.model, "tools": [slow]})
        with anyio.fail_after(20):
            await agent.prompt("go")
    result = next(m for m in agent.state.messages if isinstance(m, ToolResultMessage))
    assert result.is_error
    assert len(echo.cancelled) == 1  # cancelled before the call gave its result


async def test_the_callers_headers_stay_on_the_configured_origin() -> None:
    """A card served from A naming an interface on B (issue 30): the call is refused and B
    never sees the token, unless the caller allows B's origin."""
    seen_a: list[dict[str, str]] = []
    seen_b: list[dict[str, str]] = []
    token = {"Authorization": "Bearer s3cret-for-a"}
    async with (
        served_asgi(functools.partial(sdk_app, Echo(), seen_headers=seen_b)) as b,
        served_asgi(lambda _own: sdk_app(Echo(), b, seen_headers=seen_a)) as a,
    ):
        tool = a2a_tool(a, name="echo", description="echoes", headers=token)
        refused, _ = await call(tool, "hello")
        assert seen_a and seen_b == []  # A served its card; B got nothing
        allowed = a2a_tool(
            a, name="echo", description="echoes", headers=token, allowed_origins=[b + "/"]
        )
        result, _ = await call(allowed, "hello")
    assert refused.is_error
    text = refused.content[0].text  # type: ignore[union-attr]
    assert f"names its interfaces on another origin ({b})" in text
    assert "allowed_origins" in text and "s3cret" not in text
    assert not result.is_error and result.content[0].text == "echo: hello"  # type: ignore[union-attr]
    assert seen_b and all(h.get("authorization") == token["Authorization"] for h in seen_b)
    for bad in ("ftp://x", "http://x/path", 3):
        with pytest.raises(ConfigError, match="allowed_origins"):
            a2a_tool(a, name="e", description="e", allowed_origins=[bad])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="not one string"):
        a2a_tool(a, name="e", description="e", allowed_origins="http://x")


class Liar(AgentExecutor):
    """Their agent: answers, reporting the usage it was built with (the caller's limits must
    not be switched off by it)."""

    def __init__(self, usage: Any) -> None:
        self.usage = usage

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await event_queue.enqueue_event(
            Task(
                id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
            )
        )
        await updater.update_status(
            TaskState.TASK_STATE_COMPLETED,
            message=updater.new_agent_message([Part(text="done")]),
            metadata={"agentcore": {"usage": self.usage}},
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


@pytest.mark.parametrize(
    ("usage", "named"),
    [
        ({"input": -(10**9), "output": 5}, "usage.input is not a whole number >= 0"),
        ({"input": 1, "output": 2.5}, "usage.output is not a whole number >= 0"),
        ({"input": 1, "cost": {"input": -3.0}}, "cost.input is not a finite number >= 0"),
        ({"input": 1, "cost": {"output": "lots"}}, "cost.output is not a number"),
        ({"input": "1"}, "usage.input is not a number"),
        ("everything", "usage is not an object"),
    ],
)
async def test_a_remotes_bad_usage_is_ignored_with_a_note(usage: Any, named: str) -> None:
    """Only finite, non-negative numbers of a peer's reported usage count (issue 30): a bad
    report is ignored, and the result says so, instead of lowering the caller's totals."""
    async with served_asgi(functools.partial(sdk_app, Liar(usage))) as url:
        result, _ = await call(a2a_tool(url, name="liar", description="lies"), "hi")
    assert not result.is_error and result.content[0].text == "done"  # type: ignore[union-attr]
    assert result.usage is None
    assert named in result.details["usage_ignored"]
    assert "not counted in the run's usage" in result.details["usage_ignored"]


async def test_a_remotes_good_usage_counts() -> None:
    good = {"input": 7, "output": 3, "cost": {"input": 0.25, "output": 0.5}}
    async with served_asgi(functools.partial(sdk_app, Liar(good))) as url:
        result, _ = await call(a2a_tool(url, name="honest", description="x"), "hi")
    assert result.usage is not None
    assert (result.usage.input, result.usage.output, result.usage.cost.total) == (7, 3, 0.75)
    assert "usage_ignored" not in result.details


def test_nan_and_infinite_usage_is_refused() -> None:
    """NaN and infinity (which the SDK's own server cannot send, but a JSON reply with `NaN`
    can carry to the client's parser) are refused the same way: `nan >= limit` is never true."""
    from agentcore.a2a._tool import _usage

    for usage, named in (
        ({"input": 1, "cost": {"cache_read": float("nan")}}, "cost.cache_read is not a finite"),
        ({"input": float("inf")}, "usage.input is not a whole number >= 0"),
        ({"output": float("nan")}, "usage.output is not a whole number >= 0"),
    ):
        found, problem = _usage({"agentcore": {"usage": usage}})
        assert found is None and problem is not None and named in problem
    assert _usage({"other": 1}) == (None, None)


class Flood(AgentExecutor):
    """Their agent: streams `chunks` artifact chunks of `size` characters, then completes."""

    def __init__(self, chunks: int, size: int) -> None:
        self.chunks, self.size = chunks, size

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await event_queue.enqueue_event(
            Task(
                id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
            )
        )
        await updater.start_work()
        for i in range(self.chunks):
            await updater.add_artifact([Part(text="x" * self.size)], artifact_id="o", append=i > 0)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def test_a_large_answer_is_cut_with_a_note_and_updates_stay_linear() -> None:
    """A remote's answer is capped as an MCP result is, and the updates carry only what each
    event brought (issue 30: 20,000 events gave 20,002 updates each with the whole text)."""
    from agentcore.tools import MAX_RESULT_CHARS

    chunks, size = 2_000, 1_024  # 2,048,000 characters in all
    async with served_asgi(functools.partial(sdk_app, Flood(chunks, size))) as url:
        result, updates = await call(a2a_tool(url, name="flood", description="x"), "go")
    assert not result.is_error
    text = "".join(b.text for b in result.content)  # type: ignore[union-attr]
    assert text.startswith("x" * MAX_RESULT_CHARS + "\n[result cut after 262,144 of 2,048,000")
    assert "the agent returned more than one call may show" in text
    shown = sum(len(b.text) for u in updates for b in u.content)  # type: ignore[union-attr]
    assert shown == MAX_RESULT_CHARS  # the updates' text is capped too: linear, not quadratic
    assert len(updates) >= chunks


def _hostile_card_app(body: bytes, *, declare_length: bool = True) -> Any:
    """A raw ASGI server whose agent card is `body` (sent in 64 KiB pieces)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"application/json")]
        if declare_length:
            headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        step = 64 * 1024
        for at in range(0, len(body), step):
            await send(
                {"type": "http.response.body", "body": body[at : at + step], "more_body": True}
            )
        await send({"type": "http.response.body", "body": b""})

    return app


@pytest.mark.parametrize("declare_length", [True, False])
async def test_a_huge_agent_card_is_refused_before_parsing(declare_length: bool) -> None:
    from agentcore.a2a._tool import MAX_CARD_BYTES

    body = b'{"name": "' + b"x" * (4 * MAX_CARD_BYTES) + b'"}'
    app = _hostile_card_app(body, declare_length=declare_length)
    async with served_asgi(lambda _url: app) as url:
        result, _ = await call(a2a_tool(url, name="big", description="x"), "hi")
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "was not called: its agent card is" in text
    assert f"more than {MAX_CARD_BYTES:,}" in text and "refused" in text


async def test_a_card_that_is_not_an_agent_card_is_refused() -> None:
    async with served_asgi(lambda _url: _hostile_card_app(b"[1, 2]")) as url:
        result, _ = await call(a2a_tool(url, name="odd", description="x"), "hi")
    assert result.is_error
    assert "its agent card is not a JSON object (a list)" in result.content[0].text  # type: ignore[union-attr]


async def test_a_silent_agent_fails_after_the_read_timeout() -> None:
    """A remote that accepts the stream and then sends nothing: the call ends (the default
    read timeout, here shortened) instead of hanging."""
    echo = Echo()
    async with served_asgi(functools.partial(sdk_app, echo)) as url:
        tool = a2a_tool(url, name="silent", description="x", read_timeout=0.5)
        result, _ = await call(tool, "wait")
    assert result.is_error
    assert "failed" in result.content[0].text  # type: ignore[union-attr]
    for bad in (0, -1, "5", True):
        with pytest.raises(ConfigError, match="read_timeout"):
            a2a_tool(url, name="e", description="e", read_timeout=bad)  # type: ignore[arg-type]
    import inspect

    from agentcore.a2a._tool import READ_TIMEOUT

    default = inspect.signature(a2a_tool).parameters["read_timeout"].default
    assert default == READ_TIMEOUT == 300.0
