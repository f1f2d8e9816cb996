"""Guardrails: checks on a run's input, its final answer and its tool calls, each returning a
value (`Pass`, `Block(reason)`, `Rewrite(value)`).

Give them to `AgentLoopConfig(guardrails=[...])` or `Agent(guardrails=[...])`. A blocked input or
output ends the run as data (`agent_end.guardrail`, `EventStream.guardrail`,
`AgentState.guardrail`, a `GuardrailTrip`), never as an exception; a blocked tool call gets an
error result. A guardrail runs `"before"` its step (blocking) or `"alongside"` it (the step is
aborted when it blocks). See docs/guardrails.md.

```python
from agentcore.guardrails import Block, input_guardrail


@input_guardrail
def no_secrets(ctx):
    return Block("asks for a secret") if "password" in ctx.text.lower() else None
```
"""

from __future__ import annotations

from ._builtin import (
    PII_KINDS,
    luhn_valid,
    max_input_size,
    model_check,
    pii_redactor,
    redact_pii,
    tool_result_marker,
)
from ._trip import GuardrailKind, GuardrailTrip
from ._values import (
    DEFAULT_GUARDRAIL_TIMEOUT,
    PASS,
    Block,
    Guardrail,
    GuardrailCheck,
    GuardrailMode,
    GuardrailResult,
    InputGuardrailContext,
    OutputGuardrailContext,
    Pass,
    Rewrite,
    ToolCallGuardrailContext,
    ToolResultGuardrailContext,
    input_guardrail,
    output_guardrail,
    tool_guardrail,
)

__all__ = [
    "DEFAULT_GUARDRAIL_TIMEOUT",
    "PASS",
    "PII_KINDS",
    "Block",
    "Guardrail",
    "GuardrailCheck",
    "GuardrailKind",
    "GuardrailMode",
    "GuardrailResult",
    "GuardrailTrip",
    "InputGuardrailContext",
    "OutputGuardrailContext",
    "Pass",
    "Rewrite",
    "ToolCallGuardrailContext",
    "ToolResultGuardrailContext",
    "input_guardrail",
    "luhn_valid",
    "max_input_size",
    "model_check",
    "output_guardrail",
    "pii_redactor",
    "redact_pii",
    "tool_guardrail",
    "tool_result_marker",
]
