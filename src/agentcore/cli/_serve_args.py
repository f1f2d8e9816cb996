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
        help="the address to listen on (default: 127.0.0.1); any other than a loopback "
        "address needs a token",
    )
    group.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the port (default: {DEFAULT_PORT}; 0 picks a free one)",
    )
    group.add_argument(
        "--token",
        help="require this token on every request (default: none on loopback; generated and "
        "printed on any other address); also $AGENTCORE_TOKEN",
    )
    group.add_argument(
        "--sessions-dir",
        metavar="DIR",
        help="the session store directory (default: $AGENTCORE_HOME/sessions, else "
        "$XDG_DATA_HOME/agentcore/sessions, else ~/.local/share/agentcore/sessions)",
    )
