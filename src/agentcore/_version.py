"""The version of agentcore: written here only (hatch reads it for the package metadata)."""

__version__ = "0.1.0"
