"""The loop's side of typed outputs: what each request is sent, and what each turn decided.

A run with an `output_type` has a `TypedRun`. Before each request it picks the mode (the spec's,
or for `auto`: native when `Model.structured_output` is true and the request offers no tools of
the run's own, else the tool) and either adds the final-answer tool to the request (and to the
tools the batch can run) or sets `StreamOptions.output_schema`.

After each turn it reads the answer:

- a final-answer call whose result is not an error is the answer: the run ends after this turn
  (the other calls of the batch ran as usual, each with its result); queued messages stay queued;
- final-answer calls that all failed (invalid arguments, blocked, cut off) are a failed attempt:
  their error results already told the model what was wrong;
- other tool calls only: an ordinary turn;
- text only: in native mode the text must be the JSON answer; otherwise (or when it is not valid)
  it is a failed attempt, and a user message saying what to do joins the next turn.

A failed attempt beyond `output_retries` ends the run with the `output_retries` limit, whose
`errors` hold what was wrong with each attempt.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .._output import schema as schemas
from ..errors import ConfigError, OutputValidationError, clip
from ..limits import LimitReached
from ..llm.types import Context, SimpleStreamOptions
from ..messages import AgentMessage, AssistantMessage, TextContent, ToolResultMessage, UserMessage
from ..output import OutputMode, OutputSpec
from .outcome import Answered, OutOfRetries

if TYPE_CHECKING:
    from ..llm.model import Model

__all__ = ["TypedRun"]

_log = logging.getLogger("agentcore")


def _result_text(result: ToolResultMessage) -> str:
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


class TypedRun:
    """The typed output of one run: the mode of the last request, the failed attempts."""

    __slots__ = ("errors", "failures", "fixes", "mode", "retries", "spec")

    def __init__(self, spec: OutputSpec[Any], retries: int) -> None:
        self.spec = spec
        self.retries = retries
        self.failures = 0
        self.errors: list[str] = []
        self.fixes: list[AgentMessage] = []
        self.mode: OutputMode = "tool"

    def request(
        self, model: Model, context: Context, options: SimpleStreamOptions
    ) -> tuple[Context, SimpleStreamOptions]:
        """The request's context and options, asking for the answer (in tool mode, the run's
        tool batches must also know `spec.tool`: `answer_tool` says so).

        Raises:
            ConfigError: a tool of the run has the final-answer tool's name.
        """
        spec = self.spec
        mode = spec.mode
        if mode == "auto":
            mode = "native" if model.structured_output and not context.tools else "tool"
        self.mode = mode
        if mode == "native":
            return context, replace(options, output_schema=spec.output_schema())
        if any(t.name == spec.name for t in context.tools):
            raise ConfigError(
                f"a tool of the run is named {spec.name!r}, the name of the final-answer tool: "
                "rename the tool, or give the answer tool another name with "
                "OutputSpec(..., name=...)"
            )
        return replace(context, tools=[*context.tools, spec.tool.llm_tool]), options

    def after_turn(
        self, model: Model, message: AssistantMessage, results: Sequence[ToolResultMessage]
    ) -> Answered | OutOfRetries | None:
        """Read the turn's answer; a `Stopped` when the run ends here (`ANSWERED` with the
        output, or `OUTPUT_RETRIES` with the limit), else None."""
        spec = self.spec
        calls = message.tool_calls
        # only a request that offered the final-answer tool can be answered with it (in native
        # mode, a tool of the run's own may have that name)
        answers = [c for c in calls if c.name == spec.name] if self.mode == "tool" else []
        if answers:
            by_id = {r.tool_call_id: r for r in results}
            problems: list[str] = []
            for call in answers:
                result = by_id.get(call.id)
                if result is None:
                    continue
                if not result.is_error:
                    try:
                        output = spec.validate_object(call.arguments)
                    except OutputValidationError as exc:  # a validator that changed its mind
                        problems.append(str(exc))
                        continue
                    return Answered(output)
                problems.append(_result_text(result))
            return self._failed(problems[-1] if problems else "no result", None)
        if calls:
            return None  # other tools ran: the answer comes in a later turn
        if self.mode == "native":
            try:
                output = spec.validate_object(schemas.parse_answer_text(message.text))
            except OutputValidationError as exc:
                return self._failed(str(exc), UserMessage(content=self._native_fix(exc)))
            return Answered(output)
        return self._failed(
            f"the answer was plain text; the {spec.name} tool was not called",
            UserMessage(
                content=f"Your answer was not accepted: give your final answer by calling the "
                f"{spec.name} tool, with the answer as its arguments. A plain-text answer is "
                "not accepted."
            ),
        )

    def _native_fix(self, error: OutputValidationError) -> str:
        schema = json.dumps(self.spec.object_schema, ensure_ascii=False, separators=(",", ":"))
        return (
            f"Your answer was not accepted. {error}\n\nAnswer again with only a JSON value "
            f"that matches this JSON Schema:\n{clip(schema)}"
        )

    def _failed(self, error: str, fix: AgentMessage | None) -> Answered | OutOfRetries | None:
        self.failures += 1
        self.errors.append(error)
        if self.failures > self.retries:
            limit = LimitReached(
                kind="output_retries",
                limit=self.retries,
                used=self.failures,
                errors=tuple(self.errors),
            )
            _log.warning("the run ended: %s", limit)
            return OutOfRetries(limit)
        if fix is not None:
            self.fixes.append(fix)
        return None

    @property
    def answer_tool(self) -> Any:
        """The final-answer tool the last request offered (an `AgentTool`), or None (native)."""
        return self.spec.tool if self.mode == "tool" else None

    def take_fixes(self) -> list[AgentMessage]:
        """The correction messages for the next turn (taken once)."""
        fixes, self.fixes = self.fixes, []
        return fixes

    @staticmethod
    def of(config: Any) -> TypedRun | None:
        """The typed output of a run with this config (None: a plain-text run)."""
        spec = config.output_type
        if spec is None:
            return None
        return TypedRun(spec, config.output_retries)
