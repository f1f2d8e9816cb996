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


def import_sdk(module: str) -> ModuleType:
    """Import `module`, which the `temporal` extra installs.

    Raises:
        MissingExtraError: it is not installed; the message names the extra to install.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"agentcore.temporal needs the {module.split('.')[0]!r} package, which is not "
            "installed: pip install 'agentcore[temporal]'"
        ) from exc


if TYPE_CHECKING:
    import temporalio.worker as worker
    from temporalio import activity, client, common, exceptions, service, workflow
else:
    activity = import_sdk("temporalio.activity")
    client = import_sdk("temporalio.client")
    common = import_sdk("temporalio.common")
    exceptions = import_sdk("temporalio.exceptions")
    service = import_sdk("temporalio.service")
    workflow = import_sdk("temporalio.workflow")
    worker = import_sdk("temporalio.worker")
    import_sdk("temporalio.worker.workflow_sandbox")
