"""What the `agentcore` command does once its arguments are parsed (`agentcore.cli.main` parses
them first, so that `--version` and `--help` import none of this)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

import anyio

from ..builtin_tools import builtin_tools
from ..errors import MissingExtraError
from ..guardrails import Guardrail, max_input_size, pii_redactor
from ..limits import UsageLimits
from ..llm.registry import StreamFn
from ..messages import AgentMessage
from ..tools import AgentTool
from ._args import Parsed
from ._json import JsonLinesWriter
from ._mcp import mcp_sampling, mcp_servers
from ._output import AnswerWatch, output_spec
from ._render import CODE_TOOL, Renderer, Speakers, make_styler
from ._run import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_LIMIT,
    CommandError,
    GuardedOutput,
    Interrupts,
    Settings,
    limit_notice,
    outcome,
    resolve_model,
    run_prompt,
    write_error,
    write_notice,
)
from ._shell import shell_tool
from ._trace import Tracing, tracing
from ._traffic import recorded_traffic, reported_on_exit

if TYPE_CHECKING:
    from ._agents import Agents

__all__ = ["run_parsed"]


def _settings(parsed: Parsed, stream_fn: StreamFn | None) -> Settings:
    # a resumed chat uses its session's model unless --model is given: it is checked then
    resuming = parsed.continue_last or parsed.session is not None
    check = not resuming or "model" in parsed.given
    model = resolve_model(parsed.model, stream_fn=stream_fn, check=check)
    window = model.context_window or None  # read_file returns a share of it per call
    system, thinking, handoffs = parsed.system, parsed.thinking, {}
    try:
        if parsed.agents is not None:
            agents = _agents(parsed, stream_fn, window)
            model = agents.model or model
            system, tools, handoffs = agents.system_prompt, agents.tools, agents.options()
            thinking = agents.thinking or thinking
        else:
            tools = builtin_tools(parsed.root, context_window=window) if parsed.tools else []
            tools = _code_mode(tools) if parsed.code_mode else tools
            tools += [shell_tool(parsed.root)] if parsed.shell else []
    except NotADirectoryError as exc:
        raise CommandError(str(exc)) from None
    return Settings(
        model=model,
        system=system,
        thinking=thinking,
        tools=tools,
        handoffs=handoffs,
        max_tokens=parsed.max_tokens,
        temperature=parsed.temperature,
        stream_fn=stream_fn,
        max_turns=parsed.max_turns,
        usage_limits=_usage_limits(parsed),
        tool_timeout=parsed.tool_timeout,
        request_timeout=parsed.request_timeout,
        idle_timeout=parsed.idle_timeout,
        max_retries=parsed.max_retries,
        output_type=output_spec(parsed.output_schema) if parsed.output_schema else None,
        guardrails=_guardrails(parsed),
    )


_NOT_WITH_AGENTS = {
    "system": "--system (give each agent's system_prompt in the file)",
    "tools": "--tools (give each agent's tools in the file)",
    "code_mode": "--code-mode",
    "shell": "--shell",
    "mcp": "--mcp",
}


def _agents(parsed: Parsed, stream_fn: StreamFn | None, window: int | None) -> Agents:
    """`--agents FILE`: the agents, refusing the options that would give tools or a system
    prompt to one agent of several without saying which."""
    from ._agents import load_agents

    for name, option in _NOT_WITH_AGENTS.items():
        if getattr(parsed, name):
            raise CommandError(f"--agents cannot be combined with {option}")
    assert parsed.agents is not None
    return load_agents(
        parsed.agents,
        builtin=lambda: builtin_tools(parsed.root, context_window=window),
        model=lambda ref: resolve_model(ref, stream_fn=stream_fn),
    )


def _code_mode(tools: list[AgentTool]) -> list[AgentTool]:
    """`--code-mode`: the built-in tools as the functions of one `run_code` tool (the shell
    tool of `--shell` and the tools of `--mcp` servers stay ordinary tools beside it)."""
    if not tools:
        raise CommandError("--code-mode needs tools to offer to the code: add --tools")
    try:
        from ..codemode import code_mode
    except MissingExtraError as exc:
        raise CommandError(f"--code-mode: {exc}") from None
    return [code_mode(tools, name=CODE_TOOL)]


def _guardrails(parsed: Parsed) -> tuple[Guardrail, ...]:
    guards: list[Guardrail] = []
    if parsed.max_input_chars is not None:
        guards.append(max_input_size(parsed.max_input_chars))
    if parsed.redact_pii:
        guards.append(pii_redactor("input"))
    return tuple(guards)


def _usage_limits(parsed: Parsed) -> UsageLimits | None:
    given = (parsed.max_input_tokens, parsed.max_output_tokens, parsed.max_cost)
    if all(value is None for value in given):
        return None
    return UsageLimits(
        input_tokens=parsed.max_input_tokens,
        output_tokens=parsed.max_output_tokens,
        cost=parsed.max_cost,
    )


async def _run(
    parsed: Parsed,
    settings: Settings,
    stdin: TextIO,
    stdout: GuardedOutput,
    stderr: TextIO,
    trace: Tracing,
) -> int:
    prompt = parsed.prompt or ""
    if prompt == "-":
        prompt = await anyio.to_thread.run_sync(stdin.read, abandon_on_cancel=True)
    if not prompt.strip():
        raise CommandError("the prompt is empty")
    typed = settings.output_type is not None  # then stdout is for the value: text to stderr
    speakers = Speakers(settings.agent_name, str(settings.handoffs.get("next_agent", "last")))
    renderer = Renderer(stderr if typed else stdout, make_styler(stderr), speakers)
    sink = watch = AnswerWatch(JsonLinesWriter(stdout) if parsed.json else renderer)
    interrupts = Interrupts()
    added: list[AgentMessage] = []
    limit = None
    async with interrupts.installed():
        added, limit = await run_prompt(prompt, settings, sink, interrupts)
    if interrupts.quit_requested:
        return EXIT_INTERRUPTED
    if stdout.broken:
        return EXIT_BROKEN_PIPE
    renderer.finish()
    trace.after_answer(added)
    code, error = outcome(added, limit)
    if error is not None:
        if not reported_on_exit(error):  # a drift is listed once, on leaving the recording
            write_error(stderr, error)
    elif code == EXIT_INTERRUPTED:
        renderer.notice("(stopped)")
    elif code == EXIT_LIMIT and limit is not None:
        write_notice(stderr, limit_notice(limit))
    elif typed:
        return watch.finish(code, stdout, stderr, json_mode=parsed.json)
    return code


async def _main(
    parsed: Parsed,
    stream_fn: StreamFn | None,
    stdin: TextIO | None,
    stdout: GuardedOutput,
    stderr: TextIO,
) -> int:
    # each command's module is imported when that command runs: `run` loads no chat, server or
    # evaluation code
    if parsed.command == "models":
        from ._models import list_models

        return list_models(parsed.provider, json_mode=parsed.json, out=stdout)
    if parsed.command == "eval" and parsed.evaluation is not None:
        from ._eval import eval_command

        return await eval_command(
            parsed.evaluation,
            model_ref=parsed.model,
            model_given="model" in parsed.given,
            stream_fn=stream_fn,
            stdout=stdout.stream,
            stderr=stderr,
        )
    if parsed.command == "sessions":
        from ._sessions_cmd import sessions_command

        return sessions_command(
            parsed.action or "list",
            parsed.session_ids,
            parsed.sessions_dir,
            stdout,
            make_styler(stderr),
        )
    settings = _settings(parsed, stream_fn)
    if parsed.command in ("chat", "run", "serve"):
        from ._skills import cli_skills, problems_notice

        source = stdin or sys.stdin
        settings.skills = await cli_skills(
            parsed.skills,
            trust=parsed.trust_skills,
            interactive=parsed.command == "chat"
            and stdin is None
            and source.isatty()
            and not parsed.json,
            stdin=source,
            stderr=stderr,
        )
        for line in problems_notice(settings.skills):
            stderr.write(line + "\n")
    sampling = questions = None
    if parsed.mcp_sampling is not None:
        sampling, questions = mcp_sampling(
            parsed.mcp_sampling,
            settings,
            command=parsed.command,
            prompt=parsed.prompt,
            stdin=stdin or sys.stdin,
            stderr=stderr,
            stream_fn=stream_fn,
        )
    async with mcp_servers(parsed.mcp, settings, stderr, sampling=sampling):
        with tracing(stderr, trace=parsed.trace) as trace:
            if parsed.command == "serve" and parsed.a2a:
                from ._serve_a2a import serve_a2a_command

                return await serve_a2a_command(
                    settings,
                    host=parsed.host,
                    port=parsed.port,
                    token=parsed.token,
                    no_token=parsed.no_token,
                    sessions_dir=parsed.sessions_dir,
                    store_url=parsed.store,
                    name=parsed.a2a_name,
                    header_timeout=parsed.header_timeout,
                    max_connections=parsed.max_connections,
                    stdout=stdout,
                    stderr=stderr,
                )
            if parsed.command == "serve":
                from ._serve import serve_command

                return await serve_command(
                    settings,
                    host=parsed.host,
                    port=parsed.port,
                    token=parsed.token,
                    no_token=parsed.no_token,
                    header_timeout=parsed.header_timeout,
                    max_connections=parsed.max_connections,
                    sessions_dir=parsed.sessions_dir,
                    store_url=parsed.store,
                    stdout=stdout,
                    stderr=stderr,
                )
            if parsed.command == "chat":
                from ._chat import chat
                from ._conversation import SessionOptions

                return await chat(
                    settings,
                    json_mode=parsed.json,
                    stdin=stdin,
                    stdout=stdout,
                    stderr=stderr,
                    trace=trace,
                    questions=questions,
                    sessions=SessionOptions(
                        directory=parsed.sessions_dir,
                        continue_last=parsed.continue_last,
                        session=parsed.session,
                        given=parsed.given | ({"system"} if parsed.agents else set()),
                    ),
                )
            return await _run(parsed, settings, stdin or sys.stdin, stdout, stderr, trace)


def run_parsed(
    parsed: Parsed,
    *,
    stream_fn: StreamFn | None,
    stdin: TextIO | None,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Run the command `parsed` (see `agentcore.cli.main`); returns the exit code."""
    out = GuardedOutput(stdout)
    err = stderr
    try:
        with recorded_traffic(parsed):
            code = anyio.run(_main, parsed, stream_fn, stdin, out, err)
    except CommandError as exc:
        write_error(err, str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        out.broken = True
        code = EXIT_BROKEN_PIPE
    if out.broken:
        # The reader went away (`agentcore run ... | head`): not an error worth reporting.
        out.silence()
        return EXIT_BROKEN_PIPE
    return code
