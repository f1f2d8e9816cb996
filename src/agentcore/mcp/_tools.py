"""The tools of an MCP server as `AgentTool`s: names, filters and results (refreshing the list
between turns is `_refresh`).

An `MCPTool` carries the server's JSON Schema and description, so the loop validates and coerces
the model's arguments as for any tool; its `execute` sends `tools/call` through its client.

Result mapping (MCP content → agentcore):

| MCP | agentcore |
|---|---|
| text | `TextContent` |
| image | `ImageContent` |
| audio | a `TextContent` note; the data in `details["audio"]` |
| embedded resource, text | `TextContent` headed by the resource's URI |
| embedded resource, image blob | `ImageContent` |
| embedded resource, other blob | a `TextContent` note; the data in `details["resources"]` |
| resource link | `TextContent` naming the link |
| `structuredContent` | `details["structured_content"]`; its JSON as text when there is none |
| `isError: true` | an error result with the server's text |

`details` always holds `server` and `tool` (the server's own tool name); everything in it is
JSON, so it is stored with the transcript as it is.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .. import (
    AbortSignal,
    AgentTool,
    AgentToolResult,
    ConfigError,
    ImageContent,
    OutputSpec,
    OutputValidationError,
    TextContent,
    ToolDefinitionError,
    ToolExecutionMode,
    ToolUpdateCallback,
    cancel_on_abort,
)
from ..tools import MAX_IMAGE_CHARS, MAX_RESULT_CHARS, capped_content
from ._sdk import types

__all__ = [
    "MAX_IMAGE_CHARS",
    "MAX_RESULT_CHARS",
    "MCPProgress",
    "MCPTool",
    "ToolFilter",
    "ToolSource",
    "bound_output_checks",
    "build_tools",
]

_log = logging.getLogger("agentcore")

_NAME_CHAR = re.compile(r"[^A-Za-z0-9_-]")
_PREFIX = re.compile(r"[A-Za-z0-9_-]*")
_MAX_NAME = 64
_CLIP = 2_000
MAX_DESCRIPTION_CHARS = 8_000
"""Characters of a tool's description (from the server) that reach the model; the rest is cut
with a note."""
MAX_SCHEMA_CHARS = 256 * 1024
"""Characters (as JSON) of a tool's input schema; a tool with a larger one is left out."""


def clip(text: str) -> str:
    """The first 2,000 characters of a received text, and how many more there were."""
    if len(text) <= _CLIP:
        return text
    return f"{text[:_CLIP]}… {len(text) - _CLIP} more characters"


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPProgress:
    """A progress notification of a running MCP call: the `details` of its
    `tool_execution_update` (the update's text is `text()`).

    Attributes:
        progress: how far the call is (grows with every notification).
        total: the value `progress` will reach, if the server knows it.
        message: the server's description of the step, if any.
    """

    progress: float
    total: float | None = None
    message: str | None = None

    def text(self) -> str:
        """`message`, else `progress/total` (or `progress`)."""
        if self.message:
            return self.message
        done = f"{self.progress:g}"
        return f"{done}/{self.total:g}" if self.total is not None else done


class ToolSource(Protocol):
    """What an `MCPTool` needs of the client it belongs to (`MCPClient` provides it)."""

    @property
    def name(self) -> str:
        """The server's name, as results and errors show it."""
        ...

    async def call(
        self,
        tool: MCPTool,
        arguments: dict[str, Any],
        on_update: Callable[[Any], None],
        tool_call_id: str | None = None,
    ) -> AgentToolResult:
        """Call `tool` on the server; every outcome is a result (errors included), except an
        `InputRequired` when the server asks the user through approvals."""
        ...


class MCPTool(AgentTool):
    """A tool of an MCP server, as an `AgentTool`; built by `MCPClient`.

    Attributes:
        client: the `MCPClient` it belongs to.
        mcp_name: the server's name for it (`name` may carry a prefix or replaced characters).
        definition: the tool as the server listed it (`mcp_types.Tool`).
    """

    def __init__(
        self,
        client: ToolSource,
        definition: types.Tool,
        *,
        name: str,
        timeout: float | None,
        execution_mode: ToolExecutionMode | None,
        deferred: bool = False,
    ) -> None:
        super().__init__(
            name=name,
            description=_description(definition),
            parameters=definition.input_schema,
            label=definition.title or definition.name,
            timeout=timeout,
            execution_mode=execution_mode,
            deferred=deferred,
        )
        self.client = client
        self.mcp_name = definition.name
        self.definition = definition

    async def execute(
        self,
        tool_call_id: str,
        args: Any,
        signal: AbortSignal,
        on_update: ToolUpdateCallback,
    ) -> AgentToolResult:
        """Send `tools/call` to the server; `signal` (the run's abort) cancels it, and the server
        is told with an MCP cancellation."""
        result: AgentToolResult | None = None
        with cancel_on_abort(signal):
            result = await self.client.call(self, args, on_update, tool_call_id)
        if result is None:  # aborted
            return AgentToolResult.error(f"The call of {self.mcp_name!r} was aborted.")
        return result

    def __repr__(self) -> str:
        return f"MCPTool(name={self.name!r}, server={self.client.name!r})"


