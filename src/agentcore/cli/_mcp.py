"""`--mcp SERVER`: the tools of MCP servers in a chat or a run.

SERVER is an `http://` or `https://` URL (a streamable-HTTP server) or a command line (a stdio
server, split as a shell would: `--mcp "python -m mcp_server_time"`; a command `python` or
`python3` is the interpreter running agentcore, so a server installed beside it is found from a
virtual environment that is not activated). The option may be given
several times. The servers are connected before the first prompt and closed when the command
ends; a server that cannot be reached is a configuration error (exit code 2). Their tools join
the built-in ones under the servers' own names (a name offered twice is an error), and a
server's announced change of its tools is picked up between the turns of a run. Sampling is
off unless `--mcp-sampling` allows it (`_mcp_sampling`).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TextIO

from ..errors import MissingExtraError
from ..llm import Model
from ..tools import AgentTool
from ._mcp_args import SamplingOptions
from ._mcp_sampling import SamplingQuestions
from ._run import CommandError, Settings, resolve_model

__all__ = ["check_tool_names", "mcp_client", "mcp_sampling", "mcp_servers"]

_PYTHON = ("python", "python3")
"""Commands that mean the current interpreter (the docs' `--mcp "python -m ..."`)."""


def mcp_client(spec: str, *, errlog: TextIO | None = None, sampling: Any = None) -> Any:
    """The `MCPClient` (not yet connected) for one `--mcp` value (`sampling`: the `MCPSampling`
    of `--mcp-sampling`, else None: sampling is off).

    Raises:
        CommandError: an empty or unparsable value, or the MCP SDK is not installed.
    """
    try:
        from ..mcp import MCPClient
    except MissingExtraError as exc:
        raise CommandError(f"--mcp needs the MCP SDK: {exc}") from None
    text = spec.strip()
    if text.lower().startswith(("http://", "https://")):
        return MCPClient.http(text, elicitation="approvals", sampling=sampling)
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise CommandError(f"--mcp {spec!r}: cannot split the command line ({exc})") from None
    if not argv:
        raise CommandError("--mcp needs a command line or an http(s) URL, got an empty value")
    command = sys.executable if argv[0] in _PYTHON and sys.executable else argv[0]
    # a server's questions for the user wait as approvals do: shown and answered in the terminal
    return MCPClient.stdio(
        command, argv[1:], errlog=errlog, elicitation="approvals", sampling=sampling
    )


def check_tool_names(offered: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Refuse a tool name offered by two sources (`(source, tool names)` pairs).

    Raises:
        CommandError: naming the tool and both sources.
    """
    seen: dict[str, str] = {}
    for source, names in offered:
        for name in names:
            if name in seen:
                raise CommandError(
                    f"the tool {name!r} is offered by both {seen[name]} and {source}; "
                    "a run cannot have two tools of one name"
                )
            seen[name] = source


def _fileno_or_none(stream: TextIO) -> TextIO | None:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return stream


@asynccontextmanager
async def mcp_servers(
    specs: Sequence[str], settings: Settings, stderr: TextIO, *, sampling: Any = None
) -> AsyncIterator[None]:
    """Connect the `--mcp` servers, add their tools to `settings` (and the hook that refreshes
    them between turns) for the block, and close them after it. `sampling`: the `MCPSampling`
    of `--mcp-sampling` (shared by every server: its caps hold per tool call)."""
    if not specs:
        yield
        return
    errlog = _fileno_or_none(stderr)
    clients = [mcp_client(spec, errlog=errlog, sampling=sampling) for spec in specs]
    from ..mcp import MCPConnectionError, refresh_tools

    async with AsyncExitStack() as stack:
        for client in clients:
            try:
                await stack.enter_async_context(client)
            except MCPConnectionError as exc:
                raise CommandError(str(exc)) from None
        offered = [("the built-in tools", [t.name for t in settings.tools])]
        offered += [(f"MCP server {c.name!r}", [t.name for t in c.tools]) for c in clients]
        check_tool_names(offered)
        tools: list[AgentTool] = [t for c in clients for t in c.tools]
        settings.tools = [*settings.tools, *tools]
        settings.prepare_next_turn = refresh_tools(*clients)
        yield


def mcp_sampling(
    options: SamplingOptions,
    settings: Settings,
    *,
    command: str,
    prompt: str | None,
    stdin: TextIO,
    stderr: TextIO,
    stream_fn: Any = None,
) -> tuple[Any, SamplingQuestions | None]:
    """The `MCPSampling` of `--mcp-sampling`, and the questions object when it asks.

    Raises:
        CommandError: the sampling model is unknown or unusable, or asking is impossible here
            (`run -`, `serve`).
    """
    try:
        from ..mcp import MCPSampling
    except MissingExtraError as exc:
        raise CommandError(f"--mcp-sampling needs the MCP SDK: {exc}") from None

    model: Model = (
        resolve_model(options.model, stream_fn=stream_fn) if options.model else settings.model
    )
    questions = None
    if options.ask:
        if command == "serve":
            raise CommandError(
                "--mcp-sampling asks at the terminal before each request, and serve has none "
                "to ask at: add --mcp-sampling-approve yes (the caps still hold)"
            )
        if command == "run" and prompt == "-":
            raise CommandError(
                "--mcp-sampling asks before each request and reads the answer from stdin, "
                "which holds the prompt (run -): give the prompt as an argument, or add "
                "--mcp-sampling-approve yes"
            )
        questions = SamplingQuestions(stdin, stderr, f"{model.provider}/{model.id}")
    sampling = MCPSampling(
        model=model,
        max_tokens=options.max_tokens,
        max_cost=options.max_cost,
        max_requests=options.max_requests,
        approve=questions.approve if questions is not None else None,
    )
    return sampling, questions
