"""Over the wire: the standard OTLP/HTTP exporter sends a run's spans to a receiver on
127.0.0.1 that decodes the protobuf. And the `agentcore` command's `--trace`: a span tree and
the run's totals on stderr, or OTLP export when `OTEL_EXPORTER_OTLP_ENDPOINT` is set."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agentcore import AgentContext, AgentToolResult, get_instrumentation, set_instrumentation
from agentcore.cli import main
from agentcore.llm import register_model
from agentcore.testing import FauxProvider, faux_error, faux_text, faux_tool_call
from agentcore.tracing import instrument
from support import make_tool, run

from .otlp_receiver import OtlpReceiver

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("AGENTCORE_MODEL", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME"):
        monkeypatch.delenv(name, raising=False)
    yield
    set_instrumentation(None)


async def _echo(tool_call_id: str, args: object, signal: object, on_update: object) -> object:
    return AgentToolResult.text("echoed")


async def test_spans_reach_an_otlp_receiver_over_http() -> None:
    with OtlpReceiver() as receiver:
        provider = TracerProvider()
        exporter = OTLPSpanExporter(
            endpoint=f"{receiver.endpoint}/v1/traces", headers={"x-collector-token": "T0KEN"}
        )
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        instrument(tracer_provider=provider)
        faux = FauxProvider([faux_tool_call("echo", {}), faux_text("done")])
        await run("hi", AgentContext(tools=[make_tool("echo", _echo)]), faux=faux)
        provider.shutdown()
    names = sorted(s.name for s in receiver.spans)
    model = faux.model.id
    assert names == sorted(["invoke_agent", f"chat {model}", "execute_tool echo", f"chat {model}"])
    (agent,) = [s for s in receiver.spans if s.name == "invoke_agent"]
    for span in receiver.spans:
        assert span.trace_id == agent.trace_id
        if span is not agent:
            assert span.parent_span_id == agent.span_id
    (tool_span,) = [s for s in receiver.spans if s.name == "execute_tool echo"]
    assert tool_span.attributes["gen_ai.tool.name"] == "echo"
    chat = next(s for s in receiver.spans if s.name.startswith("chat"))
    assert chat.attributes["gen_ai.response.finish_reasons"] in (("tool_use",), ("stop",))
    assert receiver.paths == ["/v1/traces"] * 4
    assert receiver.headers[0]["x-collector-token"] == "T0KEN"  # the exporter's own headers


def _cli(*argv: str, faux: FauxProvider, stdin: str | None = None) -> tuple[int, str, str]:
    register_model(faux.model)
    out, err = io.StringIO(), io.StringIO()
    args = [*argv, "--model", f"{faux.provider_id}/faux-1"]
    code = main(
        args, stdin=io.StringIO(stdin) if stdin is not None else None, stdout=out, stderr=err
    )
    return code, out.getvalue(), err.getvalue()


def test_run_trace_prints_the_span_tree_and_the_total() -> None:
    faux = FauxProvider(
        [faux_tool_call("calculator", {"expression": "6*7"}), faux_text("It is 42.")]
    )
    code, out, err = _cli("run", "what is 6*7?", "--tools", "--trace", faux=faux)
    assert code == 0, err
    assert out == "It is 42.\n"
    lines = err.splitlines()
    assert lines[:3] == ['[tool] calculator {"expression": "6*7"}', "[calculator ok]", "  6*7 = 42"]
    lines = lines[3:]
    assert re.fullmatch(r"\(\d+ in / \d+ out tokens\)", lines[0]), lines
    assert re.fullmatch(r"invoke_agent  \d+\.\d{3} s  2 turns · \d+ in / \d+ out tokens", lines[1])
    assert re.fullmatch(
        r"├─ chat faux-1  \d+\.\d{3} s  ttft \d+\.\d{3} s · tool_use · .*", lines[2]
    )
    assert re.fullmatch(r"├─ execute_tool calculator  \d+\.\d{3} s", lines[3]), lines[3]
    assert re.fullmatch(r"└─ chat faux-1  \d+\.\d{3} s  ttft .* · stop · .*", lines[4])
    assert len(lines) == 5
    assert get_instrumentation() is None  # removed when the command ends


def test_run_without_trace_to_a_pipe_prints_no_total() -> None:
    code, out, err = _cli("run", "hi", faux=FauxProvider([faux_text("hello")]))
    assert (code, out, err) == (0, "hello\n", "")


def test_a_failed_run_with_trace_still_prints_its_tree() -> None:
    code, _, err = _cli("run", "hi", "--trace", faux=FauxProvider([faux_error("it broke")]))
    assert code == 1
    assert re.search(r"└─ chat faux-1  \d+\.\d{3} s  error · ", err), err
    assert err.endswith("agentcore: error: it broke\n")


def test_chat_trace_shows_each_answer_and_the_conversation_total() -> None:
    faux = FauxProvider([faux_text("one"), faux_text("two")])
    code, _out, err = _cli("chat", "--trace", faux=faux, stdin="first\nsecond\n")
    assert code == 0, err
    totals = [line for line in err.splitlines() if line.startswith("(")]
    assert len(totals) == 2 and all("; conversation: " in t for t in totals)
    assert err.count("invoke_agent") == 2


def test_run_trace_exports_over_otlp_when_the_endpoint_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    faux = FauxProvider([faux_tool_call("calculator", {"expression": "1+1"}), faux_text("2")])
    with OtlpReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "my-agent")
        code, _out, err = _cli("run", "1+1?", "--tools", "--trace", faux=faux)
    assert code == 0, err
    assert "invoke_agent" not in err  # exported, not printed
    names = sorted(s.name for s in receiver.spans)
    assert names == ["chat faux-1", "chat faux-1", "execute_tool calculator", "invoke_agent"]
    assert {s.service for s in receiver.spans} == {"my-agent"}
    assert {"gen_ai.client.token.usage", "gen_ai.client.operation.duration"} <= (
        receiver.metric_names
    )
