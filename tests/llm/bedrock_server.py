"""Bedrock's `ConverseStream` wire format, for the replay and fault servers on 127.0.0.1.

The answer of `POST /model/{modelId}/converse-stream` is an `application/vnd.amazon.eventstream`
body: binary frames, each `total length | headers length | prelude CRC32 | headers | payload |
message CRC32` (big-endian), whose string headers say what the frame is (`:message-type` `event`
with an `:event-type`, or `exception` with an `:exception-type`) and whose payload is JSON.
`frame` writes one; the SDK under test decodes them.

Fixtures are plain files, `fixtures/bedrock-converse-stream/<name>.jsonl`: one frame per line,
`{"event": "contentBlockDelta", "payload": {...}}` or `{"exception": "throttlingException",
"payload": {...}}`; `load_frames(name)` turns one into frames. Errors before the stream are JSON
bodies with an `x-amzn-ErrorType` header, as AWS sends them (`error_response`).

`BedrockWire` writes answers in this format for the fault server (`fault_server.Wire`).
"""

from __future__ import annotations

import binascii
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from agentcore.llm.model import Model, ModelCost

from .fault_server import CREDENTIALS, Answer, Call, FaultResponse, Wire
from .replay_server import FIXTURES, ReplayServer, rechunk

__all__ = [
    "API",
    "EVENT_STREAM",
    "BedrockWire",
    "error_response",
    "event",
    "exception",
    "frame",
    "load_error",
    "load_frames",
    "stream_response",
]

API = "bedrock-converse-stream"
EVENT_STREAM = "application/vnd.amazon.eventstream"
_STRING = 7  # the header value type of a string


def frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream frame with string `headers` and `payload`."""
    encoded = b"".join(
        struct.pack(">B", len(name.encode()))
        + name.encode()
        + struct.pack(">BH", _STRING, len(value.encode()))
        + value.encode()
        for name, value in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack(">I", binascii.crc32(message))


def event(kind: str, payload: Mapping[str, Any] | bytes) -> bytes:
    """An event frame (`messageStart`, `contentBlockDelta`, ...)."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {
        ":event-type": kind,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return frame(headers, body)


def exception(kind: str, message: str) -> bytes:
    """An exception frame in the stream (`throttlingException`, `validationException`, ...)."""
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return frame(headers, json.dumps({"message": message}).encode())


def load_frames(name: str) -> list[bytes]:
    """The frames of `fixtures/bedrock-converse-stream/<name>.jsonl`."""
    frames = []
    for line in (FIXTURES / API / f"{name}.jsonl").read_text("utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if "exception" in item:
            frames.append(exception(item["exception"], item["payload"]["message"]))
        else:
            frames.append(event(item["event"], item["payload"]))
    return frames


def load_error(name: str, headers: Mapping[str, str] | None = None) -> FaultResponse:
    """The error response of `fixtures/bedrock-converse-stream/<name>.json` (`status`, `code`,
    `message`)."""
    item = json.loads((FIXTURES / API / f"{name}.json").read_text("utf-8"))
    return error_response(item["status"], item["code"], item["message"], headers)


def stream_response(frames: Sequence[bytes], **fields: Any) -> FaultResponse:
    """An event-stream response, one frame per chunk."""
    return FaultResponse(
        headers={"content-type": EVENT_STREAM, "x-amzn-requestid": "req-stream-1"},
        chunks=list(frames),
        **fields,
    )


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> FaultResponse:
    """An AWS JSON error: the code in `x-amzn-ErrorType`, the message in the body."""
    data = json.dumps({"message": message}).encode()
    return FaultResponse(
        status=status,
        headers={
            "content-type": "application/json",
            "content-length": str(len(data)),
            "x-amzn-errortype": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/",
            "x-amzn-requestid": "req-error-1",
            **(headers or {}),
        },
        chunks=[data],
    )


_CODES = {
    400: "ValidationException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}


class BedrockWire(Wire):
    """`ConverseStream` answers for the fault server: a text block, then a tool call whose
    input arrives in fragments, the stop reason and the usage."""

    api = API
    provider = "amazon-bedrock"
    model_id = "us.anthropic.claude-fault-v1:0"
    prefix = ""
    endpoint = "/converse-stream"

    def model(self, server: ReplayServer) -> Model:
        return Model(
            id=self.model_id,
            api=self.api,
            provider=self.provider,
            base_url=server.url,
            cost=ModelCost(input=1.0, output=2.0),
            context_window=200_000,
            max_tokens=4096,
        )

    def answer(self, texts: Sequence[str], call: Call | None = None) -> Answer:
        events = [event("messageStart", {"role": "assistant"})]
        events += [
            event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}})
            for t in texts
        ]
        events.append(event("contentBlockStop", {"contentBlockIndex": 0}))
        middle = len(events)
        if call is not None:
            start = {"toolUse": {"toolUseId": call.id, "name": call.name}}
            events.append(event("contentBlockStart", {"contentBlockIndex": 1, "start": start}))
            events += [
                event(
                    "contentBlockDelta",
                    {"contentBlockIndex": 1, "delta": {"toolUse": {"input": fragment}}},
                )
                for fragment in call.fragments
            ]
            events.append(event("contentBlockStop", {"contentBlockIndex": 1}))
            middle += 2
        events.append(event("messageStop", {"stopReason": "tool_use" if call else "end_turn"}))
        usage = {"inputTokens": 50, "outputTokens": 20, "totalTokens": 70}
        events.append(event("metadata", {"usage": usage, "metrics": {"latencyMs": 12}}))
        return Answer(events, first=2, middle=middle)

    def raw_event(self, data: bytes) -> bytes:
        # a frame is length-prefixed: the server may not rewrite it after it is built
        return event("contentBlockDelta", data.replace(CREDENTIALS, b"(credentials)"))

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"message": message}

    def error(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> FaultResponse:
        return error_response(
            status,
            _CODES.get(status, "InternalServerException"),
            message,
            {
                "content-length": "0",  # the fault server counts the body once credentials are in
                **(headers or {}),
            },
        )

    @staticmethod
    def sse(events: Sequence[bytes], **fields: Any) -> FaultResponse:
        return stream_response(events, **fields)

    @staticmethod
    def sse_bytes(body: bytes, size: int) -> FaultResponse:
        return stream_response(rechunk(body, [size]))
