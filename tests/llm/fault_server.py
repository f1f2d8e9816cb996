"""A fault-injecting HTTP server on 127.0.0.1 that speaks every provider's wire format.

`FaultServer` is a `ReplayServer` (requests recorded, responses served in queue order) whose
handler can also misbehave on purpose, per response (`FaultResponse`):

* reset the connection (a TCP RST, not a polite close) before the response or after N chunks;
* wait, after N chunks, until the test says the client has read them (`FaultServer.gate`), so
  that a reset cannot overtake data the client has not read yet;
* stall after the chunks (hold the connection open, silent, until the server stops), or send a
  keep-alive comment every few milliseconds forever;
* echo the credentials the SDK sent (`Authorization: Bearer ...`, `x-api-key: ...`,
  `x-goog-api-key: ...`) wherever a body holds `CREDENTIALS`, the way careless gateways and
  some providers quote the request back in their error bodies.

`Wire` and its four subclasses (`WIRES[api]`) write answers in each API's documented streaming
format: OpenAI Chat Completions (`/chat/completions`), OpenAI Responses (`/responses`), Anthropic
Messages (`/v1/messages`) and Google Gemini (`:streamGenerateContent?alt=sse`), shaped like the
recorded fixtures under `fixtures/<api>/`. An `Answer` is a list of SSE events plus the places a
fault cuts it: after the first text delta (`first`) and in the middle (`middle`).
"""

from __future__ import annotations

import itertools
import json
import socket
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from agentcore.llm.model import Model, ModelCost

from .replay_server import ReplayServer, ScriptedResponse, _Handler, rechunk

__all__ = [
    "API_KEY",
    "APIS",
    "CREDENTIALS",
    "WIRES",
    "Answer",
    "AnthropicWire",
    "Call",
    "CompletionsWire",
    "FaultResponse",
    "FaultServer",
    "GeminiWire",
    "ResponsesWire",
    "Wire",
]

API_KEY = "sk-test-SECRET-1234567890"
"""The key every test request carries; it must appear in no text the library produces."""

CREDENTIALS = b"{{credentials}}"
"""Replaced, in a response body, by the credential header the request carried."""

APIS = ("openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai")

_GATE_WAIT = 10.0  # seconds a gated response waits for the test at most
_CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-goog-api-key")


@dataclass(slots=True, kw_only=True)
class FaultResponse(ScriptedResponse):
    """A `ScriptedResponse` with a fault (at most one of the fault fields is meant to be set).

    Attributes:
        reset_at_once: reset the connection as soon as the request is read (no status line).
        reset_after: reset the connection after writing this many chunks (0: after the headers).
        gate_after: after writing this many chunks, wait until `FaultServer.gate` is set.
        stall: after the chunks, send nothing more and keep the connection open until the
            server stops.
        forever: after the chunks, send this every `forever_every` seconds until the client
            leaves or the server stops.
        forever_every: the interval of `forever`.
    """

    reset_at_once: bool = False
    reset_after: int | None = None
    gate_after: int | None = None
    stall: bool = False
    forever: bytes | None = None
    forever_every: float = 0.02


class _FaultHandler(_Handler):
    server: Any

    def _credentials(self) -> bytes:
        for name in _CREDENTIAL_HEADERS:
            value = self.headers.get(name)
            if value:
                return f"{name.title()}: {value}".encode()
        return b"(no credentials)"

    def _reset(self) -> None:
        # SO_LINGER with a zero timeout makes close() send RST instead of FIN
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def _chunk(self, data: bytes, chunked: bool) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
        self.wfile.flush()

    def _respond(self, response: ScriptedResponse) -> None:
        if not isinstance(response, FaultResponse):
            super()._respond(response)
            return
        if response.reset_at_once:
            self._reset()
            return
        credentials = self._credentials()
        chunks = [chunk.replace(CREDENTIALS, credentials) for chunk in response.chunks]
        headers = {k.lower(): v for k, v in response.headers.items()}
        chunked = "content-length" not in headers
        if not chunked:
            headers["content-length"] = str(sum(len(chunk) for chunk in chunks))
        self.send_response(response.status)
        for name, value in headers.items():
            self.send_header(name, value)
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        replay: FaultServer = self.server.replay
        stopping = replay._stopping
        for index in range(len(chunks) + 1):
            if index == response.gate_after:
                replay.gate.wait(_GATE_WAIT)
            if index == response.reset_after:
                self._reset()
                return
            if index == len(chunks):
                break
            wait = response.delay_before(index)
            if wait > 0 and stopping.wait(wait):
                self._reset()
                return
            self._chunk(chunks[index], chunked)
        if response.stall:
            stopping.wait()
            self._reset()
            return
        if response.forever is not None:
            # a client that leaves makes the write fail; `_serve` counts that as a drop
            while not stopping.wait(response.forever_every):
                self._chunk(response.forever, chunked)
            self._reset()
            return
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()


