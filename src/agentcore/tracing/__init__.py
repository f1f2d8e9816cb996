"""OpenTelemetry traces and metrics for agentcore runs, following the GenAI semantic conventions.

```python
from agentcore.tracing import instrument

instrument()  # every run from now on emits spans and metrics to the global providers
```

Each run is an `invoke_agent` span; each model request a `chat {model}` span under it (usage,
finish reason, time to first token, retries), each tool call an `execute_tool {tool}` span (name,
call id, error). A run started inside a tool nests under that tool's span. Spans and metrics go
to the global OpenTelemetry providers unless others are given; with none installed they cost
next to nothing, and with `instrument()` never called the loop does not call this package at all.
Needs `opentelemetry-api` only (`pip install 'agentcore-loop[otel]'`); any SDK and exporter
(Logfire, Jaeger, Honeycomb, an OTLP collector) works. `TraceTree` records the same tree without
OpenTelemetry and draws it as text (the `agentcore` command's `--trace`). See docs/tracing.md.
"""

from __future__ import annotations

import typing

from agentcore import __version__ as _VERSION
from agentcore import get_instrumentation as _get_instrumentation
from agentcore import set_instrumentation as _set_instrumentation

from ._otel import OtelInstrumentation
from ._otel import load_api as _load_api
from ._tree import SpanNode, TraceTree, usage_text

if typing.TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

__all__ = [
    "OtelInstrumentation",
    "SpanNode",
    "TraceTree",
    "instrument",
    "uninstrument",
    "usage_text",
]


def instrument(
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    capture_content: bool = False,
    agent_name: str | None = None,
) -> OtelInstrumentation:
    """Trace every run started from now on (in any thread), replacing an earlier `instrument()`.

    Args:
        tracer_provider: where spans go (default: the global one, `trace.set_tracer_provider`).
        meter_provider: where metrics go (default: the global one).
        capture_content: also record prompts, answers, tool arguments and tool results as span
            attributes (`gen_ai.input.messages`, `gen_ai.output.messages`,
            `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). Off by default: content
            may hold personal data. API keys and header values are never recorded.
        agent_name: `gen_ai.agent.name`; the run spans are then `invoke_agent {agent_name}`.

    Returns:
        The installed instrumentation.

    Raises:
        MissingExtraError: `opentelemetry-api` is not installed.
    """
    api = _load_api()
    if tracer_provider is None:
        tracer = api.trace.get_tracer("agentcore", _VERSION)
    else:
        tracer = tracer_provider.get_tracer("agentcore", _VERSION)
    if meter_provider is None:
        meter = api.metrics.get_meter("agentcore", _VERSION)
    else:
        meter = meter_provider.get_meter("agentcore", _VERSION)
    instrumentation = OtelInstrumentation(
        api, tracer, meter, capture_content=capture_content, agent_name=agent_name
    )
    _set_instrumentation(instrumentation)
    return instrumentation


def uninstrument() -> None:
    """Stop tracing runs started from now on (runs going on finish as they began)."""
    if isinstance(_get_instrumentation(), OtelInstrumentation):
        _set_instrumentation(None)
