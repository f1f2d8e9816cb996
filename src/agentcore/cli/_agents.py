"""`--agents FILE`: the agents of a run with handoffs, declared in a TOML or JSON file.

The file is configuration, read as data (`tomllib` or `json`): nothing in it is run. It names
the agent that starts and describes each agent: its description, system prompt, model,
thinking level, which built-in tools it holds, the agents it may hand the conversation to
(`returns` for each: whether the conversation comes back once that agent has answered) and its
view of the transcript. Every key is checked; a wrong one is an error naming the file, the key
and what was expected (see docs/cli.md for the format).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError
from ..handoffs import AgentSpec, HandoffTool, handoff
from ..llm.model import Model
from ..llm.types import THINKING_LEVELS, ThinkingLevel
from ..tools import AgentTool
from ._run import CommandError

__all__ = ["BUILTIN_TOOL_NAMES", "Agents", "load_agents"]

BUILTIN_TOOL_NAMES = ("read_file", "list_files", "calculator")
"""The tools an agent of the file may hold (the built-in tools of `--tools`)."""

_TOP_KEYS = ("start", "next_agent", "max_handoffs", "agents")
_AGENT_KEYS = ("description", "system_prompt", "model", "thinking", "tools", "handoffs", "history")
_HANDOFF_KEYS = ("to", "returns", "tool_name", "tool_description")


@dataclass(frozen=True, slots=True, kw_only=True)
class Agents:
    """The agents of an `--agents` file, ready for a run.

    Attributes:
        start: the name of the agent that starts (the run's `agent_name`).
        specs: every agent by name (the starting one too, so that others may hand to it).
        system_prompt: the starting agent's system prompt.
        model: the starting agent's model (None: the command's `--model`).
        thinking: the starting agent's thinking level (None: the command's `--thinking`).
        tools: the starting agent's tools: its built-in tools, then its handoffs.
        next_agent: who answers a new prompt after a handoff (`"last"` or `"first"`).
        max_handoffs: at most this many handoffs per run (None: the default, 10).
    """

    start: str
    specs: dict[str, AgentSpec]
    system_prompt: str
    model: Model | None
    thinking: ThinkingLevel | None
    tools: list[AgentTool] = field(default_factory=list)
    next_agent: Literal["last", "first"] = "last"
    max_handoffs: int | None = None

    def options(self) -> dict[str, Any]:
        """The run's handoff options, as keyword arguments of `Agent` and `AgentLoopConfig`."""
        options: dict[str, Any] = {"agent_name": self.start, "next_agent": self.next_agent}
        if self.max_handoffs is not None:
            options["max_handoffs"] = self.max_handoffs
        return options