class FaultServer(ReplayServer):
    """A `ReplayServer` that also serves `FaultResponse`s.

    Attributes:
        gate: set by a test once the client has read what it must read before a gated fault
            (`FaultResponse.gate_after`) strikes.
    """

    def __init__(self) -> None:
        super().__init__()
        self._server.RequestHandlerClass = _FaultHandler
        self.gate = threading.Event()


# --- the wire formats -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call in an answer: its id, name and the argument text in fragments as streamed."""

    id: str
    name: str
    fragments: Sequence[str]

    @property
    def arguments(self) -> str:
        return "".join(self.fragments)


@dataclass(slots=True)
class Answer:
    """One streamed answer: the SSE events, and where faults cut it.

    Attributes:
        events: one `bytes` per server-sent event (each with its blank-line terminator).
        first: how many events make up the answer up to its first text delta.
        middle: how many events make up the answer up to a point in its middle (inside the
            tool call where the format streams one, else after the text).
    """

    events: list[bytes]
    first: int
    middle: int

    def body(self) -> bytes:
        return b"".join(self.events)


def _openai_error(status: int, message: str) -> dict[str, Any]:
    kind = "rate_limit_error" if status == 429 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _data(payload: Any, event: str | None = None) -> bytes:
    line = b"data: " + json.dumps(payload, ensure_ascii=False).encode()
    return (f"event: {event}\n".encode() if event else b"") + line + b"\n\n"


