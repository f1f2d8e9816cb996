"""Argument types shared by the command's parsers."""

from __future__ import annotations

import argparse
import math

OFF = ("0", "none", "off")
"""What turns a limit off on the command line."""


def amount_or_off(text: str, what: str = "a positive number") -> float | None:
    """A positive finite number, or None for 0/none/off (no limit)."""
    if text.strip().lower() in OFF:
        return None
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(
            f"expected {what}, or 0 or none for no limit, got {text!r}"
        )
    return value
