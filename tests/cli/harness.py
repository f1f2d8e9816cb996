"""Running `agentcore` in-process for the tests: `cli(...)` calls `main(argv, stdin=, stdout=,
stderr=)` and gives back the exit code and both outputs; `ref(faux)` names a faux model."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any

from agentcore.cli import main
from agentcore.testing import FauxProvider


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.splitlines()]


def ref(faux: FauxProvider) -> str:
    """The catalogue reference of `faux`'s model (the `faux` fixture registers it)."""
    return f"{faux.provider_id}/faux-1"


def cli(*argv: str, stdin: str | None = None, faux: FauxProvider | None = None) -> Result:
    """Run `agentcore` in-process (with `--model` pointing at `faux` when given)."""
    out, err = io.StringIO(), io.StringIO()
    args = list(argv)
    if faux is not None:
        args += ["--model", ref(faux)]
    code = main(
        args, stdin=io.StringIO(stdin) if stdin is not None else None, stdout=out, stderr=err
    )
    return Result(code, out.getvalue(), err.getvalue())