class Wire:
    """Writes answers, errors and models for one API."""

    api: ClassVar[str]
    provider: ClassVar[str]
    model_id: ClassVar[str]
    prefix: ClassVar[str]  # the base URL's path, as the SDK expects it
    endpoint: ClassVar[str]  # how every request path of this API ends (query included)
    delta_event: ClassVar[str | None] = None  # the SSE `event:` name of a text delta, if named

    def model(self, server: ReplayServer) -> Model:
        """A model of this API whose base URL is `server`."""
        return Model(
            id=self.model_id,
            api=self.api,
            provider=self.provider,
            base_url=server.base_url(self.prefix),
            cost=ModelCost(input=1.0, output=2.0),
            context_window=200_000,
            max_tokens=4096,
        )

    def answer(self, texts: Sequence[str], call: Call | None = None) -> Answer:
        """A streamed answer: `texts` as text deltas, then `call` if given, then the end."""
        raise NotImplementedError

    def raw_event(self, data: bytes) -> bytes:
        """An event whose data is `data` as it stands (named like a text delta where this API
        names its events, so that the SDK does not skip it as an unknown kind)."""
        name = f"event: {self.delta_event}\n".encode() if self.delta_event else b""
        return name + b"data: " + data + b"\n\n"

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def error(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> FaultResponse:
        """An error response in this API's JSON shape (`CREDENTIALS` in `message` is echoed)."""
        data = json.dumps(self.error_body(status, message)).encode()
        return FaultResponse(
            status=status,
            headers={"content-type": "application/json", "content-length": "0", **(headers or {})},
            chunks=[data],
        )

    @staticmethod
    def sse(events: Sequence[bytes], **fields: Any) -> FaultResponse:
        """An event stream with the given events, one chunk each."""
        return FaultResponse(
            headers={"content-type": "text/event-stream"}, chunks=list(events), **fields
        )

    @staticmethod
    def sse_bytes(body: bytes, size: int) -> FaultResponse:
        """An event stream cut into chunks of `size` bytes, whatever the event boundaries."""
        return FaultResponse(
            headers={"content-type": "text/event-stream"}, chunks=rechunk(body, [size])
        )


class CompletionsWire(Wire):
    api = "openai-completions"
    provider = "openai"
    model_id = "gpt-fault"
    prefix = "/v1"
    endpoint = "/v1/chat/completions"

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _data(
            {
                "id": "chatcmpl-fault",
                "object": "chat.completion.chunk",
                "created": 1733140000,
                "model": self.model_id,
                "choices": [choice],
                "usage": None,
            }
        )

    def answer(self, texts: Sequence[str], call: Call | None = None) -> Answer:
        events = [self._chunk({"role": "assistant", "content": ""})]
        events += [self._chunk({"content": text}) for text in texts]
        middle = len(events)
        if call is not None:
            head = {"index": 0, "id": call.id, "type": "function"}
            events.append(
                self._chunk(
                    {"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]}
                )
            )
            for fragment in call.fragments:
                events.append(
                    self._chunk({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]})
                )
            middle += 2
        events.append(self._chunk({}, "tool_calls" if call else "stop"))
        usage = {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}
        events.append(
            _data(
                {
                    "id": "chatcmpl-fault",
                    "object": "chat.completion.chunk",
                    "created": 1733140000,
                    "model": self.model_id,
                    "choices": [],
                    "usage": usage,
                }
            )
        )
        events.append(b"data: [DONE]\n\n")
        return Answer(events, first=2, middle=middle)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return _openai_error(status, message)


class ResponsesWire(Wire):
    api = "openai-responses"
    provider = "openai"
    model_id = "gpt-fault"
    prefix = "/v1"
    endpoint = "/v1/responses"
    delta_event = "response.output_text.delta"

    def _response(self, status: str, output: list[Any], usage: Any) -> dict[str, Any]:
        return {
            "id": "resp_fault",
            "object": "response",
            "created_at": 1760000000,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": self.model_id,
            "output": output,
            "usage": usage,
        }

    def answer(self, texts: Sequence[str], call: Call | None = None) -> Answer:
        seq = itertools.count()

        def event(kind: str, **fields: Any) -> bytes:
            return _data({"type": kind, "sequence_number": next(seq), **fields}, kind)

        message = {"id": "msg_fault", "type": "message", "role": "assistant"}
        part = {"type": "output_text", "annotations": [], "text": "".join(texts)}
        at = {"item_id": "msg_fault", "output_index": 0, "content_index": 0}
        events = [
            event("response.created", response=self._response("in_progress", [], None)),
            event(
                "response.output_item.added",
                output_index=0,
                item={**message, "status": "in_progress", "content": []},
            ),
            event("response.content_part.added", **at, part={**part, "text": ""}),
        ]
        events += [event("response.output_text.delta", **at, delta=t, logprobs=[]) for t in texts]
        done_message = {**message, "status": "completed", "content": [part]}
        events += [
            event("response.output_text.done", **at, text=part["text"], logprobs=[]),
            event("response.content_part.done", **at, part=part),
            event("response.output_item.done", output_index=0, item=done_message),
        ]
        middle = len(events)
        output: list[Any] = [done_message]
        if call is not None:
            item = {
                "id": "fc_fault",
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
            }
            where = {"item_id": "fc_fault", "output_index": 1}
            events.append(
                event(
                    "response.output_item.added",
                    output_index=1,
                    item={**item, "status": "in_progress", "arguments": ""},
                )
            )
            events += [
                event("response.function_call_arguments.delta", **where, delta=fragment)
                for fragment in call.fragments
            ]
            done_call = {**item, "status": "completed", "arguments": call.arguments}
            events += [
                event("response.function_call_arguments.done", **where, arguments=call.arguments),
                event("response.output_item.done", output_index=1, item=done_call),
            ]
            output.append(done_call)
            middle += 2
        usage = {
            "input_tokens": 50,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 70,
        }
        events.append(
            event("response.completed", response=self._response("completed", output, usage))
        )
        return Answer(events, first=4, middle=middle)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return _openai_error(status, message)


class AnthropicWire(Wire):
    api = "anthropic-messages"
    provider = "anthropic"
    model_id = "claude-fault"
    prefix = ""
    endpoint = "/v1/messages"
    delta_event = "content_block_delta"

    def answer(self, texts: Sequence[str], call: Call | None = None) -> Answer:
        usage = {
            "input_tokens": 50,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 1,
        }
        message = {
            "id": "msg_fault",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": self.model_id,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        }

        def event(kind: str, **fields: Any) -> bytes:
            return _data({"type": kind, **fields}, kind)

        events = [
            event("message_start", message=message),
            event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        ]
        events += [
            event("content_block_delta", index=0, delta={"type": "text_delta", "text": t})
            for t in texts
        ]
        events.append(event("content_block_stop", index=0))
        middle = len(events)
        if call is not None:
            block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
            events.append(event("content_block_start", index=1, content_block=block))
            events += [
                event(
                    "content_block_delta",
                    index=1,
                    delta={"type": "input_json_delta", "partial_json": fragment},
                )
                for fragment in call.fragments
            ]
            events.append(event("content_block_stop", index=1))
            middle += 2
        stop = {"stop_reason": "tool_use" if call else "end_turn", "stop_sequence": None}
        events.append(event("message_delta", delta=stop, usage={"output_tokens": 20}))
        events.append(event("message_stop"))
        return Answer(events, first=3, middle=middle)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}


class GeminiWire(Wire):
    api = "google-generative-ai"
    provider = "google"
    model_id = "gemini-fault"
    prefix = "/v1beta"
    endpoint = ":streamGenerateContent?alt=sse"

    def _chunk(self, parts: list[Any], finish: str | None, output: int) -> bytes:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        usage = {"promptTokenCount": 50, "candidatesTokenCount": output}
        usage["totalTokenCount"] = 50 + output
        return _data(
            {
                "candidates": [candidate],
                "usageMetadata": usage,
                "modelVersion": self.model_id,
                "responseId": "resp-fault",
            }
        )

    def answer(self, texts: Sequence[str], call: Call | None = None) -> Answer:
        # Gemini streams whole parts: a call is one part, its arguments a JSON object
        events = [
            self._chunk(
                [{"text": t}], "STOP" if call is None and i == len(texts) - 1 else None, i + 1
            )
            for i, t in enumerate(texts)
        ]
        middle = len(events)
        if call is not None:
            part = {"functionCall": {"name": call.name, "args": json.loads(call.arguments)}}
            events.append(self._chunk([part], "STOP", 20))
        return Answer(events, first=1, middle=middle)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        names = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
        return {
            "error": {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}
        }


WIRES: dict[str, Wire] = {
    wire.api: wire for wire in (CompletionsWire(), ResponsesWire(), AnthropicWire(), GeminiWire())
}
"""The wire format of each API, by `Model.api`."""
