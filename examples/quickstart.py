"""agentcore quick start: an agent with three real tools, streamed to the terminal as it runs.

    scripts/demo                                  # starts the local model, then runs this
    python examples/quickstart.py                 # the local model must already be running
    python examples/quickstart.py "Which files are in the examples directory?"

The model is `AGENTCORE_MODEL` ("provider/model-id", e.g. `anthropic/claude-haiku-4-5`, with that
provider's API key in the environment), else the built-in local model served by
`scripts/local-model` (Qwen2.5-Coder-1.5B on llama.cpp, no API key, no internet). With
`AGENTCORE_BASE_URL` also set, "provider/model-id" names a model on any OpenAI-compatible server at
that URL (Ollama, vLLM, LM Studio, ...): `AGENTCORE_BASE_URL=http://localhost:11434/v1
AGENTCORE_MODEL=ollama/llama3.2`.

The agent reads files of this repository (`read_file`, `list_files`) and does arithmetic
(`calculator`, which parses the expression with `ast` instead of calling `eval`): the ready-made
tools of `agentcore.builtin_tools`. Everything the run does arrives as events: text as it streams,
each tool call with its arguments as the model writes them, and each tool result.

By default it asks how many lines `LICENSE` has, then, as a follow-up message in the same run
(`get_follow_up_messages`), to multiply that number by 7 with the calculator: the small local
model answers after one tool result rather than chaining a second tool on its own. (A short file:
the small model's context holds a few thousand tokens, and a file that fills it is read again and
again, the first reading no longer in view.)
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx

from agentcore import (
    AbortController,
    AgentContext,
    AgentEvent,
    AgentLoopConfig,
    AgentTool,
    AssistantMessage,
    ConfigError,
    ModelNotFoundError,
    UserMessage,
    agent_loop,
)
from agentcore.builtin_tools import builtin_tools
from agentcore.llm import Model, get_model, openai_compatible_model

ROOT = Path(__file__).resolve().parent.parent
"""The repository root: the only directory the file tools may read."""

LOCAL_PROVIDER, LOCAL_MODEL = "local", "qwen2.5-coder-1.5b"
DEFAULT_TASK = [
    "How many lines does LICENSE have?",
    "Use the calculator to multiply that number by 7.",  # a follow-up, asked after the answer
]
SYSTEM_PROMPT = (
    "You are a helpful assistant working in a software repository. Use read_file to read a "
    "file, list_files to see what is in a directory, and calculator for any arithmetic. "
    "Never do arithmetic in your head: always use calculator. Call one tool at a time and wait "
    "for its result. Answer in one or two short sentences."
)
RUN_TIMEOUT_S = 300  # abort the run if it takes longer than this

TOOLS: list[AgentTool] = builtin_tools(ROOT)  # read_file, list_files, calculator
"""The agent's tools, from `agentcore.builtin_tools`, with file access confined to `ROOT`."""

# --- the model ------------------------------------------------------------------------------------


def choose_model() -> Model:
    """`AGENTCORE_MODEL` ("provider/model-id", optionally on `AGENTCORE_BASE_URL`), else the
    local model (on `AGENTCORE_LOCAL_PORT` when set, as `scripts/local-model` uses it)."""
    spec = os.environ.get("AGENTCORE_MODEL", "").strip()
    base_url = os.environ.get("AGENTCORE_BASE_URL", "").strip()
    if not spec:
        model = get_model(LOCAL_PROVIDER, LOCAL_MODEL)
        port = os.environ.get("AGENTCORE_LOCAL_PORT", "").strip()
        if port.isdigit():
            model = replace(model, base_url=f"http://127.0.0.1:{port}/v1")
        return model
    provider, sep, model_id = spec.partition("/")
    if not sep or not provider or not model_id:
        raise SystemExit(
            f"AGENTCORE_MODEL must be 'provider/model-id' (e.g. anthropic/claude-haiku-4-5), "
            f"got {spec!r}"
        )
    try:
        if base_url:
            return openai_compatible_model(base_url, model_id, provider=provider)
        return get_model(provider, model_id)
    except (ConfigError, ModelNotFoundError) as exc:
        raise SystemExit(f"error: {exc}") from None


def is_local(model: Model) -> bool:
    host = urlsplit(model.base_url).hostname if model.base_url else None
    return host in ("127.0.0.1", "localhost", "::1")


async def check_reachable(model: Model) -> str | None:
    """None if the server at `model.base_url` answers, else what went wrong."""
    try:
        async with httpx.AsyncClient(timeout=5) as client:
            response = await client.get(f"{model.base_url}/models")
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if response.status_code >= 500:
        return f"HTTP {response.status_code} from {model.base_url}/models"
    return None


# --- printing -------------------------------------------------------------------------------------


