"""What agentcore.evals uses of pydantic-evals, imported through `import_sdk` (the `[evals]`
extra) so that a missing install is an error naming the extra; the type checker reads the real
imports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._optional import import_sdk

__all__ = [
    "CaseLifecycle",
    "Dataset",
    "EvaluationReason",
    "EvaluationReport",
    "EvaluationReportAdapter",
    "Evaluator",
    "EvaluatorContext",
    "increment_eval_metric",
    "set_eval_attribute",
]

if TYPE_CHECKING:
    from pydantic_evals import Dataset
    from pydantic_evals.dataset import increment_eval_metric, set_eval_attribute
    from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext
    from pydantic_evals.lifecycle import CaseLifecycle
    from pydantic_evals.reporting import EvaluationReport, EvaluationReportAdapter
else:
    _by = "agentcore.evals"
    _dataset = import_sdk("pydantic_evals.dataset", "evals", needed_by=_by)
    _evaluators = import_sdk("pydantic_evals.evaluators", "evals", needed_by=_by)
    _reporting = import_sdk("pydantic_evals.reporting", "evals", needed_by=_by)
    CaseLifecycle = import_sdk("pydantic_evals.lifecycle", "evals", needed_by=_by).CaseLifecycle
    Dataset = _dataset.Dataset
    increment_eval_metric = _dataset.increment_eval_metric
    set_eval_attribute = _dataset.set_eval_attribute
    EvaluationReason = _evaluators.EvaluationReason
    Evaluator = _evaluators.Evaluator
    EvaluatorContext = _evaluators.EvaluatorContext
    EvaluationReport = _reporting.EvaluationReport
    EvaluationReportAdapter = _reporting.EvaluationReportAdapter
