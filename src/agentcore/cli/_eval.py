"""`agentcore eval DATASET --agent MODULE:FACTORY`: a dataset run against an agent, its report.

The dataset is read by pydantic-evals (`Dataset.from_file`, YAML or JSON) with agentcore's
evaluators registered; each case runs a fresh agent from the factory (`agentcore.evals.agent_task`,
typed outputs as JSON values so that they compare with the file's expected outputs), at most
`--concurrency` at a time, each within `--timeout`. The report is printed on stdout, optionally
saved (`--json FILE`) and compared with a saved one (`--baseline FILE`): a case that got worse is
a regression, listed on stderr, and the exit code is 1. `--record`/`--replay` (docs/recording.md)
wrap the whole command, as for `run`.

`--batch` sends every case's request (the one the agent loop would send first) in one provider
batch and evaluates the answers (`agentcore.evals.batch_evaluate`); the line after the report says
what the batch cost at batch prices against streaming the same usage. A model whose provider has
no batch API is an error before anything is sent.

What the dataset, the agent and the evaluators wrote (case names, inputs, outputs, reasons,
errors) goes through `visible` before it is printed, as in every other renderer: an escape
sequence in a case name shows as `\\x1b[...`, it does not clear the screen or set the title.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import anyio

from ..errors import AgentCoreError
from ..llm.registry import StreamFn
from ._eval_args import EvalOptions
from ._run import EXIT_FAILED, EXIT_OK, CommandError, resolve_model
from ._safe import visible

__all__ = ["eval_command"]


def _load_factory(ref: str) -> Callable[..., Any]:
    module_ref, sep, name = ref.rpartition(":")
    if not sep or not module_ref or not name:
        raise CommandError(
            f"--agent: expected MODULE:FACTORY (e.g. my_agents:make_agent), got {ref!r}"
        )
    if module_ref.endswith(".py") or "/" in module_ref:
        path = Path(module_ref)
        if not path.is_file():
            raise CommandError(f"--agent: no such file: {module_ref}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise CommandError(f"--agent: cannot load {module_ref} as a module")
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault(path.stem, module)
        sys.path.insert(0, str(path.resolve().parent))  # its siblings import as in a script
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise CommandError(f"--agent: importing {module_ref} failed: {exc!r}") from None
    else:
        if "" not in sys.path:
            sys.path.insert(0, "")  # the current directory, as `python -m` has it
        try:
            module = importlib.import_module(module_ref)
        except ImportError as exc:
            raise CommandError(f"--agent: cannot import {module_ref!r}: {exc}") from None
    factory = getattr(module, name, None)
    if not callable(factory):
        raise CommandError(f"--agent: {module_ref} has no function {name!r}")
    return factory  # type: ignore[no-any-return]


def _load_dataset(path: str) -> Any:
    from ..evals import load_dataset

    try:
        return load_dataset(path)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _timed(
    task: Callable[[Any], Awaitable[Any]], timeout: float | None, done: Callable[[], None]
) -> Callable[[Any], Awaitable[Any]]:
    async def run_case(inputs: Any) -> Any:
        try:
            if timeout is None:
                return await task(inputs)
            with anyio.fail_after(timeout):
                return await task(inputs)
        except TimeoutError:
            raise TimeoutError(f"the case took longer than --timeout {timeout:g} s") from None
        finally:
            done()

    run_case.__name__ = getattr(task, "__name__", "agent")
    return run_case


_SHOWN_DEPTH = 100  # levels of a value escaped item by item; deeper, shown as one text
_REPORT_MODULES = ("pydantic_evals.reporting", "pydantic_evals.evaluators")


def _shown(value: Any, depth: int = 0) -> Any:
    """A report (or any value in it) with every text made `visible`: strings, the keys and
    values of dicts, the items of lists, the fields of pydantic-evals' report dataclasses
    (an evaluator's `source` is left as it is: it is not shown)."""
    if isinstance(value, str):
        return visible(value)
    if depth >= _SHOWN_DEPTH:
        return visible(str(value))
    if isinstance(value, dict):
        return {_shown(k, depth + 1): _shown(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_shown(v, depth + 1) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and type(value).__module__.startswith(_REPORT_MODULES)
    ):
        changes = {
            f.name: _shown(getattr(value, f.name), depth + 1)
            for f in dataclasses.fields(value)
            if f.init and f.name != "source"
        }
        return dataclasses.replace(value, **changes)
    return value


async def eval_command(
    options: EvalOptions,
    *,
    model_ref: str,
    model_given: bool,
    stream_fn: StreamFn | None,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Run `agentcore eval`; returns the exit code.

    Raises:
        CommandError: the dataset, the agent, the model or a report cannot be used.
    """
    try:
        from ..evals import find_regressions, load_report, save_report, trace_spans
    except AgentCoreError as exc:  # the [evals] extra is not installed
        raise CommandError(str(exc)) from None
    try:
        from rich.console import Console
        from rich.progress import Progress
    except ImportError:
        raise CommandError(
            "agentcore eval needs rich, which is not installed: pip install 'agentcore-loop[evals]'"
        ) from None

    dataset = _load_dataset(options.dataset)
    baseline = None
    if options.baseline is not None:
        try:
            baseline = load_report(options.baseline)
        except ValueError as exc:
            raise CommandError(f"--baseline: {exc}") from None
    factory = _load_factory(options.agent)
    # the factory gets the model it asks for; checked up front only when it was named
    model = resolve_model(model_ref, stream_fn=stream_fn, check=model_given)
    try:
        trace_spans(capture_content=options.trace_content)
    except AgentCoreError as exc:  # opentelemetry-sdk is missing
        raise CommandError(str(exc)) from None
    cost = None
    if options.batch:
        report, cost = await _batched(options, dataset, factory, model, stderr)
    else:
        bar = Progress, Console  # (checked above: a plain install gets the CommandError)
        report = await _streamed(options, dataset, factory, model, stream_fn, stderr, bar)
    width = None if stdout.isatty() else 120
    console = Console(file=stdout, width=width, color_system="auto" if stdout.isatty() else None)
    _shown(report).print(
        baseline=None if baseline is None else _shown(baseline),
        console=console,
        include_output=options.include_output,
        include_reasons=True,
        include_removed_cases=baseline is not None,
    )
    if cost is not None:
        stdout.write(visible(str(cost)) + "\n")
    if options.json_report is not None:
        try:
            save_report(report, options.json_report)
        except OSError as exc:
            raise CommandError(f"--json: cannot write {options.json_report}: {exc}") from None
    if baseline is None:
        return EXIT_OK
    found = find_regressions(report, baseline, tolerance=options.tolerance)
    for regression in found:
        stderr.write(f"regression: {visible(str(regression))}\n")
    if found:
        stderr.write(f"{len(found)} regression(s) against {options.baseline}\n")
        return EXIT_FAILED
    stderr.write(f"no regression against {options.baseline}\n")
    return EXIT_OK


async def _streamed(
    options: EvalOptions,
    dataset: Any,
    factory: Callable[..., Any],
    model: Any,
    stream_fn: StreamFn | None,
    stderr: TextIO,
    bar_types: tuple[Any, Any],
) -> Any:
    from ..evals import agent_task

    Progress, Console = bar_types  # (rich's classes, imported by the caller)

    task = agent_task(factory, model=model, stream_fn=stream_fn, json_answers=True)
    show = options.progress if options.progress is not None else stderr.isatty()
    total = len(dataset.cases) * options.repeat
    # --progress on a stream that is not a terminal still draws the bar (rich would not)
    bar_console = Console(file=stderr, force_terminal=True if options.progress else None)
    progress = Progress(console=bar_console, transient=True, disable=not show)
    bar = progress.add_task(visible(f"{dataset.name or options.dataset}"), total=total)
    with progress:
        return await dataset.evaluate(
            _timed(task, options.timeout, lambda: progress.advance(bar)),
            name=options.name or options.agent,
            max_concurrency=options.concurrency,
            progress=False,
            repeat=options.repeat,
        )


async def _batched(
    options: EvalOptions, dataset: Any, factory: Callable[..., Any], model: Any, stderr: TextIO
) -> tuple[Any, Any]:
    from ..evals import batch_evaluate
    from ..llm.batch import BatchTimeoutError

    def submitted(job: Any) -> None:
        stderr.write(
            visible(
                f"batch {job.id}: {len(job.ids)} requests submitted to {job.provider}/"
                f"{job.model}, waiting (at most {options.batch_timeout:g} s)"
            )
            + "\n"
        )
        stderr.flush()

    try:
        return await batch_evaluate(
            dataset,
            factory,
            model=model,
            name=options.name or options.agent,
            repeat=options.repeat,
            timeout=options.batch_timeout,
            poll_interval=options.poll_interval,
            max_concurrency=options.concurrency,
            on_submitted=submitted,
        )
    except BatchTimeoutError as exc:
        raise CommandError(f"--batch: {exc}", exit_code=EXIT_FAILED) from None
    except AgentCoreError as exc:  # no batch API, typed or guarded agents, several models
        raise CommandError(str(exc)) from None
