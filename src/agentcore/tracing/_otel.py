"""The OpenTelemetry instrumentation: GenAI spans and metrics through `opentelemetry-api` only.

One `OtelInstrumentation` serves every run. Per run it makes an `invoke_agent` span current in
the run's task (so everything the run starts nests under it), a `chat {model}` span per request
(never current: it is closed before the tools run) and an `execute_tool {tool}` span per call,
current inside the task that runs the tool's `execute`, so a run started by a tool (an agent used
as a tool) is that span's child. Secrets never reach an attribute: retry texts are redacted by the
model layer, request options (API key, headers) are never read, and message content is recorded
only with `capture_content=True`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agentcore import (
    AgentMessage,
    AgentToolResult,
    AssistantMessage,
    LimitReached,
    RequestObserver,
    RunInfo,
    RunObserver,
    ToolCall,
    ToolObserver,
    run_usage,
)
from agentcore.guardrails import GuardrailTrip
from agentcore.llm import Context, Model

from .._optional import import_sdk
from ._content import messages_json, result_text, to_json_text

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram, Meter
    from opentelemetry.trace import Span, Tracer

__all__ = ["OtelInstrumentation", "load_api"]

SCOPE = "agentcore"


class _Api:
    """The parts of `opentelemetry-api` the observers use, imported once by `instrument()`.

    Raises:
        MissingExtraError: `opentelemetry-api` is not installed
            (`pip install 'agentcore-loop[otel]'`).
    """

    def __init__(self) -> None:
        needed_by, what = "agentcore.tracing", "the OpenTelemetry API"
        self.context = import_sdk("opentelemetry.context", "otel", needed_by=needed_by, what=what)
        self.metrics = import_sdk("opentelemetry.metrics", "otel", needed_by=needed_by, what=what)
        self.trace = trace = import_sdk(
            "opentelemetry.trace", "otel", needed_by=needed_by, what=what
        )
        self.SpanKind = trace.SpanKind
        self.Status = trace.Status
        self.StatusCode = trace.StatusCode


def load_api() -> _Api:
    """The OpenTelemetry API (raises `MissingExtraError` naming the extra when it is missing)."""
    return _Api()


class OtelInstrumentation:
    """Emits GenAI spans and metrics for every run; install it with `agentcore.tracing.instrument`.

    Args:
        api: the OpenTelemetry API modules.
        tracer: where spans go.
        meter: where metrics go.
        capture_content: record message content, tool arguments and results (off by default).
        agent_name: `gen_ai.agent.name` of the runs (the span is `invoke_agent {name}`).
    """

    def __init__(
        self,
        api: _Api,
        tracer: Tracer,
        meter: Meter,
        *,
        capture_content: bool = False,
        agent_name: str | None = None,
    ) -> None:
        self.api = api
        self.tracer = tracer
        self.capture_content = capture_content
        self.agent_name = agent_name
        self.token_usage: Histogram = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Tokens used per request"
        )
        self.duration: Histogram = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="GenAI operation duration"
        )
        self.ttft: Histogram = meter.create_histogram(
            "agentcore.request.time_to_first_token",
            unit="s",
            description="Time from sending a request to its first streamed content",
        )
        self.turns: Histogram = meter.create_histogram(
            "agentcore.run.turns", unit="{turn}", description="Model answers per run"
        )
        self.tool_duration: Histogram = meter.create_histogram(
            "agentcore.tool.duration", unit="s", description="Tool call duration"
        )

    def start_request(self, model: Model, context: Context) -> RequestObserver:
        """A `chat` span for a model request made inside a run's tool call rather than by the
        run (an MCP server's sampling): its parent is the current span, the tool's."""
        return _Request(_Owned(self), model, context)  # type: ignore[arg-type]

    def start_run(self, run: RunInfo) -> RunObserver | None:
        """Open the run's `invoke_agent` span and make it current in the run's task."""
        return _SpanRunObserver(self, run)


def _model_attributes(model: Model) -> dict[str, Any]:
    return {
        "gen_ai.provider.name": model.provider,
        "gen_ai.system": model.provider,
        "gen_ai.request.model": model.id,
    }


class _SpanRunObserver:
    __slots__ = ("api", "info", "owner", "segment", "span", "started", "token")

    def __init__(self, owner: OtelInstrumentation, info: RunInfo) -> None:
        api = owner.api
        self.owner = owner
        self.api = api
        self.info = info
        name = owner.agent_name
        attributes = {"gen_ai.operation.name": "invoke_agent", **_model_attributes(info.model)}
        if name:
            attributes["gen_ai.agent.name"] = name
        if owner.capture_content:
            if info.system_prompt:
                attributes["gen_ai.system_instructions"] = to_json_text(
                    [{"type": "text", "content": info.system_prompt}]
                )
            attributes["gen_ai.input.messages"] = messages_json(info.prompts)
        self.span: Span = owner.tracer.start_span(
            f"invoke_agent {name}" if name else "invoke_agent",
            kind=api.SpanKind.INTERNAL,
            attributes=attributes,
        )
        self.started = time.perf_counter()
        self.token = api.context.attach(api.trace.set_span_in_context(self.span))
        self.segment: tuple[Span, Any] | None = None  # after a handoff: its span and token

    def agent_switched(
        self, from_agent: str, to_agent: str, tool_call_id: str, returns: bool
    ) -> None:
        """A handoff: the next agent's segment is an `invoke_agent {to_agent}` span inside the
        run's (the run's own span is the first agent's segment), current until the next switch
        or the run's end."""
        api = self.api
        self._end_segment()
        span = self.owner.tracer.start_span(
            f"invoke_agent {to_agent}",
            kind=api.SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": to_agent,
                "agentcore.handoff.from_agent": from_agent,
                "agentcore.handoff.tool_call_id": tool_call_id,
                "agentcore.handoff.returns": returns,
            },
        )
        self.segment = (span, api.context.attach(api.trace.set_span_in_context(span)))

    def _end_segment(self) -> None:
        segment = self.segment
        if segment is not None:
            self.segment = None
            span, token = segment
            span.end()
            self.api.context.detach(token)

    def start_request(self, model: Model, context: Context) -> RequestObserver | None:
        return _Request(self, model, context)

    def start_tool(self, call: ToolCall) -> ToolObserver | None:
        return _Tool(self, call)

    def guardrail_tripped(self, trip: GuardrailTrip) -> None:
        """The run's span records the guardrail that ended it: attributes and an event."""
        self.span.set_attribute("agentcore.guardrail", trip.guardrail)
        self.span.set_attribute("agentcore.guardrail.kind", trip.kind)
        self.span.add_event(
            "agentcore.guardrail_tripped",
            {
                "agentcore.guardrail": trip.guardrail,
                "agentcore.guardrail.kind": trip.kind,
                "agentcore.guardrail.reason": trip.reason,
                "agentcore.guardrail.failed": trip.failed,
            },
        )

    def end_run(
        self,
        messages: Sequence[AgentMessage],
        limit: LimitReached | None,
        error: BaseException | None,
    ) -> None:
        api = self.api
        span = self.span
        owner = self.owner
        self._end_segment()  # the last agent's segment, if a handoff opened one
        try:
            answers = [m for m in messages if isinstance(m, AssistantMessage)]
            usage = run_usage(messages)
            span.set_attribute(
                "gen_ai.usage.input_tokens", usage.input + usage.cache_read + usage.cache_write
            )
            span.set_attribute("gen_ai.usage.output_tokens", usage.output)
            span.set_attribute("agentcore.usage.cost", usage.cost.total)
            span.set_attribute("agentcore.turns", len(answers))
            last = answers[-1] if answers else None
            if last is not None:
                span.set_attribute("gen_ai.response.finish_reasons", [last.stop_reason])
                if owner.capture_content:
                    span.set_attribute("gen_ai.output.messages", messages_json([last]))
            if limit is not None:
                span.set_attribute("agentcore.limit", limit.kind)
            error_type: str | None = None
            if error is not None:
                error_type = type(error).__qualname__
                span.record_exception(error)
                span.set_status(api.Status(api.StatusCode.ERROR, error_type))
            elif self.info.signal.aborted:  # also an abort during tools (no aborted answer)
                error_type = "aborted"
                span.set_status(api.Status(api.StatusCode.ERROR, "aborted"))
            elif last is not None and last.stop_reason in ("error", "aborted"):
                error_type = "aborted" if last.stop_reason == "aborted" else "error"
                span.set_status(api.Status(api.StatusCode.ERROR, last.error_message or error_type))
            if error_type is not None:
                span.set_attribute("error.type", error_type)
            attributes = {
                "gen_ai.operation.name": "invoke_agent",
                **_model_attributes(self.info.model),
            }
            owner.turns.record(len(answers), attributes)
            if error_type is not None:
                attributes["error.type"] = error_type
            owner.duration.record(time.perf_counter() - self.started, attributes)
        finally:
            span.end()
            api.context.detach(self.token)


