"""Stateful batch API servers on 127.0.0.1 for the batch tests (OpenAI, Anthropic, Gemini).
The OpenAI one: `/v1/files` (multipart upload, content download) and `/v1/batches` (create,
retrieve, cancel), in the documented wire format. Tests move a job through its statuses with
`advance` and script its output and error files (`outputs`, `errors`: lines keyed by custom
id, written in the order given)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class _Handler(BaseHTTPRequestHandler):
    """What every batch server's handler shares: quiet, and a whole JSON reply."""

    content_type = "application/json"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype or self.content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Served:
    """A server on 127.0.0.1 in a thread, for `with`: `_serve` it in `__init__`."""

    _http: ThreadingHTTPServer

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def _root(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()


class OpenAIBatchServer(_Served):
    """The server; `uploaded` holds the JSONL lines of each uploaded input file."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.paths: list[str] = []
        self._n = 0
        server = self

        class Handler(_Handler):
            def do_GET(self) -> None:
                server.paths.append(f"GET {self.path}")
                m = re.fullmatch(r"/v1/files/([^/]+)/content", self.path)
                if m and m.group(1) in server.files:
                    return self._send(200, server.files[m.group(1)], "application/octet-stream")
                m = re.fullmatch(r"/v1/batches/([^/]+)", self.path)
                if m and m.group(1) in server.batches:
                    return self._send(200, json.dumps(server.batches[m.group(1)]).encode())
                self._send(404, b'{"error": {"message": "not found", "code": "not_found"}}')

            def do_POST(self) -> None:
                server.paths.append(f"POST {self.path}")
                length = int(self.headers.get("content-length", "0"))
                data = self.rfile.read(length)
                if self.path == "/v1/files":
                    start = data.index(b"\r\n\r\n", data.index(b'name="file"')) + 4
                    end = data.index(b"\r\n--", start)
                    file_id = server._id("file")
                    server.files[file_id] = data[start:end]
                    return self._send(
                        200,
                        json.dumps(
                            {
                                "id": file_id,
                                "object": "file",
                                "bytes": end - start,
                                "created_at": 0,
                                "filename": "batch.jsonl",
                                "purpose": "batch",
                                "status": "processed",
                            }
                        ).encode(),
                    )
                if self.path == "/v1/batches":
                    body = json.loads(data)
                    batch_id = server._id("batch")
                    server.batches[batch_id] = {
                        "id": batch_id,
                        "object": "batch",
                        "endpoint": body["endpoint"],
                        "input_file_id": body["input_file_id"],
                        "completion_window": body["completion_window"],
                        "status": "validating",
                        "created_at": 0,
                        "output_file_id": None,
                        "error_file_id": None,
                        "request_counts": {"total": 0, "completed": 0, "failed": 0},
                    }
                    return self._send(200, json.dumps(server.batches[batch_id]).encode())
                m = re.fullmatch(r"/v1/batches/([^/]+)/cancel", self.path)
                if m and m.group(1) in server.batches:
                    server.batches[m.group(1)]["status"] = "cancelling"
                    return self._send(200, json.dumps(server.batches[m.group(1)]).encode())
                self._send(404, b'{"error": {"message": "not found", "code": "not_found"}}')

        self._serve(Handler)

    def _id(self, kind: str) -> str:
        self._n += 1
        return f"{kind}_{self._n}"

    @property
    def base_url(self) -> str:
        """The `/v1` URL to give the model."""
        return f"{self._root}/v1"

    def input_lines(self, batch_id: str) -> list[dict[str, Any]]:
        """The uploaded request lines of a batch."""
        data = self.files[self.batches[batch_id]["input_file_id"]]
        return [json.loads(line) for line in data.splitlines() if line.strip()]

    def finish(
        self,
        batch_id: str,
        status: str,
        outputs: list[dict[str, Any]] | None = None,
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        """Move a batch to `status`, with output and error files of the given lines."""
        batch = self.batches[batch_id]
        batch["status"] = status
        for key, lines in (("output_file_id", outputs), ("error_file_id", errors)):
            if lines:
                file_id = self._id("file")
                self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
                batch[key] = file_id


class AnthropicBatchServer(_Served):
    """A stateful Message Batches server: create, retrieve, cancel, and the results file at
    `results_url`; `finish` ends a batch with scripted result lines."""

    def __init__(self) -> None:
        self.batches: dict[str, dict[str, Any]] = {}
        self.submitted: dict[str, list[dict[str, Any]]] = {}
        self.results: dict[str, bytes] = {}
        self.headers: list[dict[str, str]] = []
        self._n = 0
        server = self

        class Handler(_Handler):
            def _batch(self, batch_id: str) -> None:
                self._send(200, json.dumps(server.batches[batch_id]).encode())

            def do_GET(self) -> None:
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                m = re.fullmatch(r"/v1/messages/batches/([^/]+)/results", self.path)
                if m and m.group(1) in server.results:
                    return self._send(200, server.results[m.group(1)], "application/binary")
                m = re.fullmatch(r"/v1/messages/batches/([^/]+)", self.path)
                if m and m.group(1) in server.batches:
                    return self._batch(m.group(1))
                self._send(
                    404, b'{"type":"error","error":{"type":"not_found_error","message":"nope"}}'
                )

            def do_POST(self) -> None:
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                data = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.path == "/v1/messages/batches":
                    server._n += 1
                    batch_id = f"msgbatch_{server._n}"
                    server.submitted[batch_id] = json.loads(data)["requests"]
                    server.batches[batch_id] = {
                        "id": batch_id,
                        "type": "message_batch",
                        "processing_status": "in_progress",
                        "request_counts": {
                            "processing": len(server.submitted[batch_id]),
                            "succeeded": 0,
                            "errored": 0,
                            "canceled": 0,
                            "expired": 0,
                        },
                        "created_at": "2026-12-07T00:00:00Z",
                        "expires_at": "2026-12-08T00:00:00Z",
                        "ended_at": None,
                        "cancel_initiated_at": None,
                        "archived_at": None,
                        "results_url": None,
                    }
                    return self._batch(batch_id)
                m = re.fullmatch(r"/v1/messages/batches/([^/]+)/cancel", self.path)
                if m and m.group(1) in server.batches:
                    batch = server.batches[m.group(1)]
                    batch["processing_status"] = "canceling"
                    batch["cancel_initiated_at"] = "2026-12-07T00:01:00Z"
                    return self._batch(m.group(1))
                self._send(
                    404, b'{"type":"error","error":{"type":"not_found_error","message":"nope"}}'
                )

        self._serve(Handler)

    @property
    def base_url(self) -> str:
        """The URL to give the model (the SDK adds `/v1`)."""
        return self._root

    def finish(self, batch_id: str, lines: list[dict[str, Any]]) -> None:
        """End a batch with these result lines (counted by their result type)."""
        batch = self.batches[batch_id]
        batch["processing_status"] = "ended"
        batch["ended_at"] = "2026-12-07T01:00:00Z"
        counts = {k: 0 for k in batch["request_counts"]}
        for line in lines:
            kind = line["result"]["type"]
            key = {
                "succeeded": "succeeded",
                "errored": "errored",
                "canceled": "canceled",
                "expired": "expired",
            }[kind]
            counts[key] += 1
        batch["request_counts"] = counts
        batch["results_url"] = f"{self.base_url}/v1/messages/batches/{batch_id}/results"
        self.results[batch_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()


class GeminiBatchServer(_Served):
    """A stateful Gemini batch-mode server (the Gemini API, `v1beta`): `models/<id>:
    batchGenerateContent` with inline requests, `batches/<id>` (the long-running operation whose
    `metadata` holds the job), `batches/<id>:cancel`; `finish` ends a job in a `BATCH_STATE_*`
    with scripted inline responses (each `{"metadata": {"key": ...}, "response" | "error"}`)."""

    def __init__(self) -> None:
        self.batches: dict[str, dict[str, Any]] = {}
        self.submitted: dict[str, dict[str, Any]] = {}
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self._n = 0
        server = self

        class Handler(_Handler):
            content_type = "application/json; charset=UTF-8"

            def _not_found(self) -> None:
                self._send(
                    404,
                    b'{"error": {"code": 404, "message": "Requested entity was not found.", '
                    b'"status": "NOT_FOUND"}}',
                )

            def do_GET(self) -> None:
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                server.paths.append(f"GET {self.path}")
                m = re.fullmatch(r"/v1beta/batches/([^/?:]+)", self.path.split("?")[0])
                if m and m.group(1) in server.batches:
                    return self._send(200, json.dumps(server.batches[m.group(1)]).encode())
                self._not_found()

            def do_POST(self) -> None:
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                server.paths.append(f"POST {self.path}")
                data = self.rfile.read(int(self.headers.get("content-length", "0")))
                path = self.path.split("?")[0]
                m = re.fullmatch(r"/v1beta/models/([^/:]+):batchGenerateContent", path)
                if m:
                    server._n += 1
                    batch_id = f"batch{server._n}"
                    body = json.loads(data)["batch"]
                    server.submitted[batch_id] = body
                    count = len(body["inputConfig"]["requests"]["requests"])
                    server.batches[batch_id] = {
                        "name": f"batches/{batch_id}",
                        "metadata": {
                            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta."
                            "GenerateContentBatch",
                            "name": f"batches/{batch_id}",
                            "model": f"models/{m.group(1)}",
                            "displayName": body.get("displayName", ""),
                            "createTime": "2026-12-07T00:00:00Z",
                            "updateTime": "2026-12-07T00:00:00Z",
                            "batchStats": {
                                "requestCount": str(count),
                                "pendingRequestCount": str(count),
                            },
                            "state": "BATCH_STATE_PENDING",
                        },
                    }
                    return self._send(200, json.dumps(server.batches[batch_id]).encode())
                m = re.fullmatch(r"/v1beta/batches/([^/:]+):cancel", path)
                if m and m.group(1) in server.batches:
                    server.batches[m.group(1)]["metadata"]["state"] = "BATCH_STATE_CANCELLED"
                    return self._send(200, b"{}")
                self._not_found()

        self._serve(Handler)

    @property
    def base_url(self) -> str:
        """The URL to give the model (the SDK adds `/v1beta`)."""
        return self._root

    def requests(self, batch_id: str) -> list[dict[str, Any]]:
        """The inline requests of a batch (`{"request": ..., "metadata": ...}`)."""
        return list(self.submitted[batch_id.split("/")[-1]]["inputConfig"]["requests"]["requests"])

    def set_state(self, batch_id: str, state: str) -> None:
        """Move a batch to a `BATCH_STATE_*`."""
        self.batches[batch_id.split("/")[-1]]["metadata"]["state"] = state

    def finish(self, batch_id: str, state: str, responses: list[dict[str, Any]]) -> None:
        """End a batch in `state` with these inline responses, in the order given."""
        batch = self.batches[batch_id.split("/")[-1]]
        batch["metadata"]["state"] = state
        batch["metadata"]["endTime"] = "2026-12-07T01:00:00Z"
        batch["done"] = True
        output = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1beta."
            "GenerateContentBatchOutput",
            "inlinedResponses": {"inlinedResponses": responses},
        }
        batch["metadata"]["output"] = output
        batch["response"] = output
