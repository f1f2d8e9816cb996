"""Typed outputs: `OutputSpec`, what a run's final answer must be.

```python
from pydantic import BaseModel

class City(BaseModel):
    name: str
    population: int

spec = OutputSpec(City)
spec.validate({"name": "Lyon", "population": "522000"})  # City(name='Lyon', population=522000)
```

An `OutputSpec` is built from a pydantic model, a dataclass, a `TypedDict`, any type pydantic can
validate (`int`, `list[str]`, `Literal["yes", "no"]`, a union), or a JSON Schema dict. Python
types are validated by pydantic (lax mode: `"5"` is accepted for an int), a JSON Schema by
`jsonschema` (the value is returned as the JSON it is). Pass it, or just the type, as
`AgentLoopConfig.output_type` / `Agent(output_type=...)`; see docs/typed-outputs.md for how a run
obtains the answer (a final-answer tool, or the API's native JSON-schema output).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar, overload

from ._output import schema as schemas
from .errors import ConfigError, OutputValidationError
from .llm.types import OutputSchema
from .messages import AgentMessage, TextContent, ToolCall

if TYPE_CHECKING:
    from .tools import AgentTool

__all__ = ["OutputMode", "OutputSpec"]

T = TypeVar("T")

OutputMode: TypeAlias = Literal["auto", "tool", "native"]
"""How a run asks for the answer: `tool` (a final-answer tool, every provider), `native` (the
API's JSON-schema output), or `auto` (native where the model's API has it and the request offers
no other tools, else the tool)."""

_MODES = ("auto", "tool", "native")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_DEFAULT_DESCRIPTION = (
    "Give your final answer by calling this tool, once you have it; the arguments are the answer."
)


class OutputSpec(Generic[T]):
    """What a run's final answer must be: its type, its JSON schema, and how to validate it.

    Args:
        type: a pydantic model, a dataclass, a `TypedDict`, another type pydantic validates
            (`int`, `list[str]`, `Literal[...]`, a union), or a JSON Schema dict.
        name: the final-answer tool's name (also the native schema's name).
        description: what the answer is, for the model (default: the tool's standard wording).
        mode: `"auto"`, `"tool"` or `"native"` (see `OutputMode`).
        strict: ask the API to enforce the schema exactly (OpenAI's `strict`). None: where the
            schema allows it (every object closed, every property required; generated schemas
            are closed for it when all their properties are required).

    Attributes:
        schema: the JSON Schema of the answer itself.
        object_schema: what the model fills in: `schema` when answers are objects, else
            `{"value": schema}` (`wrapped` is then True).

    Raises:
        ConfigError: a type pydantic cannot validate, an invalid JSON Schema, a bad name or mode.
    """

    __slots__ = (
        "_adapter",
        "_native",
        "_tool",
        "_validator",
        "description",
        "mode",
        "name",
        "object_schema",
        "schema",
        "strict",
        "type",
        "wrapped",
    )

    @overload
    def __init__(
        self: OutputSpec[T],
        type: type[T],
        *,
        name: str = ...,
        description: str | None = ...,
        mode: OutputMode = ...,
        strict: bool | None = ...,
    ) -> None: ...

    @overload
    def __init__(
        self: OutputSpec[Any],
        type: Any,
        *,
        name: str = ...,
        description: str | None = ...,
        mode: OutputMode = ...,
        strict: bool | None = ...,
    ) -> None: ...

    def __init__(
        self,
        type: Any,
        *,
        name: str = "final_answer",
        description: str | None = None,
        mode: OutputMode = "auto",
        strict: bool | None = None,
    ) -> None:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ConfigError(
                f"OutputSpec name must be 1-64 letters, digits, '_' or '-', got {name!r}"
            )
        if mode not in _MODES:
            raise ConfigError(f"OutputSpec mode must be one of {_MODES}, got {mode!r}")
        if strict is not None and not isinstance(strict, bool):
            raise ConfigError(f"OutputSpec strict must be True, False or None, got {strict!r}")
        if description is not None and not isinstance(description, str):
            raise ConfigError(f"OutputSpec description must be a string, got {description!r}")
        self.type = type
        self.name = name
        self.description = description
        self.mode: OutputMode = mode
        self.strict = strict
        self._adapter: Any = None
        self._validator: Any = None
        self._tool: AgentTool | None = None
        self._native: OutputSchema | None = None
        if type is None or isinstance(type, OutputSpec | str | bytes):
            raise ConfigError(_refusal(type))
        if isinstance(type, Mapping):
            self.schema: dict[str, Any] = copy.deepcopy(dict(type))
            self._validator = schemas.check_json_schema(self.schema)
        else:
            self.schema = self._python_schema(type)
        self.wrapped = not schemas.is_object_schema(self.schema)
        self.object_schema: dict[str, Any] = (
            schemas.wrap(self.schema) if self.wrapped else self.schema
        )

    def _python_schema(self, kind: Any) -> dict[str, Any]:
        from pydantic import TypeAdapter

        try:
            self._adapter = TypeAdapter(kind)
            return self._adapter.json_schema()  # type: ignore[no-any-return]
        except Exception as exc:
            text = str(exc).strip()
            first = text.splitlines()[0].split(". ")[0] if text else type(exc).__name__
            raise ConfigError(
                f"output_type {kind!r} cannot be used: {first} (pass a pydantic model, a "
                "dataclass, a TypedDict, a type pydantic validates, or a JSON Schema dict)"
            ) from None

    @staticmethod
    def of(output_type: Any) -> OutputSpec[Any]:
        """`output_type` as an `OutputSpec` (itself when it already is one).

        Raises:
            ConfigError: see `OutputSpec`.
        """
        if isinstance(output_type, OutputSpec):
            return output_type
        key: Any = output_type
        if isinstance(output_type, Mapping):  # a JSON Schema: keyed by its text
            try:
                key = ("json-schema", json.dumps(output_type, sort_keys=True))
            except (TypeError, ValueError):
                return OutputSpec(output_type)  # not JSON: the check explains what is wrong
        try:
            cached = _CACHE.get(key)
        except TypeError:  # unhashable: built every time
            return OutputSpec(output_type)
        if cached is None:
            cached = OutputSpec(output_type)
            if len(_CACHE) >= _CACHE_SIZE:
                _CACHE.clear()
            _CACHE[key] = cached
        return cached

    # -- validation ------------------------------------------------------------------------

    def validate(self, data: Any) -> T:
        """The answer `data` (decoded JSON: dicts, lists, scalars) as a validated value.

        Raises:
            OutputValidationError: listing each failing path (`root` for the whole value).
        """
        return self._validate(data, [], data)

    def validate_json(self, text: str | bytes) -> T:
        """`validate` of a JSON text (one Markdown code fence around it is forgiven).

        Raises:
            OutputValidationError: the text is not JSON, or its value does not validate.
        """
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        return self.validate(schemas.parse_answer_text(text))

    def _validate(self, data: Any, prefix: list[Any], received: Any) -> T:
        if self._adapter is not None:
            from pydantic import ValidationError

            try:
                return self._adapter.validate_python(data)  # type: ignore[no-any-return]
            except ValidationError as exc:
                problems = schemas.problems_of_pydantic(exc, prefix)
            except RecursionError:
                problems = [f"{schemas.path_text(prefix)}: the value is nested too deeply"]
            raise OutputValidationError(problems, received)
        try:
            problems = schemas.problems_of_schema(self._validator, data, prefix)
        except RecursionError:
            problems = [f"{schemas.path_text(prefix)}: the value is nested too deeply"]
        if problems:
            raise OutputValidationError(problems, received)
        # a copy: the answer must not share lists and dicts with the transcript's tool call
        return copy.deepcopy(data)  # type: ignore[no-any-return]

    def validate_object(self, data: Any) -> T:
        """Validate what the model filled in (`object_schema`: a tool's arguments, a native
        answer's JSON), unwrapping `{"value": ...}`; failing paths are named as the model sent
        them.

        Raises:
            OutputValidationError: listing each failing path.
        """
        if not self.wrapped:
            return self._validate(data, [], data)
        if not isinstance(data, dict) or schemas.VALUE not in data:
            raise OutputValidationError(
                [f'root: expected an object with the answer in "{schemas.VALUE}"'], data
            )
        return self._validate(data[schemas.VALUE], [schemas.VALUE], data)

    # -- streaming -------------------------------------------------------------------------

    def partial(self, message: AgentMessage | None) -> Any:
        """The answer as far as it has streamed: the JSON read so far (dicts, lists, scalars,
        not validated yet), or None when nothing of it has arrived.

        Pass the partial assistant message (`MessageUpdateEvent.message`,
        `AgentState.streaming_message`). The answer is read from the final-answer tool call,
        else (unless the mode is `tool`) from the text of a native answer.
        """
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            return None
        data: Any = None
        for block in reversed(content):
            if isinstance(block, ToolCall) and block.name == self.name:
                data = block.arguments
                break
        else:
            if self.mode == "tool":
                return None
            text = "".join(b.text for b in content if isinstance(b, TextContent))
            data = schemas.parse_partial_answer(text)
        if not self.wrapped:
            return data if isinstance(data, dict) else None
        return data.get(schemas.VALUE) if isinstance(data, dict) else None

    # -- what the model is sent ------------------------------------------------------------

    def output_schema(self) -> OutputSchema:
        """The schema for the API's native structured output (`StreamOptions.output_schema`)."""
        native = self._native
        if native is None:
            strict_form = schemas.strict_form(
                self.object_schema, complete=self._adapter is not None
            )
            if self.strict is False or (self.strict is None and strict_form is None):
                native = OutputSchema(
                    name=self.name,
                    schema=self.object_schema,
                    description=self.description,
                    strict=False,
                )
            else:
                native = OutputSchema(
                    name=self.name,
                    schema=strict_form if strict_form is not None else self.object_schema,
                    description=self.description,
                    strict=True,
                )
            self._native = native
        return native

    @property
    def tool(self) -> AgentTool:
        """The final-answer tool: its arguments are `object_schema`; a valid call is the answer."""
        if self._tool is None:
            from ._output.answer_tool import final_answer_tool

            self._tool = final_answer_tool(self, self.description or _DEFAULT_DESCRIPTION)
        return self._tool

    def __repr__(self) -> str:
        kind = "JSON Schema" if self._adapter is None else repr(self.type)
        return f"OutputSpec({kind}, name={self.name!r}, mode={self.mode!r})"


def _refusal(value: Any) -> str:
    if value is None:
        return "OutputSpec needs a type or a JSON Schema dict (output_type=None means plain text)"
    if isinstance(value, OutputSpec):
        return "OutputSpec takes a type or a JSON Schema dict, not another OutputSpec"
    return (
        f"output_type must be a type or a JSON Schema dict, got the {type(value).__name__} "
        f"{value!r:.60} (parse a JSON Schema text with json.loads first)"
    )


_CACHE: dict[Any, OutputSpec[Any]] = {}
_CACHE_SIZE = 256  # an Agent builds its loop config per run: its output type is built once