# --- building the tool list ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolFilter:
    """Which of a server's tools to offer, and under which names."""

    server: str
    prefix: str
    allow: Sequence[str] | None
    deny: Sequence[str] | None
    timeout: float | None
    execution_mode: ToolExecutionMode | None
    deferred: bool = False

    def __post_init__(self) -> None:
        if self.deferred is not True and self.deferred is not False:
            raise ConfigError(f"deferred must be True or False, got {self.deferred!r}")
        if not isinstance(self.prefix, str) or not _PREFIX.fullmatch(self.prefix):
            raise ConfigError(
                f"prefix must use letters, digits, '_' or '-' only, got {self.prefix!r}"
            )
        for what in ("allow", "deny"):
            patterns = getattr(self, what)
            if patterns is not None and (
                isinstance(patterns, str) or not all(isinstance(p, str) for p in patterns)
            ):
                raise ConfigError(f"{what} must be a list of tool-name patterns, got {patterns!r}")

    def offers(self, mcp_name: str) -> bool:
        if self.allow is not None and not any(fnmatch.fnmatchcase(mcp_name, p) for p in self.allow):
            return False
        return not (
            self.deny is not None and any(fnmatch.fnmatchcase(mcp_name, p) for p in self.deny)
        )

    def name_for(self, mcp_name: str) -> str:
        """The agentcore name: the prefix, then the server's name with any character a model API
        would refuse replaced by `_`, shortened with a hash when it is too long."""
        name = self.prefix + _NAME_CHAR.sub("_", mcp_name)
        if len(name) > _MAX_NAME:
            digest = hashlib.sha256(mcp_name.encode()).hexdigest()[:8]
            name = f"{name[: _MAX_NAME - 9]}_{digest}"
        return name or "_"


def _description(definition: types.Tool) -> str:
    """The server's description of a tool, cut after `MAX_DESCRIPTION_CHARS` with a note."""
    text = definition.description or definition.title or ""
    if len(text) <= MAX_DESCRIPTION_CHARS:
        return text
    return (
        f"{text[:MAX_DESCRIPTION_CHARS]}\n[description cut after {MAX_DESCRIPTION_CHARS:,} of "
        f"{len(text):,} characters]"
    )


def _schema_size(schema: Any) -> int:
    try:
        return len(json.dumps(schema))
    except (TypeError, ValueError, RecursionError):
        return MAX_SCHEMA_CHARS + 1


def _same(tool: MCPTool, definition: types.Tool) -> bool:
    return tool.definition == definition


def build_tools(
    client: ToolSource,
    listed: Sequence[types.Tool],
    previous: Sequence[MCPTool],
    spec: ToolFilter,
) -> list[MCPTool]:
    """The `MCPTool`s of a listing; unchanged tools keep their objects. A tool that cannot be an
    agentcore tool (a clashing name, an invalid schema) is left out with a warning."""
    kept = {t.mcp_name: t for t in previous}
    tools: list[MCPTool] = []
    names: set[str] = set()
    for definition in listed:
        if not spec.offers(definition.name):
            continue
        name = spec.name_for(definition.name)
        if name in names:
            _log.warning(
                "MCP server %r: tool %r left out: its name %r is taken by another of its tools",
                spec.server,
                definition.name,
                name,
            )
            continue
        old = kept.get(definition.name)
        if old is not None and _same(old, definition):
            tools.append(old)
            names.add(name)
            continue
        size = _schema_size(definition.input_schema)
        if size > MAX_SCHEMA_CHARS:
            _log.warning(
                "MCP server %r: tool %r left out: its input schema is %s characters of JSON "
                "(at most %s are accepted)",
                spec.server,
                definition.name,
                f"{size:,}" if size <= MAX_SCHEMA_CHARS * 1000 else "too many",
                f"{MAX_SCHEMA_CHARS:,}",
            )
            continue
        try:
            tool = MCPTool(
                client,
                definition,
                name=name,
                timeout=spec.timeout,
                execution_mode=spec.execution_mode,
                deferred=spec.deferred,
            )
        except (ToolDefinitionError, RecursionError, ValueError, TypeError) as exc:
            # one unusable tool is left out; the server's other tools stay usable
            why = (
                str(exc) if isinstance(exc, ToolDefinitionError) else f"{type(exc).__name__}: {exc}"
            )
            _log.warning(
                "MCP server %r: tool %r left out: %s", spec.server, definition.name, clip(why)
            )
            continue
        tools.append(tool)
        names.add(name)
    return tools


