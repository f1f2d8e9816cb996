"""Preparing a transcript for a provider: cross-provider conversion and outgoing-text hygiene.

Every adapter runs `transform_messages` before building its request, so a transcript produced by
one model (or saved and loaded, or assembled by hand) can be sent to any other:

* thinking from another model becomes a plain text block (no tags: models imitate them); redacted
  thinking and signatures only make sense to the model that made them and are dropped for others;
* an empty text block that only carries a signature is a provider's record of a block it ran on
  its side (Anthropic's code execution and tool search: `server_tool_use` and its result, kept
  whole in `text_signature` by the adapter) and goes to the same model only;
* errored and aborted assistant turns are not replayed (they are incomplete), and neither are the
  tool results answering their calls;
* a tool call without a result gets a synthetic error result, so every call is answered;
* tool-call ids from other models are rewritten by the target API's normaliser, and their results
  follow.

`sanitize_surrogates` removes unpaired UTF-16 surrogates, which JSON encoders and servers reject.
`AlnumIdMap` gives every tool-call id of a request a fixed-length alphanumeric stand-in, for servers
as strict as Mistral's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
import string
from collections.abc import Callable, Sequence

from ..messages import (
    AssistantContent,
    AssistantMessage,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
)
from .model import Model

__all__ = [
    "NO_RESULT_TEXT",
    "AlnumIdMap",
    "normalize_id_alnum",
    "normalize_id_openai",
    "sanitize_surrogates",
    "transform_messages",
]

NO_RESULT_TEXT = "No result provided"
"""The text of the synthetic error result given to a tool call that has none."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_ID_CHAR = re.compile(r"[^A-Za-z0-9_-]")
_ALNUM = string.ascii_letters + string.digits


def sanitize_surrogates(text: str) -> str:
    """`text` without unpaired UTF-16 surrogates; a well-formed high+low pair becomes its
    character."""
    if _SURROGATE.search(text) is None:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        code = ord(ch)
        if 0xD800 <= code <= 0xDBFF:
            if i + 1 < n and 0xDC00 <= ord(text[i + 1]) <= 0xDFFF:
                low = ord(text[i + 1])
                out.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                i += 2
                continue
        elif not 0xDC00 <= code <= 0xDFFF:
            out.append(ch)
        i += 1
    return "".join(out)


def normalize_id_alnum(id: str, max_len: int = 64) -> str:
    """A tool-call id made of `[A-Za-z0-9_-]` only (others become `_`), at most `max_len` long.

    What Anthropic, Bedrock and Google accept.
    """
    return _NOT_ID_CHAR.sub("_", id)[:max_len]


def normalize_id_openai(id: str) -> str:
    """A tool-call id for OpenAI Chat Completions: the call part of a Responses-style
    `call|item` id, at most 40 characters."""
    return id.split("|", 1)[0][:40]


class AlnumIdMap:
    """Tool-call ids of exactly `length` letters and digits, for one request.

    Mistral's OpenAI-compatible endpoint takes nothing else (9 characters). An id already of that
    form is kept; any other is hashed to one (SHA-256 in base 62), so the same transcript always
    gets the same ids (prompt caches stay warm), and the same id maps to the same stand-in
    wherever it appears, a call and its result alike. Distinct ids get distinct stand-ins
    within one map: a collision is hashed again with a counter.
    """

    def __init__(self, length: int = 9) -> None:
        self.length = length
        self._ids: dict[str, str] = {}
        self._taken: set[str] = set()

    def __call__(self, id: str) -> str:
        """The stand-in for `id`."""
        mapped = self._ids.get(id)
        if mapped is None:
            valid = len(id) == self.length and id.isascii() and id.isalnum()
            mapped = id if valid and id not in self._taken else self._hash(id)
            self._ids[id] = mapped
            self._taken.add(mapped)
        return mapped

    def _hash(self, id: str) -> str:
        for attempt in itertools.count():
            seed = id if attempt == 0 else f"{id}\x00{attempt}"
            number = int.from_bytes(hashlib.sha256(seed.encode("utf-8", "surrogatepass")).digest())
            chars = []
            for _ in range(self.length):
                number, digit = divmod(number, len(_ALNUM))
                chars.append(_ALNUM[digit])
            candidate = "".join(chars)
            if candidate not in self._taken:
                return candidate
        raise AssertionError("unreachable")  # pragma: no cover


