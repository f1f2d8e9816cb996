"""`--mcp-sampling` and its caps: whether the `--mcp` servers may sample a model.

```
--mcp-sampling                     let the --mcp servers ask a model to answer (off by default)
--mcp-sampling-model PROVIDER/ID   the model that answers (default: the run's --model)
--mcp-sampling-max-tokens N        output tokens one request may ask for (default 1024)
--mcp-sampling-max-cost USD        what the sampling of one tool call may cost (default: none)
--mcp-sampling-max-requests N      sampling requests one tool call may make (default 10)
--mcp-sampling-approve ask|yes     ask at the terminal before each request (default), or not
```

They are `MCPSampling`'s settings (see docs/mcp.md). A `--mcp-sampling-*` option without
`--mcp-sampling`, or `--mcp-sampling` without `--mcp`, is a usage error: nothing is turned on
by accident, and nothing given is silently ignored.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ._arg_types import amount_or_off

__all__ = ["SamplingOptions", "add_sampling_arguments", "sampling_options"]

_DEFAULT_MAX_TOKENS = 1024
_DEFAULT_MAX_REQUESTS = 10
_DETAILS = (
    "mcp_sampling_model",
    "mcp_sampling_max_tokens",
    "mcp_sampling_max_cost",
    "mcp_sampling_max_requests",
    "mcp_sampling_approve",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SamplingOptions:
    """What `--mcp-sampling` and its caps say (`MCPSampling`'s settings)."""

    model: str | None = None  # PROVIDER/ID; None: the run's model
    max_tokens: int = _DEFAULT_MAX_TOKENS
    max_cost: float | None = None
    max_requests: int = _DEFAULT_MAX_REQUESTS
    ask: bool = True  # ask at the terminal before each request


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def add_sampling_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the `--mcp-sampling` options to a parser that has `--mcp`."""
    group = parser.add_argument_group(
        "MCP sampling",
        "let the --mcp servers ask a model to answer during their tool calls (off by default; "
        "see docs/mcp.md)",
    )
    group.add_argument(
        "--mcp-sampling",
        action="store_true",
        help="allow sampling, within the caps below",
    )
    group.add_argument(
        "--mcp-sampling-model",
        metavar="PROVIDER/ID",
        help="the model that answers the servers (default: the run's --model)",
    )
    group.add_argument(
        "--mcp-sampling-max-tokens",
        type=_positive,
        metavar="N",
        help=f"output tokens one request may ask for; more are capped to N "
        f"(default: {_DEFAULT_MAX_TOKENS})",
    )
    group.add_argument(
        "--mcp-sampling-max-cost",
        type=amount_or_off,
        metavar="USD",
        help="what the sampling of one tool call may cost before further requests are refused "
        "(default: none)",
    )
    group.add_argument(
        "--mcp-sampling-max-requests",
        type=_positive,
        metavar="N",
        help=f"sampling requests one tool call may make (default: {_DEFAULT_MAX_REQUESTS})",
    )
    group.add_argument(
        "--mcp-sampling-approve",
        choices=("ask", "yes"),
        help="ask: show each request at the terminal and run it only when you answer y "
        "(default); yes: run every request within the caps without asking",
    )


def sampling_options(
    ns: argparse.Namespace, parser: argparse.ArgumentParser
) -> SamplingOptions | None:
    """The sampling settings of a parsed command line, or None when sampling is off.

    Calls `parser.error` (exit code 2) for a cap given without `--mcp-sampling`, or
    `--mcp-sampling` without any `--mcp` server."""
    given = [name for name in _DETAILS if getattr(ns, name, None) is not None]
    if not getattr(ns, "mcp_sampling", False):
        if given:
            option = "--" + given[0].replace("_", "-")
            parser.error(f"{option} needs --mcp-sampling (sampling is off without it)")
        return None
    if not ns.mcp:
        parser.error("--mcp-sampling needs an --mcp server to sample for")
    return SamplingOptions(
        model=ns.mcp_sampling_model,
        max_tokens=ns.mcp_sampling_max_tokens or _DEFAULT_MAX_TOKENS,
        max_cost=ns.mcp_sampling_max_cost,
        max_requests=ns.mcp_sampling_max_requests or _DEFAULT_MAX_REQUESTS,
        ask=ns.mcp_sampling_approve != "yes",
    )
