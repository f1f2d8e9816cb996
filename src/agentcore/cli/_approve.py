"""`/approve` and `/deny` in `agentcore chat`: deciding the tool calls that wait for approval.

A run that reaches a call needing approval (e.g. the `shell` tool of `--shell`) stops with the
call waiting; `pending_notice` lists the waiting calls for the person at the terminal. Then:

```
/approve [ID]           run the call (ID may be left out when exactly one waits)
/deny [ID] [REASON]     refuse it; the model is told, with the reason
```

Each decision is recorded at once (`Agent.approve`/`Agent.deny`, `decided_by="cli"`); once no
call waits any more, `decide` says so (`CommandOutcome.ready`) and the chat continues the run
(`Agent.continue_()`), which runs the approved calls and gives the model every result. Sending a
new message instead denies the waiting calls (see `Agent.prompt`).

How the chat uses it: for an input line where `is_approval_command(line)`, call
`decide(agent, line)`, show `outcome.text` (as an error when `outcome.is_error`), and when
`outcome.ready` run `await agent.continue_()` the way a prompt is run (interrupts, rendering);
after every run, show `pending_notice(agent)` when it is not None; add `HELP` to `/help`.

A resumed session may hold calls decided elsewhere (the web page, a program on the same store)
and not yet run: `reask(agent)` makes each of them wait again (`Agent.reopen`) unless the
terminal decided it, so nothing runs here that was not decided here, and says what it set aside.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..agent import Agent
from ..approvals import ApprovalRequest, decided_approvals
from ..errors import AgentCoreError
from ._safe import EXACT_NOTE, exact, json_text, visible

__all__ = [
    "COMMANDS",
    "DECIDED_BY",
    "HELP",
    "CommandOutcome",
    "decide",
    "describe",
    "is_approval_command",
    "pending_notice",
    "reask",
]

DECIDED_BY = "cli"
"""The `decided_by` of the decisions taken in `agentcore chat`."""

COMMANDS = ("/approve", "/deny")
"""The commands this module handles."""

HELP = """\
  /approve [ID]       run the tool call waiting for approval (ID: when several wait)
  /deny [ID] [REASON] refuse it; the model is told why"""
"""Lines for the chat's /help."""

_ARGS_LIMIT = 2000  # characters of a JSON argument list shown; the rest is said to be cut


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """What a `/approve` or `/deny` line did.

    Attributes:
        text: what to tell the person (one or more lines).
        is_error: the line was refused (nothing was decided).
        ready: no call waits any more: continue the run now (`agent.continue_()`).
    """

    text: str
    is_error: bool = False
    ready: bool = False


def is_approval_command(line: str) -> bool:
    """Whether `line` is a `/approve` or `/deny` command."""
    return line.split(maxsplit=1)[0] in COMMANDS if line.strip() else False


def describe(request: ApprovalRequest, arguments: dict[str, Any] | None = None) -> str:
    """One waiting call as the person deciding sees it: a shell command whole and exactly as it
    will run (`_safe.exact`, with a note when it holds control characters); other arguments as
    JSON, clipped past 2,000 characters with a note saying how much is not shown."""
    if request.input_schema is not None:  # a question for the user (an MCP elicitation)
        return _describe_question(request)
    args = request.arguments if arguments is None else arguments
    note = ""
    command = args.get("command")
    if request.tool_name == "shell" and set(args) == {"command"} and isinstance(command, str):
        text, escaped = exact(command)
        shown = f"$ {text}"
        note = f"\n  {EXACT_NOTE}" if escaped else ""
    else:
        shown = json_text(args)
        if len(shown) > _ARGS_LIMIT:
            cut = len(shown) - _ARGS_LIMIT
            shown = f"{shown[:_ARGS_LIMIT]}… ({cut} more characters not shown)"
    reason = f"  ({visible(request.reason)})" if request.reason else ""
    call = visible(f"{request.tool_call_id}  {request.tool_name}")
    return f"  {call}: {shown}{reason}{note}"


