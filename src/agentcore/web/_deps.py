"""The `[web]` extra's packages, imported when `agentcore.web` first needs them.

`import agentcore.web` works without the extra; its names import their modules, which import
Starlette, uvicorn and the AG-UI models from here, through `import_sdk`, so that a missing
package is a `MissingExtraError` naming the extra instead of a bare `ModuleNotFoundError`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from .. import MissingExtraError

__all__ = ["ag_ui", "applications", "import_sdk", "requests", "responses", "routing", "staticfiles"]


def import_sdk(module: str, extra: str) -> ModuleType:
    """Import `module`, which the `extra` extra installs.

    Raises:
        MissingExtraError: it is not installed; the message says
            `pip install 'agentcore-loop[extra]'`.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"agentcore.web needs the {module.split('.')[0]!r} package, which is not installed: "
            f"pip install 'agentcore-loop[{extra}]'"
        ) from exc


if TYPE_CHECKING:
    import ag_ui.core as ag_ui
    import starlette.applications as applications
    import starlette.requests as requests
    import starlette.responses as responses
    import starlette.routing as routing
    import starlette.staticfiles as staticfiles
else:
    ag_ui = import_sdk("ag_ui.core", "web")
    applications = import_sdk("starlette.applications", "web")
    requests = import_sdk("starlette.requests", "web")
    responses = import_sdk("starlette.responses", "web")
    routing = import_sdk("starlette.routing", "web")
    staticfiles = import_sdk("starlette.staticfiles", "web")
