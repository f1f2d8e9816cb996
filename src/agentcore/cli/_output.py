"""`run --output-schema FILE`: the answer type read from the file, and the validated value written
on stdout (the answer's text then goes to stderr, so that stdout holds only the JSON value)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..events import AgentEvent
from ..output import OutputSpec
from ._render import Writable
from ._run import EXIT_FAILED, EXIT_OK, CommandError, write_error
from ._safe import json_text

__all__ = ["AnswerWatch", "output_spec"]


def output_spec(path: str) -> OutputSpec[Any]:
    """The answer type of `run --output-schema FILE`.

    Raises:
        CommandError: (exit code 2) the file cannot be read, is not JSON, or is not a JSON
            Schema object.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CommandError(f"cannot read --output-schema {path}: {reason}") from None
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"--output-schema {path} is not JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise CommandError(
            f"--output-schema {path} must hold a JSON Schema object, got a {type(schema).__name__}"
        )
    try:
        return OutputSpec(schema)
    except ConfigError as exc:
        raise CommandError(f"--output-schema {path}: {exc}") from None


class AnswerWatch:
    """A sink in front of another that keeps the run's answer (from its `agent_end`)."""

    def __init__(self, sink: Callable[[AgentEvent], None]) -> None:
        self._sink = sink
        self.output: Any = None

    def __call__(self, event: AgentEvent) -> None:
        if event.type == "agent_end":
            self.output = event.output
        self._sink(event)

    def finish(self, code: int, stdout: Writable, stderr: Any, *, json_mode: bool) -> int:
        """Write the answer of a run that succeeded; returns the exit code.

        A run that ended normally without a valid answer is a failure. With `--json` the value
        is already in the `agent_end` line."""
        if code != EXIT_OK:
            return code
        if self.output is None:
            write_error(stderr, "the run ended without a valid answer")
            return EXIT_FAILED
        if not json_mode:
            stdout.write(json_text(self.output) + "\n")
            stdout.flush()
        return code