def pending_notice(agent: Agent) -> str | None:
    """The calls waiting for approval and how to decide them, or None when none waits."""
    waiting = agent.state.pending_approvals
    if not waiting:
        return None
    one = len(waiting) == 1
    lines = ["waiting for approval:" if one else f"{len(waiting)} calls wait for approval:"]
    lines += [describe(r) for r in waiting]
    if one:
        lines.append("/approve runs it, /deny [REASON] refuses it")
    else:
        lines.append("/approve ID runs one, /deny ID [REASON] refuses one")
    if any(r.input_schema is not None for r in waiting):
        lines.append(
            "a question: /approve [ID] {JSON} answers it, /deny [ID] declines it, "
            "/deny [ID] cancel cancels it"
        )
    return "\n".join(lines)


def _describe_question(request: ApprovalRequest) -> str:
    """An input request: the call, the question, and the fields the answer has."""
    schema = request.input_schema or {}
    required = set(schema.get("required") or ())
    fields = []
    for name, spec in (schema.get("properties") or {}).items():
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        if isinstance(spec, dict) and "enum" in spec:
            kind = "|".join(str(v) for v in spec["enum"])
        fields.append(f"{name}: {kind}{'' if name in required else ' (optional)'}")
    call = visible(f"{request.tool_call_id}  {request.tool_name}")
    question = visible(request.reason or "")
    return f"  {call}: {question}\n    answer with {{{', '.join(visible(f) for f in fields)}}}"


def _answer(text: str) -> dict[str, Any] | str:
    """The JSON object of an `/approve` answer, or the error text."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f'the answer must be a JSON object, e.g. {{"count": 2}}: {exc}'
    if not isinstance(value, dict):
        return f"the answer must be a JSON object, got {type(value).__name__}"
    return value


def decide(agent: Agent, line: str) -> CommandOutcome:
    """Carry out one `/approve [ID]` or `/deny [ID] [REASON]` line on an idle agent."""
    name, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    waiting = agent.state.pending_approvals
    if not waiting:
        return CommandOutcome("no tool call waits for approval", is_error=True)
    ids = [r.tool_call_id for r in waiting]
    first, _, after = rest.partition(" ")
    if first in ids:
        call_id, extra = first, after.strip()
    elif len(ids) == 1:
        call_id, extra = ids[0], rest
    else:
        return CommandOutcome(
            f"{len(ids)} calls wait: say which, e.g. {name} {ids[0]}\n{pending_notice(agent)}",
            is_error=True,
        )
    request = waiting[ids.index(call_id)]
    try:
        if name == "/approve" and request.input_schema is not None:
            answer = _answer(extra)
            if isinstance(answer, str):
                return CommandOutcome(answer, is_error=True)
            agent.approve(call_id, arguments=answer, decided_by=DECIDED_BY)
            text = f"answered {request.tool_name} ({call_id})"
        elif name == "/approve":
            if extra:
                what = "/approve takes one call id" if first in ids else "unknown call id"
                text = f"{what}: {extra!r}; waiting: {', '.join(ids)}"
                return CommandOutcome(text, is_error=True)
            agent.approve(call_id, decided_by=DECIDED_BY)
            text = f"approved {request.tool_name} ({call_id})"
        else:
            agent.deny(call_id, extra or None, decided_by=DECIDED_BY)
            text = f"denied {request.tool_name} ({call_id})"
    except AgentCoreError as exc:
        return CommandOutcome(str(exc), is_error=True)
    left = agent.state.pending_approvals
    if left:
        return CommandOutcome(f"{text}\n{pending_notice(agent)}")
    return CommandOutcome(text, ready=True)


def reask(agent: Agent) -> str | None:
    """Make every call that was decided, but not here (`decided_by` is not `"cli"`), and has not
    run wait for a decision again; returns what was set aside (then `pending_notice` lists the
    calls), or None when nothing was."""
    lines: list[str] = []
    for item in decided_approvals(agent.state.messages):
        decision = item.decision
        if decision.decided_by == DECIDED_BY:
            continue
        agent.reopen(decision.tool_call_id)
        who = f"by {decision.decided_by}" if decision.decided_by else "outside this terminal"
        what = "approved" if decision.approved else "denied"
        edited = ""
        if decision.approved and decision.arguments is not None:
            edited = f" with edited arguments:\n  {describe(item.request, decision.arguments)}"
        lines.append(
            f"{item.request.tool_call_id} ({item.request.tool_name}) was {what} {who}{edited}"
        )
    if not lines:
        return None
    head = "decided elsewhere and not run; the decision was set aside, decide here again:"
    return visible("\n".join([head, *("  " + line for line in lines)]))
