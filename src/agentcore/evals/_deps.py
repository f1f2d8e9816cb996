"""pydantic-evals, imported with an error that names the `[evals]` extra when it is missing."""

from __future__ import annotations

from .._optional import import_sdk

__all__ = ["pydantic_evals"]

pydantic_evals = import_sdk("pydantic_evals", "evals", needed_by="agentcore.evals")
