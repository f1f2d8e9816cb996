"""`AgentToolResult`, what a tool returns (checked when it is built), and the callback a running
tool reports progress with; both public in `agentcore.tools`."""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..messages import ImageContent, TextContent, ToolResultContent, Usage

__all__ = ["AgentToolResult", "ToolUpdateCallback"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentToolResult:
    """What a tool returns.

    The fields are checked when it is built: a wrong type raises `TypeError` at once (inside a
    tool, that becomes the call's error result).

    Attributes:
        content: text and image blocks for the model.
        details: structured data for UIs and logs (not sent to the model). The loop makes it
            JSON by the rule of `@tool` (a `datetime` becomes its ISO text, a set a sorted list);
            details that cannot be JSON make the call an error result naming the path.
        usage: tokens the tool itself spent (e.g. a sub-agent), copied to the result message.
        added_tool_names: tools that become available from this point of the transcript.
        terminate: a hint that no further model call is needed; the run stops after the batch
            when every result of the batch says so. Never stored in the transcript.
        is_error: report a failure without raising.
    """

    content: list[ToolResultContent] = field(default_factory=list)
    details: Any = None
    usage: Usage | None = None
    added_tool_names: list[str] | None = None
    terminate: bool = False
    is_error: bool = False

    def __post_init__(self) -> None:
        # Checked here, where the tool's author sees the traceback, not later in the loop or
        # when a session is saved.
        content = self.content
        if not isinstance(content, list):
            raise TypeError(
                "AgentToolResult.content must be a list of TextContent or ImageContent blocks, "
                f"got {type(content).__name__}"
            )
        for i, block in enumerate(content):
            if isinstance(block, TextContent):
                if not isinstance(block.text, str):
                    raise TypeError(
                        f"AgentToolResult.content[{i}].text must be a str, "
                        f"got {type(block.text).__name__}"
                    )
            elif isinstance(block, ImageContent):
                if not isinstance(block.data, str) or not isinstance(block.mime_type, str):
                    raise TypeError(
                        f"AgentToolResult.content[{i}]: an ImageContent's data (base64) and "
                        "mime_type must be str"
                    )
            else:
                raise TypeError(
                    f"AgentToolResult.content[{i}] must be TextContent or ImageContent, "
                    f"got {type(block).__name__}"
                )
        if self.usage is not None and not isinstance(self.usage, Usage):
            raise TypeError(
                f"AgentToolResult.usage must be a Usage or None, got {type(self.usage).__name__}"
            )
        names = self.added_tool_names
        if names is not None and (
            not isinstance(names, list) or not all(isinstance(n, str) for n in names)
        ):
            raise TypeError(
                "AgentToolResult.added_tool_names must be a list of tool names (str) or None, "
                f"got {_short(names)}"
            )
        for name in ("terminate", "is_error"):
            flag = getattr(self, name)
            if flag is not True and flag is not False:
                raise TypeError(f"AgentToolResult.{name} must be True or False, got {_short(flag)}")

    @classmethod
    def text(cls, text: str, **kwargs: Any) -> AgentToolResult:
        """A result with one text block."""
        return cls(content=[TextContent(text=text)], **kwargs)

    @classmethod
    def error(cls, text: str) -> AgentToolResult:
        """An error result with one text block."""
        return cls(content=[TextContent(text=text)], is_error=True)


def _short(value: Any) -> str:
    return f"{type(value).__name__} {reprlib.repr(value)}"


ToolUpdateCallback: TypeAlias = Callable[[AgentToolResult], None]
"""Reports partial progress of a running tool; safe to call from a worker thread."""
