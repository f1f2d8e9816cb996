"""The command line: `agentcore chat|run|models|sessions` and the options they share.

Parsing never calls `sys.exit` and never touches the process's own streams: help and errors are
written to the streams `main` was given, and the outcome comes back as a `Parsed` or an exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from dataclasses import dataclass
from typing import TextIO

from .. import __version__
from ..limits import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_TURNS,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_TOOL_TIMEOUT,
)
from ..llm.types import THINKING_LEVELS, ThinkingLevel
from ._arg_types import OFF, amount_or_off
from ._eval_args import EvalOptions, add_eval_command, eval_options
from ._mcp_args import SamplingOptions, add_sampling_arguments, sampling_options
from ._serve_args import add_serve_arguments
from ._sessions_args import add_session_options, add_sessions_command, sessions_fields

__all__ = ["DEFAULT_MODEL", "Parsed", "parse_args", "split_model_ref"]

DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"
"""The model used when neither `--model` nor `AGENTCORE_MODEL` names one."""


_DESCRIPTION = """\
Run LLM agents from a terminal: chat interactively, run one prompt, or list the models.
Output is rendered for a terminal, or written as JSON Lines events with --json."""

_EPILOG = """\
examples:
  agentcore chat
  agentcore run "Summarise README.md" --tools
  echo "What is 2**32?" | agentcore run - --tools --json
  agentcore models anthropic
  agentcore eval examples/evals/arithmetic.yaml --agent examples/eval_agent.py:make_agent

The model is --model, else $AGENTCORE_MODEL, else local/qwen2.5-coder-1.5b
(start it with scripts/local-model start). API keys come from the provider's usual
environment variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, ...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Parsed:
    """The parsed command line."""

    command: str
    model: str = DEFAULT_MODEL
    system: str = ""
    thinking: ThinkingLevel = "off"
    tools: bool = False
    code_mode: bool = False  # --code-mode: the built-in tools callable from one run_code tool
    agents: str | None = None  # --agents FILE: the agents of a run with handoffs
    root: str = "."
    json: bool = False
    max_tokens: int | None = None
    temperature: float | None = None
    prompt: str | None = None
    provider: str | None = None
    max_turns: int | None = DEFAULT_MAX_TURNS
    max_cost: float | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT
    max_retries: int = 3
    max_input_chars: int | None = None  # the max_input_size guardrail
    redact_pii: bool = False  # the pii_redactor guardrail on the input
    trace: bool = False
    mcp: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    trust_skills: bool = False
    mcp_sampling: SamplingOptions | None = None  # --mcp-sampling and its caps
    output_schema: str | None = None
    shell: bool = False
    given: frozenset[str] = frozenset()  # of model, system, thinking: given on the command line
    continue_last: bool = False  # chat --continue
    session: str | None = None  # chat --session ID
    sessions_dir: str | None = None  # chat/sessions --sessions-dir DIR
    store: str | None = None  # serve --store URL
    action: str | None = None  # sessions list|show|rm
    session_ids: tuple[str, ...] = ()  # sessions show|rm ID...
    host: str = "127.0.0.1"  # serve
    port: int = 8765
    token: str | None = None
    no_token: bool = False
    header_timeout: float = 60.0
    max_connections: int = 1000
    a2a: bool = False  # serve --a2a
    a2a_name: str | None = None
    record: str | None = None  # chat/run --record FILE
    replay: str | None = None  # chat/run --replay FILE
    evaluation: EvalOptions | None = None  # eval DATASET ...


def split_model_ref(ref: str) -> tuple[str, str]:
    """`"provider/id"` as `(provider, id)`; the id may itself contain slashes.

    Raises:
        ValueError: `ref` has no provider part or no id part.
    """
    provider, sep, model_id = ref.partition("/")
    if not sep or not provider or not model_id:
        raise ValueError(f"expected a model as provider/id (e.g. {DEFAULT_MODEL}), got {ref!r}")
    return provider, model_id


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _count_or_off(text: str) -> int | None:
    if text.strip().lower() in OFF:
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer, or 0 or none for no limit, got {text!r}"
        )
    return value


