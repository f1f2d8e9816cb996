"""The Temporal SDK, imported when `agentcore.temporal` first needs it.

`import agentcore.temporal` works without the `[temporal]` extra; its names import their module,
which imports the SDK from here: a missing SDK is then a `MissingExtraError` naming the extra
instead of a bare `ModuleNotFoundError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._optional import import_sdk

__all__ = [
    "activity",
    "client",
    "common",
    "exceptions",
    "import_sdk",
    "service",
    "worker",
    "workflow",
]


if TYPE_CHECKING:
    import temporalio.worker as worker
    from temporalio import activity, client, common, exceptions, service, workflow
else:
    activity = import_sdk("temporalio.activity", "temporal", needed_by="agentcore.temporal")
    client = import_sdk("temporalio.client", "temporal", needed_by="agentcore.temporal")
    common = import_sdk("temporalio.common", "temporal", needed_by="agentcore.temporal")
    exceptions = import_sdk("temporalio.exceptions", "temporal", needed_by="agentcore.temporal")
    service = import_sdk("temporalio.service", "temporal", needed_by="agentcore.temporal")
    workflow = import_sdk("temporalio.workflow", "temporal", needed_by="agentcore.temporal")
    worker = import_sdk("temporalio.worker", "temporal", needed_by="agentcore.temporal")
    import_sdk("temporalio.worker.workflow_sandbox", "temporal", needed_by="agentcore.temporal")
