"""The final-answer tool of a typed output: the tool whose valid call is the answer.

It takes the spec structurally (`AnswerSpec`: what `agentcore.output.OutputSpec` provides), so
that `OutputSpec.tool` can build it without this module importing `agentcore.output`.
"""

from __future__ import annotations

from typing import Any, Protocol

from .._tools.validation import ArgumentsError, ArgumentsValidator
from ..abort import AbortSignal
from ..errors import OutputValidationError
from ..messages import TextContent
from ..tools import AgentTool, AgentToolResult, ToolUpdateCallback

__all__ = ["ACCEPTED", "AnswerSpec", "final_answer_tool"]


class AnswerSpec(Protocol):
    """What the final-answer tool needs of an `OutputSpec`."""

    @property
    def name(self) -> str:
        """The tool's name."""
        ...

    @property
    def object_schema(self) -> dict[str, Any]:
        """The tool's parameters: what the model fills in."""
        ...

    def validate_object(self, data: Any) -> Any:
        """The answer, validated; raises `OutputValidationError`."""
        ...


ACCEPTED = "Final answer received."
"""The result of a valid final-answer call."""


class _AnswerValidator(ArgumentsValidator):
    """The final-answer tool's arguments are validated as the answer itself."""

    __slots__ = ("_spec",)

    def __init__(self, spec: AnswerSpec) -> None:
        # No base init: the base's schema reading and coercions are not used, the spec validates.
        self._spec = spec

    def validate(self, arguments: Any) -> Any:
        try:
            return self._spec.validate_object(arguments)
        except OutputValidationError as exc:
            raise ArgumentsError(
                f"{exc}\n\nCall {self._spec.name} again with the corrected answer."
            ) from None


async def _accept(
    tool_call_id: str, args: Any, signal: AbortSignal, on_update: ToolUpdateCallback
) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=ACCEPTED)], terminate=True)


def final_answer_tool(spec: AnswerSpec, description: str) -> AgentTool:
    """The tool whose valid call is the answer (its result just acknowledges it)."""
    tool = AgentTool(
        name=spec.name, description=description, parameters=spec.object_schema, execute=_accept
    )
    tool.validator = _AnswerValidator(spec)
    return tool
