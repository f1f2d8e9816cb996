"""Names the workers and the callers share: the workflow's, the queue's default, the stream,
event and message topics. (No SDK here: the caller's side imports it without registering the
workflow.)"""

from __future__ import annotations

__all__ = [
    "ABORTED_WHILE_WAITING",
    "ABORT_ATTRIBUTE",
    "DECIDE_TOPIC",
    "DEFAULT_QUEUE",
    "EVENTS_STREAM",
    "PENDING_EVENT",
    "SKILL_TOOLS",
    "WORKFLOW_NAME",
]

WORKFLOW_NAME = "agentcore.agent_run"
DEFAULT_QUEUE = "agentcore"
EVENTS_STREAM = "agentcore.events"
PENDING_EVENT = "agentcore.pending_approvals"
DECIDE_TOPIC = "agentcore.decide"
ABORT_ATTRIBUTE = "agentcore_abort"
"""The workflow attribute `DurableRun.abort` sets (to the reason): the durable flag the workers'
steps look for, so that the workflow learns of the abort only from checkpointed step results."""
ABORTED_WHILE_WAITING = "the run was aborted while the call waited for approval"
"""The denial a call still waiting for a decision gets when the run is aborted (as on Temporal)."""

SKILL_TOOLS = ("activate_skill", "read_skill_file")
"""The tools a run with skills has besides its own, served by the workers' skills."""