def _retries(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or a positive integer, got {text!r}")
    return value


def _shown(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"


def _add_bounds(common: argparse.ArgumentParser) -> None:
    bounds = common.add_argument_group(
        "bounds of a run",
        "0 or none turns a bound off (--max-retries 0: no retries); see docs/limits.md",
    )
    bounds.add_argument(
        "--max-turns",
        type=_count_or_off,
        default=DEFAULT_MAX_TURNS,
        metavar="N",
        help=f"end a run after its Nth turn (model answer) (default: {DEFAULT_MAX_TURNS})",
    )
    bounds.add_argument(
        "--max-cost",
        type=amount_or_off,
        metavar="USD",
        help="end a run after the turn that brings its cost to USD or more (default: none)",
    )
    bounds.add_argument(
        "--max-input-tokens",
        type=_count_or_off,
        metavar="N",
        help="end a run after the turn that brings its prompt tokens, cached ones included, "
        "to N (default: none)",
    )
    bounds.add_argument(
        "--max-output-tokens",
        type=_count_or_off,
        metavar="N",
        help="end a run after the turn that brings its output tokens to N (default: none)",
    )
    bounds.add_argument(
        "--tool-timeout",
        type=amount_or_off,
        default=DEFAULT_TOOL_TIMEOUT,
        metavar="S",
        help="seconds a tool call may run before it gets an error result "
        f"(default: {_shown(DEFAULT_TOOL_TIMEOUT)})",
    )
    bounds.add_argument(
        "--request-timeout",
        type=amount_or_off,
        default=DEFAULT_REQUEST_TIMEOUT,
        metavar="S",
        help="seconds from sending a request to its first event "
        f"(default: {_shown(DEFAULT_REQUEST_TIMEOUT)})",
    )
    bounds.add_argument(
        "--idle-timeout",
        type=amount_or_off,
        default=DEFAULT_IDLE_TIMEOUT,
        metavar="S",
        help="the longest silence in seconds while an answer streams "
        f"(default: {_shown(DEFAULT_IDLE_TIMEOUT)})",
    )
    bounds.add_argument(
        "--max-retries",
        type=_retries,
        default=3,
        metavar="N",
        help="retries of a request that failed before its first event (default: 3)",
    )


def _add_guardrails(common: argparse.ArgumentParser) -> None:
    guards = common.add_argument_group(
        "guardrails", "built-in checks of every run; a tripped one ends it (see docs/guardrails.md)"
    )
    guards.add_argument(
        "--max-input-chars",
        type=_count_or_off,
        metavar="N",
        help="refuse a prompt of more than N characters (default: none)",
    )
    guards.add_argument(
        "--redact-pii",
        action="store_true",
        help="redact email addresses, phone and card numbers from the messages the model is sent",
    )


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value <= 2.0:
        raise argparse.ArgumentTypeError(f"expected a temperature between 0 and 2, got {text!r}")
    return value


def _add_recording(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("recorded model traffic (see docs/recording.md)")
    either = group.add_mutually_exclusive_group()
    either.add_argument(
        "--record",
        metavar="FILE",
        help="record the model traffic to FILE (written anew; keys and secret headers never are)",
    )
    either.add_argument(
        "--replay",
        metavar="FILE",
        help="answer every model request from FILE: no server, no API key; a request that "
        "differs from the recording is an error that names the difference",
    )


def _build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("model and run options")
    group.add_argument(
        "-m",
        "--model",
        metavar="PROVIDER/ID",
        help=f"the model (default: $AGENTCORE_MODEL, else {DEFAULT_MODEL})",
    )
    group.add_argument("-s", "--system", metavar="TEXT", help="the system prompt")
    group.add_argument(
        "--thinking",
        choices=THINKING_LEVELS,
        help="how much the model should reason before answering (default: off)",
    )
    group.add_argument(
        "--tools",
        action="store_true",
        help="enable the built-in tools: read_file, list_files, calculator",
    )
    group.add_argument(
        "--code-mode",
        action="store_true",
        help="with --tools: offer the built-in tools as Python functions of one run_code tool, "
        "which runs the model's code in a sandbox (the codemode extra; docs/code-mode.md)",
    )
    group.add_argument(
        "--agents",
        metavar="FILE",
        help="the agents of a run with handoffs, from a TOML or JSON file (read as data: "
        "names, descriptions, system prompts, models, built-in tools, handoffs and which "
        "agent starts; see docs/cli.md)",
    )
    group.add_argument(
        "--root",
        default=".",
        metavar="DIR",
        help="the directory the file tools may read (default: the current directory)",
    )
    group.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="SERVER",
        help="add the tools of an MCP server: a command line (stdio) or an http(s) URL; "
        "repeatable (see docs/mcp.md)",
    )
    group.add_argument(
        "--skills",
        action="append",
        default=[],
        metavar="DIR",
        help="load the Agent Skills of DIR (a folder of skill folders, or one skill); repeatable "
        "(default: ~/.agents/skills and ./.agents/skills; see docs/skills.md)",
    )
    group.add_argument(
        "--trust-skills",
        action="store_true",
        help="load the skills of the working directory's .agents/skills without asking",
    )
    group.add_argument(
        "--json", action="store_true", help="write the run's events as JSON Lines on stdout"
    )
    group.add_argument(
        "--max-tokens", type=_positive_int, metavar="N", help="the output limit per answer"
    )
    group.add_argument("--temperature", type=_temperature, metavar="T", help="sampling temperature")
    group.add_argument(
        "--trace",
        action="store_true",
        help="print each run's span tree and total usage on stderr, or export the spans over "
        "OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (needs agentcore-loop[otlp])",
    )
    _add_bounds(common)
    _add_guardrails(common)
    add_sampling_arguments(common)

    parser = argparse.ArgumentParser(
        prog="agentcore",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"agentcore {__version__} (Python {sys.version.split()[0]})",
        help="print the version and exit",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    chat = commands.add_parser(
        "chat",
        parents=[common],
        help="chat interactively (/exit, /reset, /model PROVIDER/ID, /help)",
        description="Chat with a model. Ctrl-C stops the current answer, Ctrl-D or /exit quits. "
        "Every chat is saved as a session (see 'agentcore sessions').",
    )
    chat.add_argument(
        "--shell",
        action="store_true",
        help="add a shell tool: runs a command in --root once you /approve it (docs/approvals.md)",
    )
    add_session_options(chat)
    _add_recording(chat)
    run = commands.add_parser(
        "run",
        parents=[common],
        help="answer one prompt and exit",
        description="Answer one prompt (a '-' reads it from stdin) and exit: 0 on success, "
        "1 when the run failed, 2 for a usage or configuration error, 3 when a bound "
        "(--max-turns, --max-cost, --max-*-tokens) ended the run.",
    )
    run.add_argument("prompt", help="the prompt, or - to read it from stdin")
    run.add_argument(
        "--output-schema",
        metavar="FILE",
        help="a JSON Schema file: the answer must be JSON that validates against it; only the "
        "validated value is printed on stdout (see docs/typed-outputs.md)",
    )
    _add_recording(run)
    serve = commands.add_parser(
        "serve",
        parents=[common],
        help="serve the web chat on http://127.0.0.1:8765/ (see docs/web.md)",
        description="Serve the web chat page and its AG-UI event streams. Every request must "
        "carry a token (--token, else one is generated and printed with the address to open); "
        "--no-token serves loopback without one.",
    )
    add_serve_arguments(serve)
    models = commands.add_parser(
        "models", help="list the model catalogue", description="List the model catalogue."
    )
    models.add_argument("provider", nargs="?", help="only this provider's models")
    models.add_argument("--json", action="store_true", help="one JSON object per model")
    add_sessions_command(commands)
    add_eval_command(commands, _add_recording)
    return parser


def parse_args(argv: list[str], stdout: TextIO, stderr: TextIO) -> Parsed | int:
    """Parse `argv`; returns the exit code instead when argparse is done (help, usage error)."""
    parser = _build_parser()
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            ns = parser.parse_args(argv)
            if ns.command is None:
                parser.print_help(sys.stderr)
                return 2
            sampling = sampling_options(ns, parser) if hasattr(ns, "mcp") else None
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    if ns.command == "models":
        return Parsed(command="models", provider=ns.provider, json=ns.json)
    if ns.command == "sessions":
        return Parsed(command="sessions", **sessions_fields(ns))
    if ns.command == "eval":
        return Parsed(
            command="eval",
            model=ns.model or os.environ.get("AGENTCORE_MODEL") or DEFAULT_MODEL,
            given=frozenset({"model"}) if ns.model else frozenset(),
            record=ns.record,
            replay=ns.replay,
            evaluation=eval_options(ns),
        )
    given = frozenset(n for n in ("model", "system", "thinking") if getattr(ns, n) is not None)
    return Parsed(
        command=ns.command,
        model=ns.model or os.environ.get("AGENTCORE_MODEL") or DEFAULT_MODEL,
        system=ns.system or "",
        thinking=ns.thinking or "off",
        tools=ns.tools,
        code_mode=ns.code_mode,
        agents=ns.agents,
        root=ns.root,
        json=ns.json,
        max_tokens=ns.max_tokens,
        temperature=ns.temperature,
        prompt=getattr(ns, "prompt", None),
        max_turns=ns.max_turns,
        max_cost=ns.max_cost,
        max_input_tokens=ns.max_input_tokens,
        max_output_tokens=ns.max_output_tokens,
        tool_timeout=ns.tool_timeout,
        request_timeout=ns.request_timeout,
        idle_timeout=ns.idle_timeout,
        max_retries=ns.max_retries,
        max_input_chars=ns.max_input_chars,
        redact_pii=ns.redact_pii,
        trace=ns.trace,
        mcp=tuple(ns.mcp),
        skills=tuple(ns.skills),
        trust_skills=ns.trust_skills,
        mcp_sampling=sampling,
        output_schema=getattr(ns, "output_schema", None),
        shell=getattr(ns, "shell", False),
        given=given,
        continue_last=getattr(ns, "continue_last", False),
        session=getattr(ns, "session", None),
        sessions_dir=getattr(ns, "sessions_dir", None),
        store=getattr(ns, "store", None),
        host=getattr(ns, "host", "127.0.0.1"),
        port=getattr(ns, "port", 8765),
        token=getattr(ns, "token", None) or os.environ.get("AGENTCORE_TOKEN") or None,
        no_token=getattr(ns, "no_token", False),
        header_timeout=getattr(ns, "header_timeout", 60.0),
        max_connections=getattr(ns, "max_connections", 1000),
        a2a=getattr(ns, "a2a", False),
        a2a_name=getattr(ns, "a2a_name", None),
        record=getattr(ns, "record", None),
        replay=getattr(ns, "replay", None),
    )
