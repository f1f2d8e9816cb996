"""The command line of `agentcore eval DATASET` (the command itself is `_eval`)."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Any

from ._arg_types import amount_or_off

__all__ = ["EvalOptions", "add_eval_command", "eval_options"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalOptions:
    """The options of `agentcore eval`."""

    dataset: str
    agent: str
    concurrency: int = 4
    timeout: float | None = None
    repeat: int = 1
    json_report: str | None = None
    baseline: str | None = None
    tolerance: float = 0.0
    progress: bool | None = None  # None: when stderr is a terminal
    include_output: bool = False
    trace_content: bool = False
    name: str | None = None
    batch: bool = False
    batch_timeout: float = 86400.0
    poll_interval: float = 30.0


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _seconds(text: str) -> float | None:
    return amount_or_off(text, "seconds (a positive number)")


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def add_eval_command(commands: Any, add_recording: Any) -> None:
    """`agentcore eval DATASET --agent MODULE:FACTORY ...`."""
    parser = commands.add_parser(
        "eval",
        help="run an evaluation dataset against an agent (see docs/evals.md)",
        description="Run the cases of a pydantic-evals dataset file (YAML or JSON) against an "
        "agent, print the report, and compare it with a baseline report. Exit codes: 0 done, "
        "1 a regression against --baseline (or a drift from --replay), 2 a usage, dataset or "
        "agent error.",
    )
    parser.add_argument("dataset", metavar="DATASET", help="the dataset file (.yaml, .yml, .json)")
    parser.add_argument(
        "--agent",
        required=True,
        metavar="MODULE:FACTORY",
        help="the function that builds the agent for each case: a module (dotted, importable "
        "from the current directory) or a .py file, and the function's name; it returns an "
        "Agent or (AgentLoopConfig, AgentContext), and is given model= and inputs= when it "
        "takes them",
    )
    parser.add_argument(
        "-m",
        "--model",
        metavar="PROVIDER/ID",
        help="the model handed to the factory (default: $AGENTCORE_MODEL, else the local model)",
    )
    parser.add_argument(
        "-j",
        "--concurrency",
        type=_count,
        default=4,
        metavar="N",
        help="cases run at the same time (default: 4)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="S",
        help="seconds a case may run before it fails (default: none)",
    )
    parser.add_argument(
        "--repeat", type=_count, default=1, metavar="N", help="run each case N times"
    )
    parser.add_argument(
        "--json", dest="json_report", metavar="FILE", help="also write the report as JSON to FILE"
    )
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        help="a report written by --json earlier: show the differences and exit 1 when a case "
        "got worse (an assertion that passed now fails, a lower score, a case that now fails)",
    )
    parser.add_argument(
        "--tolerance",
        type=_tolerance,
        default=0.0,
        metavar="X",
        help="how much lower a score may be than in the baseline (default: 0)",
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "--progress",
        action="store_true",
        default=None,
        help="show a progress bar on stderr (default: when stderr is a terminal)",
    )
    shown.add_argument(
        "--no-progress", dest="progress", action="store_false", help="never show the progress bar"
    )
    parser.add_argument(
        "--show-output", action="store_true", help="show each case's output in the report"
    )
    parser.add_argument(
        "--trace-content",
        action="store_true",
        help="record prompts, answers and tool arguments on the runs' spans (for span "
        "evaluators that read them, such as ArgumentCorrectness)",
    )
    parser.add_argument("--name", help="the experiment's name in the report (default: the agent)")
    parser.add_argument(
        "--batch",
        action="store_true",
        help="send every case's request in one provider batch (OpenAI, Anthropic: half the "
        "price, answered within hours); each case is one request: a tool its answer calls is "
        "not run (see docs/evals.md)",
    )
    parser.add_argument(
        "--batch-timeout",
        type=_positive,
        default=86400.0,
        metavar="S",
        help="with --batch: seconds to wait for the batch before cancelling it (default: 86400)",
    )
    parser.add_argument(
        "--poll-interval",
        type=_positive,
        default=30.0,
        metavar="S",
        help="with --batch: seconds between status checks of the batch (default: 30)",
    )
    add_recording(parser)


def eval_options(ns: argparse.Namespace) -> EvalOptions:
    """The options of an `eval` command line."""
    return EvalOptions(
        dataset=ns.dataset,
        agent=ns.agent,
        concurrency=ns.concurrency,
        timeout=ns.timeout,
        repeat=ns.repeat,
        json_report=ns.json_report,
        baseline=ns.baseline,
        tolerance=ns.tolerance,
        progress=ns.progress,
        include_output=ns.show_output,
        trace_content=ns.trace_content,
        name=ns.name,
        batch=ns.batch,
        batch_timeout=ns.batch_timeout,
        poll_interval=ns.poll_interval,
    )
