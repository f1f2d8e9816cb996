"""Fixtures of the tracing tests: the OpenTelemetry SDK's in-memory span exporter and metric
reader behind `agentcore.tracing.instrument()`, removed again after each test (the helpers are in
`support.tracing`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentcore import set_instrumentation
from support.tracing import Traces, make_traces


@pytest.fixture
def traces() -> Iterator[Traces]:
    """Runs of this test are traced into memory (content capture off)."""
    yield make_traces()
    set_instrumentation(None)


@pytest.fixture
def content_traces() -> Iterator[Traces]:
    """Runs of this test are traced into memory, with content capture on."""
    yield make_traces(capture_content=True)
    set_instrumentation(None)