class _OutputCheck:
    """What the SDK's client takes for a compiled output-schema validator (its `iter_errors`),
    checking with an `OutputSpec`: no reference outside the schema, patterns in bounded time."""

    def __init__(self, spec: OutputSpec[Any]) -> None:
        self._spec = spec

    def iter_errors(self, instance: Any) -> Iterator[Any]:
        from jsonschema.exceptions import ValidationError

        try:
            self._spec.validate(instance)
        except OutputValidationError as exc:
            yield ValidationError(str(exc))


def bound_output_checks(session: Any, listed: Sequence[types.Tool]) -> None:
    """Have the SDK's client check structured results with agentcore's validators.

    The SDK checks a result's `structuredContent` against the tool's `outputSchema` itself,
    matching its patterns with Python's `re` (which a server could make backtrack for minutes on
    the event loop). Its cache of compiled validators is filled here, per listing, with checks
    that match patterns within a time budget. A schema agentcore refuses keeps the SDK's own
    validator (which resolves no remote reference either). Nothing happens when the SDK keeps
    no such cache.
    """
    cache = getattr(session, "_tool_output_validators", None)
    if not isinstance(cache, dict):
        return
    for definition in listed:
        schema = definition.output_schema
        if not isinstance(schema, dict) or _schema_size(schema) > MAX_SCHEMA_CHARS:
            continue
        try:
            cache[definition.name] = _OutputCheck(OutputSpec(schema))
        except (ConfigError, RecursionError, ValueError, TypeError):
            continue


# --- results -------------------------------------------------------------------------------


def _size(data: str) -> str:
    try:
        size = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        size = len(data) * 3 // 4
    return f"{size:,} bytes"


def to_agent_result(result: types.CallToolResult, server: str, tool: str) -> AgentToolResult:
    """Map a `tools/call` result onto agentcore content blocks and JSON `details`."""
    content: list[TextContent | ImageContent] = []
    details: dict[str, Any] = {"server": server, "tool": tool}
    for block in result.content:
        if isinstance(block, types.TextContent):
            content.append(TextContent(text=block.text))
        elif isinstance(block, types.ImageContent):
            content.append(ImageContent(data=block.data, mime_type=block.mime_type))
        elif isinstance(block, types.AudioContent):
            details.setdefault("audio", []).append(
                {"mime_type": block.mime_type, "data": block.data}
            )
            content.append(
                TextContent(
                    text=f"[audio: {block.mime_type}, {_size(block.data)}; "
                    "kept in the result's details]"
                )
            )
        elif isinstance(block, types.EmbeddedResource):
            content.append(_resource(block.resource, details))
        elif isinstance(block, types.ResourceLink):
            about = f": {block.description}" if block.description else ""
            content.append(TextContent(text=f"[resource link: {block.name} <{block.uri}>{about}]"))
        else:  # a content type newer than this mapping
            kind = getattr(block, "type", type(block).__name__)
            content.append(TextContent(text=f"[{kind} content, not shown]"))
    structured = result.structured_content
    if structured is not None:
        details["structured_content"] = structured
        if not any(isinstance(b, TextContent) for b in content):
            content.append(TextContent(text=json.dumps(structured, ensure_ascii=False)))
    content = capped_content(content)
    if result.is_error:
        if not any(isinstance(b, TextContent) and b.text for b in content):
            content.insert(
                0,
                TextContent(text=f"MCP server {server!r}: tool {tool!r} failed without a message."),
            )
        return AgentToolResult(content=content, details=details, is_error=True)
    return AgentToolResult(content=content, details=details)


def _resource(resource: Any, details: dict[str, Any]) -> TextContent | ImageContent:
    uri = str(resource.uri)
    mime = resource.mime_type
    if isinstance(resource, types.TextResourceContents):
        return TextContent(text=f"[resource {uri}]\n{resource.text}")
    blob: str = resource.blob
    if mime and mime.startswith("image/"):
        return ImageContent(data=blob, mime_type=mime)
    details.setdefault("resources", []).append({"uri": uri, "mime_type": mime, "blob": blob})
    return TextContent(
        text=f"[resource {uri}: {mime or 'binary data'}, {_size(blob)}; kept in the result's "
        "details]"
    )