class _Reader:
    """Checks the file's values, each error naming the file and the key."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, key: str, expected: str, got: Any = ...) -> CommandError:
        text = f"--agents {self.path}: {key}: expected {expected}"
        if got is not ...:
            text += f", got {_shown(got)}"
        return CommandError(text)

    def table(self, value: Any, key: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, "a table (an object)", value)
        return value

    def only(self, table: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> None:
        for name in table:
            if name not in allowed:
                where = f"{key}.{name}" if key else str(name)
                raise self.fail(where, "one of the keys " + ", ".join(allowed), ...)

    def text(self, table: Mapping[str, Any], key: str, where: str, default: str = "") -> str:
        value = table.get(key, default)
        if not isinstance(value, str):
            raise self.fail(f"{where}.{key}", "a string", value)
        return value


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _parse(path: str) -> Any:
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise CommandError(f"--agents {path}: expected a .toml or .json file")
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CommandError(f"cannot read --agents {path}: {reason}") from None
    try:
        return tomllib.loads(text) if suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        kind = "TOML" if suffix == ".toml" else "JSON"
        raise CommandError(f"--agents {path} is not valid {kind}: {exc}") from None


def load_agents(
    path: str,
    *,
    builtin: Callable[[], list[AgentTool]],
    model: Callable[[str], Model],
) -> Agents:
    """The agents of the file at `path`.

    Args:
        path: a `.toml` or `.json` file.
        builtin: makes the built-in tools (called once, if an agent holds one).
        model: resolves a `"provider/id"` model reference (raising `CommandError`).

    Raises:
        CommandError: (exit code 2) the file cannot be read or parsed, or a key holds a value
            that is not what it should be (the message names the file, the key and what was
            expected).
    """
    read = _Reader(path)
    top = read.table(_parse(path), "the file")
    read.only(top, "", _TOP_KEYS)
    agents = read.table(top.get("agents"), "agents") if "agents" in top else None
    if not agents:
        raise read.fail("agents", "a table of at least one agent, [agents.NAME]")
    start = top.get("start")
    if not isinstance(start, str) or start not in agents:
        names = ", ".join(repr(n) for n in agents)
        raise read.fail("start", f"the name of one of the agents ({names})", start)
    next_agent = top.get("next_agent", "last")
    if next_agent not in ("last", "first"):
        raise read.fail("next_agent", "'last' or 'first'", next_agent)
    max_handoffs = top.get("max_handoffs")
    if max_handoffs is not None and (
        isinstance(max_handoffs, bool) or not isinstance(max_handoffs, int) or max_handoffs < 0
    ):
        raise read.fail("max_handoffs", "0 or a positive integer", max_handoffs)

    tools: dict[str, AgentTool] | None = None
    specs: dict[str, AgentSpec] = {}
    values: dict[str, Mapping[str, Any]] = {}
    for name, raw in agents.items():
        key = f"agents.{name}"
        entry = read.table(raw, key)
        read.only(entry, key, _AGENT_KEYS)
        values[name] = entry
        held: list[AgentTool] = []
        wanted = entry.get("tools", [])
        if not isinstance(wanted, list) or not all(isinstance(t, str) for t in wanted):
            raise read.fail(f"{key}.tools", "a list of built-in tool names", wanted)
        for tool_name in wanted:
            if tool_name not in BUILTIN_TOOL_NAMES:
                raise read.fail(
                    f"{key}.tools",
                    "built-in tool names: " + ", ".join(BUILTIN_TOOL_NAMES),
                    tool_name,
                )
            if tools is None:
                tools = {t.name: t for t in builtin()}
            held.append(tools[tool_name])
        thinking = entry.get("thinking")
        if thinking is not None and thinking not in THINKING_LEVELS:
            raise read.fail(f"{key}.thinking", "one of " + ", ".join(THINKING_LEVELS), thinking)
        ref = entry.get("model")
        if ref is not None and not isinstance(ref, str):
            raise read.fail(f"{key}.model", "a model as provider/id", ref)
        history = entry.get("history", "full")
        if not (
            history == "full"
            or (isinstance(history, int) and not isinstance(history, bool) and history > 0)
        ):
            raise read.fail(f"{key}.history", "'full' or a positive number of messages", history)
        description = read.text(entry, "description", key)
        system_prompt = read.text(entry, "system_prompt", key)
        try:
            resolved = model(ref) if ref is not None else None
        except CommandError as exc:
            raise read.fail(f"{key}.model", f"a usable model as provider/id ({exc})") from None
        try:
            specs[name] = AgentSpec(
                name=name,
                description=description,
                system_prompt=system_prompt,
                model=resolved,
                thinking_level=thinking,
                tools=held,
                history=history,
            )
        except ConfigError:
            raise read.fail(
                f"agents.{_shown(name)}",
                "an agent name of 1-48 letters, digits, ' ', '_', '.' or '-' starting with a "
                "letter, digit or '_'",
            ) from None

    for name, entry in values.items():
        made = _handoffs(read, entry.get("handoffs", []), f"agents.{name}.handoffs", specs, name)
        specs[name].handoffs.extend(made)
    first = specs[start]
    return Agents(
        start=start,
        specs=specs,
        system_prompt=first.system_prompt,
        model=first.model,
        thinking=first.thinking_level,
        tools=[*first.tools, *first.handoff_tools()],
        next_agent=next_agent,
        max_handoffs=max_handoffs,
    )


def _handoffs(
    read: _Reader, raw: Any, key: str, specs: dict[str, AgentSpec], own: str
) -> list[HandoffTool]:
    expected = "a list of agent names or tables {to = NAME, returns = true|false}"
    if not isinstance(raw, list):
        raise read.fail(key, expected, raw)
    made: list[HandoffTool] = []
    for index, item in enumerate(raw):
        where = f"{key}[{index}]"
        entry: Mapping[str, Any] = (
            {"to": item} if isinstance(item, str) else read.table(item, where)
        )
        read.only(entry, where, _HANDOFF_KEYS)
        target = entry.get("to")
        if not isinstance(target, str) or target not in specs or target == own:
            others = ", ".join(repr(n) for n in specs if n != own) or "none"
            raise read.fail(
                f"{where}.to" if not isinstance(item, str) else where,
                f"the name of another agent of the file ({others})",
                target,
            )
        returns = entry.get("returns", False)
        if not isinstance(returns, bool):
            raise read.fail(f"{where}.returns", "true or false", returns)
        tool_name = entry.get("tool_name")
        if tool_name is not None and not (isinstance(tool_name, str) and tool_name):
            raise read.fail(f"{where}.tool_name", "a non-empty string", tool_name)
        description = entry.get("tool_description")
        if description is not None and not isinstance(description, str):
            raise read.fail(f"{where}.tool_description", "a string", description)
        try:
            made.append(
                handoff(
                    specs[target],
                    tool_name=tool_name,
                    tool_description=description,
                    returns=returns,
                )
            )
        except ConfigError as exc:
            raise read.fail(f"{where}.tool_name", f"a valid tool name ({exc})") from None
    names = [t.name for t in made]
    for tool_name in names:
        if names.count(tool_name) > 1:
            raise read.fail(key, "handoffs with different tool names", tool_name)
    return made
