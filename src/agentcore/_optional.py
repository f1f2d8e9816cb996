"""Optional imports, shared by the integrations: the one private module they may use (DESIGN
section 1; `tests/test_layers.py` allows exactly this one).

An integration (`agentcore.mcp`, `agentcore.temporal`, `agentcore.tracing`, `agentcore.web`) needs
packages that only its extra installs. Two things keep a plain install working:

* `lazy_exports` makes the integration's package `__getattr__`: `import agentcore.mcp` imports
  nothing of the SDK, and a name is imported from its module when it is first used;
* `import_sdk` imports a package of an extra, and turns its absence into a `MissingExtraError`
  whose message names the extra to install, instead of a bare `ModuleNotFoundError`.

```python
# agentcore/web/__init__.py
__getattr__ = lazy_exports(__name__, {"serve": "._server"}, globals())

# agentcore/web/_deps.py
uvicorn = import_sdk("uvicorn", "web", needed_by="agentcore.web")
```
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from .errors import MissingExtraError

__all__ = ["import_sdk", "lazy_exports"]


def import_sdk(module: str, extra: str, *, needed_by: str, what: str | None = None) -> ModuleType:
    """Import `module`, which the `extra` extra installs.

    Args:
        module: the import name (`mcp.types`, `temporalio.client`).
        extra: the agentcore extra that installs it (`mcp`, `temporal`).
        needed_by: who needs it, as the message says (`agentcore.mcp`).
        what: what is missing, in words (default: "the 'mcp' package", the top-level package).

    Raises:
        MissingExtraError: it is not installed; the message says
            `pip install 'agentcore-loop[extra]'`.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = what if what is not None else f"the {module.split('.')[0]!r} package"
        raise MissingExtraError(
            f"{needed_by} needs {missing}, which is not installed: "
            f"pip install 'agentcore-loop[{extra}]'"
        ) from exc


def lazy_exports(
    package: str, where: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`, which exports each name of `where` (name -> the
    relative module that defines it) from its module when it is first looked up, and keeps it
    in `namespace` (the package's `globals()`) so that the next lookup is a plain attribute.

    Looking up any other name raises `AttributeError`, as for a module without `__getattr__`.
    """

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # the next lookup is a plain attribute
        return value

    return __getattr__
