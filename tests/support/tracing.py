"""Helpers of the tracing tests: the OpenTelemetry SDK's in-memory span exporter and metric reader
behind `agentcore.tracing.instrument()` (the fixtures in `tests/tracing/conftest.py` use them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentcore.tracing import instrument

__all__ = ["Traces", "make_traces", "tree"]


@dataclass
class Traces:
    """What the instrumented runs of a test exported."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    provider: TracerProvider

    @property
    def spans(self) -> list[ReadableSpan]:
        """Finished spans, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        """The spans whose name starts with `prefix`, in start order."""
        found = [s for s in self.spans if s.name.startswith(prefix)]
        return sorted(found, key=lambda s: s.start_time or 0)

    def one(self, prefix: str) -> ReadableSpan:
        (span,) = self.named(prefix)
        return span

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        """The spans whose parent is `parent`, in start order."""
        pid = parent.context.span_id  # type: ignore[union-attr]
        found = [s for s in self.spans if s.parent is not None and s.parent.span_id == pid]
        return sorted(found, key=lambda s: s.start_time or 0)

    def metrics(self) -> dict[str, list[Any]]:
        """Metric name: its data points."""
        data = self.reader.get_metrics_data()
        out: dict[str, list[Any]] = {}
        if data is None:
            return out
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out.setdefault(metric.name, []).extend(metric.data.data_points)
        return out


def tree(traces: Traces) -> list[str]:
    """The span tree as indented names (children in start order)."""
    lines: list[str] = []
    ids = {s.context.span_id for s in traces.spans}  # type: ignore[union-attr]

    def walk(span: ReadableSpan, depth: int) -> None:
        lines.append("  " * depth + span.name)
        for child in traces.children(span):
            walk(child, depth + 1)

    roots = [s for s in traces.spans if s.parent is None or s.parent.span_id not in ids]
    for root in sorted(roots, key=lambda s: s.start_time or 0):
        walk(root, 0)
    return lines


def make_traces(**options: Any) -> Traces:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    instrument(
        tracer_provider=provider, meter_provider=MeterProvider(metric_readers=[reader]), **options
    )
    return Traces(exporter, reader, provider)
