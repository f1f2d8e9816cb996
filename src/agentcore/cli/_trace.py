"""`--trace` and the run totals of the `agentcore` command.

After each answer the command shows what it cost on stderr (`(812 in / 64 out tokens ·
$0.0031)`) when stderr is a terminal or `--trace` is given. With `--trace` it also prints the
span tree of the run (`agentcore.tracing.TraceTree`), or, when the standard
`OTEL_EXPORTER_OTLP_ENDPOINT` environment variable is set, exports the spans and metrics to that
OpenTelemetry collector over OTLP/HTTP instead (the SDK reads the other `OTEL_*` variables:
headers, service name, ...), flushing them before the command exits.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from ..messages import AgentMessage, Usage
from ._render import _is_terminal
from ._run import CommandError
from ._safe import visible

__all__ = ["Tracing", "tracing"]


class Tracing:
    """What `--trace` set up for one command, and the totals line after each answer."""

    def __init__(self, stderr: TextIO, *, trace: bool) -> None:
        self.stderr = stderr
        self.show_usage = trace or _is_terminal(stderr)
        self.tree: Any = None  # a TraceTree when the tree is printed

    def after_answer(self, added: Sequence[AgentMessage], total: Usage | None = None) -> None:
        """Show the answer's usage (and `total`, the conversation's so far), then its tree."""
        if self.show_usage:
            from agentcore import run_usage
            from agentcore.tracing import usage_text

            line = usage_text(run_usage(added))
            if total is not None:
                line += f"; conversation: {usage_text(total)}"
            self.stderr.write(f"({line})\n")
        if self.tree is not None and self.tree.roots:
            self.stderr.write(visible(self.tree.render()) + "\n")
            self.tree.clear()
        self.stderr.flush()


@contextmanager
def tracing(stderr: TextIO, *, trace: bool) -> Iterator[Tracing]:
    """Install what `--trace` asks for while the command runs (nothing without it).

    Raises:
        CommandError: OTLP export was asked for but the OpenTelemetry packages are missing.
    """
    state = Tracing(stderr, trace=trace)
    if not trace:
        yield state
        return
    from agentcore import get_instrumentation, set_instrumentation

    previous = get_instrumentation()
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        shutdown = _otlp()
        try:
            yield state
        finally:
            set_instrumentation(previous)
            shutdown()
        return
    from agentcore.tracing import TraceTree

    state.tree = TraceTree()
    set_instrumentation(state.tree)
    try:
        yield state
    finally:
        set_instrumentation(previous)


def _otlp() -> Any:
    """Instrument with an SDK exporting over OTLP/HTTP; returns the function that flushes and
    shuts the providers down."""
    try:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise CommandError(
            "--trace with OTEL_EXPORTER_OTLP_ENDPOINT set needs the OpenTelemetry SDK and its "
            f"OTLP exporter: pip install 'agentcore-loop[otlp]' ({exc})"
        ) from None
    from agentcore.tracing import instrument

    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "agentcore")})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    meter_provider = MeterProvider(
        resource=resource, metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())]
    )
    instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)

    def shutdown() -> None:
        tracer_provider.shutdown()
        meter_provider.shutdown()

    return shutdown
