"""The command line of sessions: `chat --continue|--session ID`, `agentcore sessions ...`."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_session_options", "add_sessions_command", "sessions_fields"]

_DIR_HELP = (
    "where sessions are kept (default: $AGENTCORE_HOME/sessions, else "
    "$XDG_DATA_HOME/agentcore/sessions, else ~/.local/share/agentcore/sessions)"
)


def add_session_options(chat: argparse.ArgumentParser) -> None:
    """`--continue`, `--session ID` and `--sessions-dir DIR` of `chat`."""
    group = chat.add_argument_group("sessions")
    which = group.add_mutually_exclusive_group()
    which.add_argument(
        "-c",
        "--continue",
        dest="continue_last",
        action="store_true",
        help="resume the most recently updated session",
    )
    which.add_argument(
        "--session",
        metavar="ID",
        help="resume this session (its id, or a unique beginning of it)",
    )
    group.add_argument("--sessions-dir", metavar="DIR", help=_DIR_HELP)


def add_sessions_command(commands: Any) -> None:
    """`agentcore sessions list|show ID|rm ID...`."""
    sessions = commands.add_parser(
        "sessions",
        help="list, show or delete the saved chat sessions",
        description="The sessions `agentcore chat` saved. An ID may be shortened to any "
        "unique beginning of it.",
    )
    sessions.add_argument("--sessions-dir", metavar="DIR", help=_DIR_HELP)
    actions = sessions.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, help_text in (
        ("list", "one line per session, most recent last"),
        ("show", "a session's conversation"),
        ("rm", "delete sessions"),
    ):
        action = actions.add_parser(name, help=help_text, description=help_text)
        if name == "show":
            action.add_argument("ids", nargs=1, metavar="ID", help="the session")
        elif name == "rm":
            action.add_argument("ids", nargs="+", metavar="ID", help="the sessions")
        # SUPPRESS: given before the action, the option is not reset by the action's default
        action.add_argument(
            "--sessions-dir", metavar="DIR", default=argparse.SUPPRESS, help=_DIR_HELP
        )


def sessions_fields(ns: argparse.Namespace) -> dict[str, Any]:
    """The `Parsed` fields of a `sessions` command line."""
    return {
        "action": ns.action,
        "session_ids": tuple(getattr(ns, "ids", ())),
        "sessions_dir": ns.sessions_dir,
    }
