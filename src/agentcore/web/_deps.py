"""The `[web]` extra's packages, imported when `agentcore.web` first needs them.

`import agentcore.web` works without the extra; its names import their modules, which import
Starlette, uvicorn and the AG-UI models from here, through `import_sdk`, so that a missing
package is a `MissingExtraError` naming the extra instead of a bare `ModuleNotFoundError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._optional import import_sdk

__all__ = ["ag_ui", "applications", "import_sdk", "requests", "responses", "routing", "staticfiles"]


if TYPE_CHECKING:
    import ag_ui.core as ag_ui
    import starlette.applications as applications
    import starlette.requests as requests
    import starlette.responses as responses
    import starlette.routing as routing
    import starlette.staticfiles as staticfiles
else:
    ag_ui = import_sdk("ag_ui.core", "web", needed_by="agentcore.web")
    applications = import_sdk("starlette.applications", "web", needed_by="agentcore.web")
    requests = import_sdk("starlette.requests", "web", needed_by="agentcore.web")
    responses = import_sdk("starlette.responses", "web", needed_by="agentcore.web")
    routing = import_sdk("starlette.routing", "web", needed_by="agentcore.web")
    staticfiles = import_sdk("starlette.staticfiles", "web", needed_by="agentcore.web")
