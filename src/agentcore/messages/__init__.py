"""Messages and content blocks: the transcript that the loop builds and the model reads.

Every type is a frozen, slotted, keyword-only dataclass with a discriminator (`type` for content
blocks, `role` for messages), so one object can be handed to many listeners and matched with
`match`. `to_json`/`from_json` give a lossless, versioned JSON form for saving transcripts.

`Usage.total_tokens` and `Cost.total` are derived from their parts and cannot disagree with them.
"""

from __future__ import annotations

from ._json import FORMAT_VERSION as FORMAT_VERSION
from ._json import encode_message as encode_message
from ._json import from_json as from_json
from ._json import register_message_type as register_message_type
from ._json import to_json as to_json
from ._json import valid_json as valid_json
from ._json import valid_text as valid_text
from ._types import AgentMessage as AgentMessage
from ._types import AssistantContent as AssistantContent
from ._types import AssistantMessage as AssistantMessage
from ._types import Cost as Cost
from ._types import ImageContent as ImageContent
from ._types import Message as Message
from ._types import StopReason as StopReason
from ._types import TextContent as TextContent
from ._types import ThinkingContent as ThinkingContent
from ._types import ToolCall as ToolCall
from ._types import ToolCaller as ToolCaller
from ._types import ToolResultContent as ToolResultContent
from ._types import ToolResultMessage as ToolResultMessage
from ._types import Usage as Usage
from ._types import UserContent as UserContent
from ._types import UserMessage as UserMessage
from ._types import message_clock as message_clock
from ._types import now_ms as now_ms

__all__ = [
    "FORMAT_VERSION",
    "AgentMessage",
    "AssistantContent",
    "AssistantMessage",
    "Cost",
    "ImageContent",
    "Message",
    "StopReason",
    "TextContent",
    "ThinkingContent",
    "ToolCall",
    "ToolCaller",
    "ToolResultContent",
    "ToolResultMessage",
    "Usage",
    "UserContent",
    "UserMessage",
    "from_json",
    "message_clock",
    "now_ms",
    "register_message_type",
    "to_json",
    "valid_json",
    "valid_text",
]
