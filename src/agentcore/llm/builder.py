"""`MessageBuilder`: the one accumulator that turns provider output into protocol events.

Every provider (and the faux one) feeds what arrives to a builder, which keeps the message being
built and returns the event to yield. Text arrives in chunks that are kept as a list and joined
only when somebody reads them, and each event's `partial` is a lazy snapshot of the moment it was
made (O(open blocks) to take), so the cost per delta stays flat however long the answer grows.

Tool-call arguments are re-parsed from the accumulated JSON as fragments arrive, for the preview
in `partial`: on every fragment while the JSON is short, then each time it has grown by a quarter,
with the forgiving partial parser. The total parsing cost is therefore linear in the size of the
arguments. `toolcall_end` parses the whole text once more, strictly: what a tool runs on is exactly
one complete JSON object, never a repaired guess. Anything else (cut off, trailing garbage, two
objects, not an object) gives a call with `arguments={}` and the raw text in `invalid_arguments`,
which the agent loop answers with an error result instead of running the tool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..messages import (
    AssistantContent,
    AssistantMessage,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolCaller,
    Usage,
    now_ms,
)
from ._partial_json import parse_complete_json, parse_partial_json
from .events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from .model import Model

__all__ = ["MessageBuilder"]

_EAGER_PARSE_LIMIT = 2048
_REPARSE_GROWTH = 1.25


@dataclass(slots=True)
class _Block:
    kind: Literal["text", "thinking", "tool_call"]
    chunks: list[str] = field(default_factory=list)
    size: int = 0
    signature: str | None = None
    redacted: bool = False
    id: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    invalid: str | None = None
    caller: ToolCaller | None = None
    parsed_size: int = 0
    joined: str = ""
    joined_count: int = 0

    def text(self, count: int | None = None) -> str:
        """The text of the first `count` chunks (all by default), memoised for growing counts."""
        n = len(self.chunks) if count is None else count
        if n < self.joined_count:
            return "".join(self.chunks[:n])
        if n > self.joined_count:
            self.joined += "".join(self.chunks[self.joined_count : n])
            self.joined_count = n
        return self.joined

    def content(self, count: int | None = None, arguments: dict[str, Any] | None = None) -> Any:
        """The block as content; a tool call's `arguments` override is a preview (never invalid)."""
        if self.kind == "text":
            return TextContent(text=self.text(count), text_signature=self.signature)
        if self.kind == "thinking":
            return ThinkingContent(
                thinking=self.text(count), thinking_signature=self.signature, redacted=self.redacted
            )
        return ToolCall(
            id=self.id,
            name=self.name,
            arguments=self.arguments if arguments is None else arguments,
            thought_signature=self.signature,
            invalid_arguments=self.invalid if arguments is None else None,
            caller=self.caller,
        )

    def finish_arguments(self) -> None:
        """Parse the whole argument text strictly (see the module docstring)."""
        text = self.text()
        parsed = parse_complete_json(text)
        if parsed is None:
            self.arguments, self.invalid = {}, text
        else:
            self.arguments, self.invalid = parsed, None


class _Snapshot:
    """The message at one moment: finished blocks by reference, open ones by chunk count.

    Taking one is O(open blocks) and allocates one object in the common case of a single open
    block; the message is built only if somebody reads `partial`.
    """

    __slots__ = ("_args", "_builder", "_count", "_index", "_message", "_more", "_n", "_usage")

    def __init__(self, builder: MessageBuilder) -> None:
        self._builder = builder
        self._n = len(builder._blocks)
        self._usage = builder.usage
        self._message: AssistantMessage | None = None
        self._more: tuple[tuple[int, int, dict[str, Any]], ...] | None = None
        open_blocks = builder._open
        if not open_blocks:
            self._index = -1
        else:
            if len(open_blocks) > 1:
                self._more = tuple((i, len(b.chunks), b.arguments) for i, b in open_blocks.items())
            index = builder._last_open
            block = open_blocks.get(index)
            if block is None:
                index, block = next(iter(open_blocks.items()))
            self._index = index
            self._count = len(block.chunks)
            self._args = block.arguments

    def message(self) -> AssistantMessage:
        if self._message is None:
            builder = self._builder
            content: list[AssistantContent] = list(builder._finals[: self._n])
            if self._index >= 0:
                content[self._index] = builder._blocks[self._index].content(self._count, self._args)
            for index, count, arguments in self._more or ():
                content[index] = builder._blocks[index].content(count, arguments)
            self._message = builder._message(content, self._usage, "stop", None)
        return self._message


