"""The Temporal SDK, imported when `agentcore.temporal` first needs it.

`import agentcore.temporal` works without the `[temporal]` extra; its names import their module,
which imports the SDK from here: a missing SDK is then a `MissingExtraError` naming the extra
instead of a bare `ModuleNotFoundError`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from .. import MissingExtraError

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


def import_sdk(module: str, extra: str) -> ModuleType:
    """Import `module`, which the `extra` extra installs.

    Raises:
        MissingExtraError: it is not installed; the message names the extra to install.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"agentcore.temporal needs the {module.split('.')[0]!r} package, which is not "
            f"installed: pip install 'agentcore-loop[{extra}]'"
        ) from exc


if TYPE_CHECKING:
    import temporalio.worker as worker
    from temporalio import activity, client, common, exceptions, service, workflow
else:
    activity = import_sdk("temporalio.activity", "temporal")
    client = import_sdk("temporalio.client", "temporal")
    common = import_sdk("temporalio.common", "temporal")
    exceptions = import_sdk("temporalio.exceptions", "temporal")
    service = import_sdk("temporalio.service", "temporal")
    workflow = import_sdk("temporalio.workflow", "temporal")
    worker = import_sdk("temporalio.worker", "temporal")
    import_sdk("temporalio.worker.workflow_sandbox", "temporal")