class Printer:
    """Prints a run's events as they arrive: streamed text, tool calls, tool results."""

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        self.at_line_start = True

    def dim(self, text: str) -> str:
        return f"\x1b[2m{text}\x1b[0m" if self.tty else text

    def write(self, text: str) -> None:
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()
            self.at_line_start = text.endswith("\n")

    def line(self, text: str) -> None:
        """`text` on a line of its own."""
        self.write(("" if self.at_line_start else "\n") + text + "\n")

    def show(self, event: AgentEvent) -> None:
        if event.type == "message_start" and isinstance(event.message, UserMessage):
            self.line(f"\nyou: {user_text(event.message)}\n")
        elif event.type == "message_update":
            update = event.assistant_message_event
            if update.type == "text_delta":
                self.write(update.delta)
            elif update.type == "toolcall_start":
                block = update.partial.content[update.content_index]
                name = getattr(block, "name", "") or "tool"
                self.write(("" if self.at_line_start else "\n") + self.dim(f"→ {name} "))
            elif update.type == "toolcall_delta":
                self.write(self.dim(update.delta))  # the arguments, as the model writes them
            elif update.type == "toolcall_end":
                self.write("\n")
        elif event.type == "tool_execution_start":
            self.line(f"⚙ running {event.tool_name}({format_args(event.args)})")
        elif event.type == "tool_execution_end":
            text = "\n".join(getattr(b, "text", "[image]") for b in event.result.content)
            mark = "✗" if event.is_error else "✓"
            self.line(f"{mark} {event.tool_name} → " + shorten(text).replace("\n", "\n    "))
        elif event.type == "message_end" and not self.at_line_start:
            self.write("\n")


def user_text(message: UserMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return " ".join(getattr(b, "text", "[image]") for b in message.content)


def format_args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def shorten(text: str, lines: int = 4, width: int = 100) -> str:
    rows = text.splitlines() or [""]
    kept = [row if len(row) <= width else row[: width - 1] + "…" for row in rows[:lines]]
    if len(rows) > lines:
        kept.append(f"… ({len(rows) - lines} more lines)")
    return "\n".join(kept)


# --- the run -------------------------------------------------------------------------------------


async def main(task: list[str]) -> int:
    """Run the agent on `task` (a prompt, then follow-up messages), printing as it goes.

    Returns the process exit code.
    """
    model = choose_model()
    if is_local(model):
        problem = await check_reachable(model)
        if problem is not None:
            hint = (
                "Start it with `scripts/local-model start` (or run `scripts/demo`, which does)."
                if model.provider == LOCAL_PROVIDER
                else "Start that server first."
            )
            message = f"error: the model server at {model.base_url} is not reachable ({problem})."
            print(f"{message}\n{hint}", file=sys.stderr)
            return 2

    printer = Printer()
    printer.line(printer.dim(f"model: {model.provider}/{model.id} ({model.name})"))
    follow_ups = [UserMessage(content=text) for text in task[1:]]

    def next_follow_up() -> list[UserMessage]:
        # polled when the agent would otherwise stop: one queued message per poll
        return [follow_ups.pop(0)] if follow_ups else []

    config = AgentLoopConfig(
        model=model, temperature=0, max_tokens=1024, get_follow_up_messages=next_follow_up
    )
    context = AgentContext(system_prompt=SYSTEM_PROMPT, tools=TOOLS)
    controller = AbortController()
    answers: list[AssistantMessage] = []
    started = time.perf_counter()

    async def deadline() -> None:
        await anyio.sleep(RUN_TIMEOUT_S)
        controller.abort(f"the run took longer than {RUN_TIMEOUT_S} s")

    async with anyio.create_task_group() as tg:
        tg.start_soon(deadline)
        async with agent_loop(
            [UserMessage(content=task[0])], context, config, signal=controller.signal
        ) as events:
            async for event in events:
                printer.show(event)
                if event.type == "message_end" and isinstance(event.message, AssistantMessage):
                    answers.append(event.message)
        tg.cancel_scope.cancel()

    elapsed = time.perf_counter() - started
    prompt = sum(m.usage.input + m.usage.cache_read for m in answers)
    output = sum(m.usage.output for m in answers)
    printer.line(
        printer.dim(
            f"\n{len(answers)} model request(s), {prompt} prompt + {output} output tokens, "
            f"{elapsed:.1f} s"
        )
    )
    final = answers[-1] if answers else None
    if final is None or final.stop_reason in ("error", "aborted"):
        reason = final.error_message if final is not None else "no answer"
        print(f"error: the run did not finish: {reason}", file=sys.stderr)
        if is_local(model) and model.provider == LOCAL_PROVIDER:
            print("Is the server healthy? Try `scripts/local-model status`.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    question = " ".join(sys.argv[1:]).strip()
    try:
        sys.exit(anyio.run(main, [question] if question else DEFAULT_TASK))
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        sys.exit(130)
