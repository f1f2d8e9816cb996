"""Names the workers and the callers share: the workflow's, the queue's default, the stream,
event and message topics. (No SDK here: the caller's side imports it without registering the
workflow.)"""

from __future__ import annotations

__all__ = [
    "DECIDE_TOPIC",
    "DEFAULT_QUEUE",
    "EVENTS_STREAM",
    "PENDING_EVENT",
    "WORKFLOW_NAME",
]

WORKFLOW_NAME = "agentcore.agent_run"
DEFAULT_QUEUE = "agentcore"
EVENTS_STREAM = "agentcore.events"
PENDING_EVENT = "agentcore.pending_approvals"
DECIDE_TOPIC = "agentcore.decide"
