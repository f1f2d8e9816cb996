"""Lazy imports of the optional provider SDKs, with an error that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import MissingExtraError

__all__ = ["import_sdk"]


def import_sdk(module: str, extra: str) -> ModuleType:
    """Import a provider SDK on first use.

    Args:
        module: the import name (`openai`, `anthropic`, `google.genai`).
        extra: the agentcore extra that installs it (`openai`, `anthropic`, `google`).

    Raises:
        MissingExtraError: the SDK is not installed; the message says
            `pip install 'agentcore[extra]'`.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"the {module!r} package is needed for this model but is not installed: "
            f"pip install 'agentcore[{extra}]'"
        ) from exc
