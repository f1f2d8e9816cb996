"""The command line of long-term memory: `chat|run|serve --memory [--memory-user NAME]` and
`agentcore memory list|search QUERY|delete ID...` (the code that runs them is `_memory`)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

__all__ = ["MemoryOptions", "add_memory_command", "add_memory_options", "memory_fields"]

_USER_HELP = "whose memories: NAME (default: the name of the operating system's user)"
_DIR_HELP = (
    "the sessions directory whose memory.db holds the memories (default: the one "
    "'agentcore chat' uses)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryOptions:
    """`--memory` of a run, or the `memory` command's options."""

    user: str | None = None  # --memory-user / --user; None: the OS user's name
    action: str | None = None  # memory list|search|delete
    query: str | None = None  # memory search QUERY
    ids: tuple[str, ...] = ()  # memory delete ID...
    limit: int = 50  # memory list|search --limit
    json: bool = False  # memory ... --json


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 10_000:
        raise argparse.ArgumentTypeError(f"expected a number from 1 to 10000, got {text!r}")
    return value


def _user(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a user name, got an empty one")
    return text


def add_memory_options(common: argparse.ArgumentParser) -> None:
    """`--memory` and `--memory-user NAME` of `chat`, `run` and `serve`."""
    group = common.add_argument_group("long-term memory (see docs/memory.md)")
    group.add_argument(
        "--memory",
        action="store_true",
        help="remember across sessions: the model gets the recall_memory and remember tools, "
        "and the memories relevant to each prompt are added to the request as untrusted "
        "data; kept in memory.db beside the sessions ('agentcore memory' lists them)",
    )
    group.add_argument("--memory-user", type=_user, metavar="NAME", help=_USER_HELP)


def add_memory_command(commands: Any) -> None:
    """`agentcore memory list|search QUERY|delete ID...`."""
    memory = commands.add_parser(
        "memory",
        help="list, search or delete what --memory remembered",
        description="The memories 'chat|run|serve --memory' keep, one user's at a time. An ID "
        "may be shortened to any unique beginning of it.",
    )
    actions = memory.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, help_text in (
        ("list", "the user's memories, newest first"),
        ("search", "the user's memories that match QUERY's words, best first"),
        ("delete", "delete memories (all the ids are checked before any is deleted)"),
    ):
        action = actions.add_parser(name, help=help_text, description=help_text)
        if name == "search":
            action.add_argument("query", metavar="QUERY", help="the words to look for")
        if name == "delete":
            action.add_argument("ids", nargs="+", metavar="ID", help="the memories")
        else:
            action.add_argument(
                "--limit", type=_limit, default=50, metavar="N", help="at most N (default: 50)"
            )
        action.add_argument("--user", type=_user, metavar="NAME", help=_USER_HELP)
        action.add_argument("--sessions-dir", metavar="DIR", help=_DIR_HELP)
        action.add_argument("--json", action="store_true", help="one JSON object per line")


def memory_fields(ns: argparse.Namespace, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The `Parsed` fields of a command line: `memory` (None without `--memory` or the `memory`
    command) and, for the `memory` command, `sessions_dir`. `--memory-user` without `--memory`
    is a usage error (`parser.error`)."""
    if ns.command == "memory":
        options = MemoryOptions(
            user=ns.user,
            action=ns.action,
            query=getattr(ns, "query", None),
            ids=tuple(getattr(ns, "ids", ())),
            limit=getattr(ns, "limit", 50),
            json=ns.json,
        )
        return {"memory": options, "sessions_dir": ns.sessions_dir}
    if not getattr(ns, "memory", False):
        if getattr(ns, "memory_user", None) is not None:
            parser.error("--memory-user needs --memory")
        return {"memory": None}
    return {"memory": MemoryOptions(user=ns.memory_user)}