class _Owned:
    """What a `_Request` needs of a run (its instrumentation and the API), for a request
    outside a run's own (`OtelInstrumentation.start_request`)."""

    __slots__ = ("api", "owner")

    def __init__(self, owner: OtelInstrumentation) -> None:
        self.owner = owner
        self.api = owner.api


class _Request:
    __slots__ = ("attributes", "first", "model", "retries", "run", "span", "started")

    def __init__(self, run: _SpanRunObserver, model: Model, context: Context) -> None:
        owner = run.owner
        self.run = run
        self.model = model
        self.attributes = {"gen_ai.operation.name": "chat", **_model_attributes(model)}
        attributes: dict[str, Any] = dict(self.attributes)
        if owner.capture_content:
            if context.system_prompt:
                attributes["gen_ai.system_instructions"] = to_json_text(
                    [{"type": "text", "content": context.system_prompt}]
                )
            attributes["gen_ai.input.messages"] = messages_json(context.messages)
        # Parent: the current span of the run's task, which is the run's own.
        self.span: Span = owner.tracer.start_span(
            f"chat {model.id}", kind=run.api.SpanKind.CLIENT, attributes=attributes
        )
        self.started = time.perf_counter()
        self.first: float | None = None
        self.retries = 0

    def on_retry(self, attempt: int, error: str, delay: float) -> None:
        self.retries += 1
        self.span.add_event(
            "retry", {"attempt": attempt, "error": error, "agentcore.retry.delay": delay}
        )

    def on_first_event(self) -> None:
        self.first = time.perf_counter()

    def end_request(self, message: AssistantMessage | None, error: BaseException | None) -> None:
        run = self.run
        api = run.api
        owner = run.owner
        span = self.span
        attributes = dict(self.attributes)
        try:
            span.set_attribute("agentcore.retries", self.retries)
            if self.first is not None:
                ttft = self.first - self.started
                span.set_attribute("agentcore.time_to_first_token", ttft)
                owner.ttft.record(ttft, attributes)
            error_type: str | None = None
            if message is not None:
                usage = message.usage
                span.set_attribute("gen_ai.response.model", message.model)
                attributes["gen_ai.response.model"] = message.model
                span.set_attribute("gen_ai.response.finish_reasons", [message.stop_reason])
                tokens_in = usage.input + usage.cache_read + usage.cache_write
                span.set_attribute("gen_ai.usage.input_tokens", tokens_in)
                span.set_attribute("gen_ai.usage.output_tokens", usage.output)
                if usage.cache_read:
                    span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cache_read)
                if usage.cache_write:
                    span.set_attribute(
                        "gen_ai.usage.cache_creation.input_tokens", usage.cache_write
                    )
                span.set_attribute("agentcore.usage.cost", usage.cost.total)
                owner.token_usage.record(tokens_in, {**attributes, "gen_ai.token.type": "input"})
                owner.token_usage.record(
                    usage.output, {**attributes, "gen_ai.token.type": "output"}
                )
                if owner.capture_content:
                    span.set_attribute("gen_ai.output.messages", messages_json([message]))
                if message.stop_reason in ("error", "aborted"):
                    error_type = "aborted" if message.stop_reason == "aborted" else "error"
                    # the error text is redacted by the model layer (no key, no header value)
                    span.set_status(
                        api.Status(api.StatusCode.ERROR, message.error_message or error_type)
                    )
            if error is not None:
                error_type = type(error).__qualname__
                span.record_exception(error)
                span.set_status(api.Status(api.StatusCode.ERROR, error_type))
            if error_type is not None:
                span.set_attribute("error.type", error_type)
                attributes["error.type"] = error_type
            owner.duration.record(time.perf_counter() - self.started, attributes)
        finally:
            span.end()