class MessageBuilder:
    """Accumulates one assistant message and makes the protocol events for it.

    Args:
        model: the model answering (its api, provider and id are stamped on the message).
        model_id: overrides the model id, e.g. with the id the server reports.
    """

    def __init__(self, model: Model, *, model_id: str | None = None) -> None:
        self.api = model.api
        self.provider = model.provider
        self.model_id = model_id or model.id
        self.usage = Usage()
        self.timestamp = now_ms()
        self._blocks: list[_Block] = []
        self._finals: list[Any] = []
        self._open: dict[int, _Block] = {}
        self._last_open = -1
        self._tool_ids: set[str] = set()

    # -- reading ---------------------------------------------------------------------------

    def _message(
        self,
        content: list[AssistantContent],
        usage: Usage,
        stop_reason: StopReason,
        error: str | None,
    ) -> AssistantMessage:
        return AssistantMessage(
            content=content,
            api=self.api,
            provider=self.provider,
            model=self.model_id,
            usage=usage,
            stop_reason=stop_reason,
            error_message=error,
            timestamp=self.timestamp,
        )

    def snapshot(
        self, stop_reason: StopReason = "stop", error: str | None = None
    ) -> AssistantMessage:
        """The message as it stands now, with open blocks as far as they got.

        A tool call still open is parsed strictly, as `toolcall_end` would, unless the message
        failed (`error`, `aborted`): such a message is never executed, and its calls keep the
        preview of what arrived.
        """
        content: list[AssistantContent] = []
        for i, block in enumerate(self._blocks):
            if i in self._open:
                if block.kind == "tool_call":
                    if stop_reason in ("error", "aborted"):
                        block.arguments = parse_partial_json(block.text())
                    else:
                        block.finish_arguments()
                content.append(block.content())
            else:
                content.append(self._finals[i])
        return self._message(content, self.usage, stop_reason, error)

    @property
    def block_count(self) -> int:
        """How many content blocks have been opened."""
        return len(self._blocks)

    @property
    def has_tool_calls(self) -> bool:
        """Whether a tool-call block has been opened."""
        return any(block.kind == "tool_call" for block in self._blocks)

    def is_open(self, index: int) -> bool:
        """Whether the block at `index` is still streaming."""
        return index in self._open

    def kind(self, index: int) -> str:
        """`text`, `thinking` or `tool_call`."""
        return self._blocks[index].kind

    # -- writing ---------------------------------------------------------------------------

    def set_usage(self, usage: Usage) -> None:
        """Replace the usage so far (providers report it incrementally)."""
        self.usage = usage

    def start(self) -> StartEvent:
        """The `start` event, with the empty skeleton."""
        return StartEvent(partial=self._message([], self.usage, "stop", None))

    def _open_block(self, block: _Block) -> int:
        index = len(self._blocks)
        self._blocks.append(block)
        self._finals.append(None)
        self._open[index] = block
        self._last_open = index
        return index

    def _check_open(self, index: int, kind: str) -> _Block:
        block = self._open.get(index)
        if block is None or block.kind != kind:
            raise ValueError(f"content block {index} is not an open {kind} block")
        return block

    def text_start(self, *, signature: str | None = None) -> TextStartEvent:
        """Open a text block; the event's `content_index` is its index."""
        index = self._open_block(_Block("text", signature=signature))
        return TextStartEvent(content_index=index, partial=_Snapshot(self))

    def text_delta(self, index: int, delta: str) -> TextDeltaEvent:
        """Append text to the open text block at `index`."""
        block = self._check_open(index, "text")
        block.chunks.append(delta)
        return TextDeltaEvent(content_index=index, delta=delta, partial=_Snapshot(self))

    def text_end(self, index: int, *, signature: str | None = None) -> TextEndEvent:
        """Close the text block at `index`."""
        block = self._check_open(index, "text")
        if signature is not None:
            block.signature = signature
        final = self._close(index)
        return TextEndEvent(content_index=index, content=final.text, partial=_Snapshot(self))

    def thinking_start(
        self, *, signature: str | None = None, redacted: bool = False
    ) -> ThinkingStartEvent:
        """Open a thinking block (a redacted one carries only its signature)."""
        index = self._open_block(_Block("thinking", signature=signature, redacted=redacted))
        return ThinkingStartEvent(content_index=index, partial=_Snapshot(self))

    def thinking_delta(self, index: int, delta: str) -> ThinkingDeltaEvent:
        """Append reasoning text to the open thinking block at `index`."""
        block = self._check_open(index, "thinking")
        block.chunks.append(delta)
        return ThinkingDeltaEvent(content_index=index, delta=delta, partial=_Snapshot(self))

    def thinking_signature(self, index: int, signature: str) -> None:
        """Set the signature of the open thinking block at `index` (replacing any before: a
        signature that arrives in pieces is passed whole so far)."""
        self._check_open(index, "thinking").signature = signature

    def thinking_end(self, index: int, *, signature: str | None = None) -> ThinkingEndEvent:
        """Close the thinking block at `index`."""
        block = self._check_open(index, "thinking")
        if signature is not None:
            block.signature = signature
        final = self._close(index)
        return ThinkingEndEvent(
            content_index=index, content=final.thinking, partial=_Snapshot(self)
        )

    def toolcall_start(
        self,
        *,
        id: str,
        name: str,
        thought_signature: str | None = None,
        caller: ToolCaller | None = None,
    ) -> ToolCallStartEvent:
        """Open a tool-call block with its id and name; its arguments start as `{}`. `caller`:
        the provider's code run that made the call (hosted code execution), if any.

        An id already used by another call of this message gets a suffix (`call_1` becomes
        `call_1_2`): every call must get its own result, so ids must be unique.
        """
        block = _Block(
            "tool_call",
            id=self._unique_id(id),
            name=name,
            signature=thought_signature,
            caller=caller,
        )
        index = self._open_block(block)
        return ToolCallStartEvent(content_index=index, partial=_Snapshot(self))

    def toolcall_delta(self, index: int, delta: str) -> ToolCallDeltaEvent:
        """Append a raw JSON fragment to the arguments of the tool call at `index`."""
        block = self._check_open(index, "tool_call")
        block.chunks.append(delta)
        block.size += len(delta)
        if block.size <= _EAGER_PARSE_LIMIT or block.size >= block.parsed_size * _REPARSE_GROWTH:
            block.arguments = parse_partial_json(block.text())
            block.parsed_size = block.size
        return ToolCallDeltaEvent(content_index=index, delta=delta, partial=_Snapshot(self))

    def toolcall_end(
        self, index: int, *, arguments: dict[str, Any] | None = None
    ) -> ToolCallEndEvent:
        """Close the tool call at `index`: take `arguments` (a provider that received them parsed),
        or parse the JSON received, strictly.

        The JSON must be exactly one object (a blank text is `{}`); otherwise the call gets
        `arguments={}` and `invalid_arguments` with the raw text, and is never executed.
        """
        block = self._check_open(index, "tool_call")
        if arguments is None:
            block.finish_arguments()
        else:
            block.arguments, block.invalid = arguments, None
        final = self._close(index)
        return ToolCallEndEvent(content_index=index, tool_call=final, partial=_Snapshot(self))

    def set_tool_call(self, index: int, *, id: str | None = None, name: str | None = None) -> None:
        """Fill in a tool call's id or name that arrived after its first fragment."""
        block = self._check_open(index, "tool_call")
        if id and id != block.id:
            block.id = self._unique_id(id)
        if name:
            block.name = name

    def _unique_id(self, id: str) -> str:
        if not id:
            return id
        candidate, n = id, 1
        while candidate in self._tool_ids:
            n += 1
            candidate = f"{id}_{n}"
        self._tool_ids.add(candidate)
        return candidate

    def _close(self, index: int) -> Any:
        block = self._open.pop(index)
        final = block.content()
        self._finals[index] = final
        return final

    def close_open_blocks(self) -> list[Any]:
        """End every block still open, in order, and return their end events."""
        events: list[Any] = []
        for index in sorted(self._open):
            kind = self._open[index].kind
            if kind == "text":
                events.append(self.text_end(index))
            elif kind == "thinking":
                events.append(self.thinking_end(index))
            else:
                events.append(self.toolcall_end(index))
        return events

    def done(self, reason: Literal["stop", "length", "tool_use"]) -> DoneEvent:
        """The terminal `done` event with the final message."""
        return DoneEvent(reason=reason, message=self.snapshot(reason))

    def error(self, reason: Literal["error", "aborted"], message: str) -> ErrorEvent:
        """The terminal `error` event: what arrived so far, the usage, and `message`."""
        return ErrorEvent(reason=reason, error=self.snapshot(reason, message))
