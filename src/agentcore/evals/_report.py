"""Reports saved as JSON, loaded back, and compared with a baseline: `find_regressions`.

A report is saved with pydantic-evals' own `EvaluationReportAdapter`, so a saved file loads back
as an `EvaluationReport` (typed outputs become JSON values) that `report.print(baseline=...)`
can diff against. A regression is a case that got worse than in the baseline: an assertion that
passed and now fails (or is gone), a score lower by more than the tolerance, a case that ran and
now fails with an error, or a case of the baseline that was not run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from ._deps import Dataset, EvaluationReport, EvaluationReportAdapter

__all__ = ["Regression", "find_regressions", "load_dataset", "load_report", "save_report"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Regression:
    """One way a case got worse than in the baseline.

    Attributes:
        case: the case's name.
        kind: `assertion` (passed, now fails or is missing), `score` (lower by more than the
            tolerance), `failure` (the task now raises) or `missing` (the case was not run).
        name: the assertion's or score's name (empty for `failure` and `missing`).
        before: the baseline's value.
        after: the new value (None when there is none).
    """

    case: str
    kind: Literal["assertion", "score", "failure", "missing"]
    name: str = ""
    before: Any = None
    after: Any = None

    def __str__(self) -> str:
        if self.kind == "missing":
            return f"{self.case}: in the baseline, not run"
        if self.kind == "failure":
            return f"{self.case}: the task failed: {self.after}"
        return f"{self.case}: {self.kind} {self.name}: {self.before!r} -> {self.after!r}"


def load_dataset(path: str | Path) -> Dataset[Any, Any, Any]:
    """Read a pydantic-evals dataset file (`.yaml`, `.yml` or `.json`) with agentcore's
    evaluators (`EVALUATORS`) known besides pydantic-evals' own.

    Raises:
        ValueError: the file is missing, is not YAML or JSON, or does not fit the dataset
            schema; the message names the file and the problem (the YAML error and its line,
            the failing fields, an unknown evaluator with the known ones).
    """
    from ._evaluators import EVALUATORS

    file = Path(path)
    if not file.is_file():
        raise ValueError(f"no such dataset file: {path}")
    if file.suffix.lower() not in (".yaml", ".yml", ".json"):
        raise ValueError(f"the dataset {path} must be a .yaml, .yml or .json file")
    try:
        return Dataset[Any, Any, Any].from_file(file, custom_evaluator_types=EVALUATORS)
    except Exception as exc:  # YAML, JSON, schema and unknown-evaluator errors alike
        raise ValueError(f"the dataset {path} cannot be used: {_problem(exc)}") from None


def _problem(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):  # pydantic-evals gathers evaluator errors
        return "; ".join(_problem(inner) for inner in exc.exceptions)
    if isinstance(exc.__cause__, ValidationError):  # pydantic-evals wraps the schema's errors
        exc = exc.__cause__
    if isinstance(exc, ValidationError):
        lines = []
        for error in exc.errors()[:5]:
            where = ".".join(str(p) for p in error["loc"]) or "the top level"
            lines.append(f"{where}: {error['msg']}")
        return "; ".join(lines)
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())


def save_report(report: EvaluationReport[Any, Any, Any], path: str | Path) -> None:
    """Write `report` to `path` as JSON (pydantic-evals' own report schema)."""
    data = EvaluationReportAdapter.dump_json(report, indent=2, fallback=repr)
    Path(path).write_bytes(data + b"\n")


def load_report(path: str | Path) -> EvaluationReport[Any, Any, Any]:
    """Read a report `save_report` (or `agentcore eval --json`) wrote.

    Raises:
        ValueError: the file cannot be read or is not such a report; the message names the file
            and what is wrong.
    """
    try:
        text = Path(path).read_text("utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read the report {str(path)!r}: {exc.strerror or exc}") from None
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the report {str(path)!r} is not JSON: {exc}") from None
    try:
        return EvaluationReportAdapter.validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the top level"
        raise ValueError(
            f"the report {str(path)!r} is not an evaluation report (as `agentcore eval --json` "
            f"writes): {where}: {first['msg']}"
        ) from None


def find_regressions(
    report: EvaluationReport[Any, Any, Any],
    baseline: EvaluationReport[Any, Any, Any],
    *,
    tolerance: float = 0.0,
) -> list[Regression]:
    """The ways `report`'s cases got worse than `baseline`'s, case by case (by name).

    Args:
        report: the new report.
        baseline: the report to compare with.
        tolerance: how much lower a score may be before it counts.
    """
    now = {case.name: case for case in report.cases}
    failed = {failure.name: failure for failure in report.failures}
    found: list[Regression] = []
    for before in baseline.cases:
        name = before.name
        if name in failed:
            found.append(Regression(case=name, kind="failure", after=failed[name].error_message))
            continue
        after = now.get(name)
        if after is None:
            found.append(Regression(case=name, kind="missing"))
            continue
        for key, result in before.assertions.items():
            new = after.assertions.get(key)
            if result.value is True and (new is None or new.value is not True):
                found.append(
                    Regression(
                        case=name,
                        kind="assertion",
                        name=key,
                        before=True,
                        after=None if new is None else new.value,
                    )
                )
        for key, score in before.scores.items():
            new_score = after.scores.get(key)
            if new_score is None or new_score.value < score.value - tolerance:
                found.append(
                    Regression(
                        case=name,
                        kind="score",
                        name=key,
                        before=score.value,
                        after=None if new_score is None else new_score.value,
                    )
                )
    return found