class _Tool:
    __slots__ = ("attributes", "call", "run", "span", "started")

    def __init__(self, run: _SpanRunObserver, call: ToolCall) -> None:
        owner = run.owner
        self.run = run
        self.call = call
        self.attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name}
        attributes: dict[str, Any] = {
            **self.attributes,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
        }
        if owner.capture_content:
            attributes["gen_ai.tool.call.arguments"] = to_json_text(call.arguments)
        self.span: Span = owner.tracer.start_span(
            f"execute_tool {call.name}", kind=run.api.SpanKind.INTERNAL, attributes=attributes
        )
        self.started = time.perf_counter()

    @contextmanager
    def _current(self) -> Iterator[object]:
        api = self.run.api
        token = api.context.attach(api.trace.set_span_in_context(self.span))
        try:
            yield self.span
        finally:
            api.context.detach(token)

    def executing(self) -> Any:
        return self._current()

    def end_tool(
        self, result: AgentToolResult, is_error: bool, error: BaseException | None
    ) -> None:
        run = self.run
        api = run.api
        owner = run.owner
        span = self.span
        attributes = dict(self.attributes)
        try:
            if owner.capture_content:
                span.set_attribute("gen_ai.tool.call.result", result_text(result))
            if is_error:
                if error is not None:
                    error_type = type(error).__qualname__
                    span.record_exception(error)
                elif run.info.signal.aborted:
                    error_type = "aborted"
                else:
                    error_type = "tool_error"
                span.set_attribute("error.type", error_type)
                span.set_status(api.Status(api.StatusCode.ERROR, error_type))
                attributes["error.type"] = error_type
            owner.tool_duration.record(time.perf_counter() - self.started, attributes)
        finally:
            span.end()
