"""JSON out of protobuf `Struct`s, as the A2A SDK hands them over."""

from __future__ import annotations

from typing import Any

__all__ = ["plain"]


def plain(value: Any) -> Any:
    """JSON from a protobuf `Struct`/`Value` (as `MessageToDict` gives it), with its whole
    numbers as ints: protobuf keeps every number as a float, so `3` arrives as `3.0`."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