def _same_model(message: AssistantMessage, model: Model) -> bool:
    return (
        message.provider == model.provider
        and message.api == model.api
        and message.model == model.id
    )


def _convert_assistant(
    message: AssistantMessage,
    model: Model,
    normalize: Callable[[str], str] | None,
    id_map: dict[str, str],
) -> AssistantMessage:
    same = _same_model(message, model)
    content: list[AssistantContent] = []
    changed = False
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.redacted:
                if same:
                    content.append(block)
                else:
                    changed = True
            elif same and block.thinking_signature:
                content.append(block)  # opaque replay data, even when the text is empty
            elif not block.thinking.strip():
                changed = True
            elif same:
                content.append(block)
            else:
                content.append(TextContent(text=block.thinking))
                changed = True
        elif isinstance(block, TextContent):
            if same or block.text_signature is None:
                content.append(block)
            elif block.text:
                content.append(TextContent(text=block.text))
                changed = True
            else:  # only a provider's own record (a server-side block it ran): not for others
                changed = True
        else:
            call = block
            if not same:
                new_id = normalize(call.id) if normalize is not None else call.id
                if new_id != call.id:
                    id_map[call.id] = new_id
                # a signature, and the caller (a code run of that provider), mean nothing to others
                if (
                    new_id != call.id
                    or call.thought_signature is not None
                    or call.caller is not None
                ):
                    call = ToolCall(id=new_id, name=call.name, arguments=call.arguments)
                    changed = True
            content.append(call)
    return dataclasses.replace(message, content=content) if changed else message


def _missing_result(call: ToolCall, timestamp: int) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text=NO_RESULT_TEXT)],
        is_error=True,
        timestamp=timestamp,
    )


def transform_messages(
    messages: Sequence[Message],
    model: Model,
    normalize_tool_call_id: Callable[[str], str] | None = None,
) -> list[Message]:
    """The transcript as `model` should see it (see the module docstring for the rules).

    Args:
        messages: the transcript; not modified.
        model: the model the request goes to; assistant turns of the same provider, api and id
            keep their thinking, signatures and ids.
        normalize_tool_call_id: the target API's id normaliser, applied to other models' calls.

    Returns:
        A new list; messages that need no change are the same objects.
    """
    id_map: dict[str, str] = {}
    dropped_calls: set[str] = set()
    converted: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted"):
                dropped_calls.update(c.id for c in message.tool_calls)
                continue
            converted.append(_convert_assistant(message, model, normalize_tool_call_id, id_map))
        elif isinstance(message, ToolResultMessage):
            if message.tool_call_id in dropped_calls:
                continue
            new_id = id_map.get(message.tool_call_id)
            if new_id is not None:
                message = dataclasses.replace(message, tool_call_id=new_id)
            converted.append(message)
        else:
            converted.append(message)

    result: list[Message] = []
    pending: list[ToolCall] = []
    answered: set[str] = set()

    def flush(timestamp: int) -> None:
        result.extend(_missing_result(c, timestamp) for c in pending if c.id not in answered)
        pending.clear()
        answered.clear()

    for message in converted:
        if isinstance(message, ToolResultMessage):
            answered.add(message.tool_call_id)
        else:
            flush(message.timestamp)
            if isinstance(message, AssistantMessage):
                pending.extend(message.tool_calls)
        result.append(message)
    if pending:
        flush(result[-1].timestamp)
    return result
