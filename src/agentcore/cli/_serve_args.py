"""The options of `agentcore serve` (the command itself is `_serve`)."""

from __future__ import annotations

import argparse

__all__ = ["DEFAULT_PORT", "add_serve_arguments"]

DEFAULT_PORT = 8765
"""The port `agentcore serve` listens on by default."""


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `agentcore serve`, besides the model and run options."""
    group = parser.add_argument_group("server")
    group.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default: 127.0.0.1)",
    )
    group.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the port (default: {DEFAULT_PORT}; 0 picks a free one)",
    )
    tokens = group.add_mutually_exclusive_group()
    tokens.add_argument(
        "--token",
        help="require this token on every request (default: a random one, printed once "
        "within the address to open); also $AGENTCORE_TOKEN",
    )
    tokens.add_argument(
        "--no-token",
        action="store_true",
        help="serve without a token (loopback only): then any local user or process can read "
        "every stored session and run the tools",
    )
    group.add_argument(
        "--header-timeout",
        type=_positive_float,
        default=60.0,
        metavar="SECONDS",
        help="close a connection that has not sent its request headers within this time "
        "(default: 60)",
    )
    group.add_argument(
        "--max-connections",
        type=_positive_int,
        default=1000,
        metavar="N",
        help="open connections at most; past it the one waiting longest for its headers is "
        "closed (default: 1000)",
    )
    group.add_argument(
        "--a2a",
        action="store_true",
        help="serve the agent to other agents over A2A (JSON-RPC and HTTP+JSON, agent card at "
        "/.well-known/agent-card.json) instead of the web chat; needs the 'a2a' extra",
    )
    group.add_argument(
        "--a2a-name",
        metavar="NAME",
        help="the name in the A2A agent card (default: 'agentcore agent')",
    )
    group.add_argument(
        "--sessions-dir",
        metavar="DIR",
        help="the session store directory (default: $AGENTCORE_HOME/sessions, else "
        "$XDG_DATA_HOME/agentcore/sessions, else ~/.local/share/agentcore/sessions)",
    )
    group.add_argument(
        "--store",
        metavar="URL",
        help="keep sessions in a PostgreSQL database instead of a directory "
        "(postgresql://user@host:port/db, with ?schema=NAME for tables outside the "
        "'agentcore' schema; needs the 'postgres' extra): several serve processes can share it",
    )


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    if not (text.isascii() and text.isdigit() and int(text) > 0):
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)
