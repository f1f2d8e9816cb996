"""The failures whose words are the same in every adapter, and the words themselves.

Imports nothing heavy: the faux provider and the retry helper use them as well as the HTTP side.
"""

from __future__ import annotations

import json

from ..errors import clip

__all__ = [
    "PREVIEW_CHARS",
    "EmptyStream",
    "FailureText",
    "MalformedEvent",
    "NotEventStream",
    "StreamIdle",
    "malformed_json_text",
    "seconds",
    "truncated_text",
]

PREVIEW_CHARS = 200
"""Characters of an unexpected body or a malformed event quoted in an error text."""


def seconds(value: float) -> str:
    """A number of seconds as people write it: `5`, `0.25`."""
    return f"{value:g}" if value != int(value) else str(int(value))


class FailureText(Exception):
    """A failure whose message is already the error text to report, as it is."""


class NotEventStream(FailureText):
    """A successful response whose body is not an event stream (never retried)."""

    def __init__(self, content_type: str, preview: str) -> None:
        self.content_type = content_type
        what = content_type or "no content type"
        super().__init__(f"expected an event stream, got {what}: {preview}")


class EmptyStream(FailureText):
    """An event stream that ended before its first event (retried like a lost connection)."""

    def __init__(self) -> None:
        super().__init__("the event stream ended before its first event")


class MalformedEvent(FailureText):
    """An event whose data is not valid JSON."""


def malformed_json_text(exc: json.JSONDecodeError) -> str:
    """The error text of an event whose data is not JSON: the parser's reason and the start of
    the data."""
    return f"malformed JSON in a server event ({exc}): {clip(exc.doc, PREVIEW_CHARS)}"


class StreamIdle(FailureText):
    """Nothing arrived for longer than `idle_timeout` once the answer streamed."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        super().__init__(
            f"the stream was silent for longer than idle_timeout ({seconds(timeout)} s)"
        )


def truncated_text(missing: str) -> str:
    """The error text of a stream that ended before its final event, naming what never came."""
    return f"the stream ended before the response finished (no {missing})"
