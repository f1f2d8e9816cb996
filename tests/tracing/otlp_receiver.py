"""A small OTLP/HTTP receiver on 127.0.0.1: it accepts what the standard exporters POST to
`/v1/traces` and `/v1/metrics`, decodes the protobuf bodies (`opentelemetry-proto`), and keeps
the spans and metric names it received."""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class ReceivedSpan:
    name: str
    span_id: bytes
    parent_span_id: bytes
    trace_id: bytes
    attributes: dict[str, Any]
    status_code: int
    service: str


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(x) for x in v.array_value.values)
    return getattr(v, kind) if kind else None


@dataclass
class OtlpReceiver:
    spans: list[ReceivedSpan] = field(default_factory=list)
    metric_names: set[str] = field(default_factory=set)
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                reply = receiver.accept(self.path, body, dict(self.headers.items()))
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def accept(self, path: str, body: bytes, headers: dict[str, str]) -> bytes:
        with self.lock:
            self.paths.append(path)
            self.headers.append(headers)
            if path == "/v1/traces":
                request = ExportTraceServiceRequest.FromString(body)
                for resource_spans in request.resource_spans:
                    resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                    for scope in resource_spans.scope_spans:
                        for span in scope.spans:
                            self.spans.append(
                                ReceivedSpan(
                                    name=span.name,
                                    span_id=span.span_id,
                                    parent_span_id=span.parent_span_id,
                                    trace_id=span.trace_id,
                                    attributes={a.key: _value(a.value) for a in span.attributes},
                                    status_code=span.status.code,
                                    service=str(resource.get("service.name")),
                                )
                            )
                return ExportTraceServiceResponse().SerializeToString()
            if path == "/v1/metrics":
                metrics = ExportMetricsServiceRequest.FromString(body)
                for resource_metrics in metrics.resource_metrics:
                    for scope in resource_metrics.scope_metrics:
                        self.metric_names.update(m.name for m in scope.metrics)
                return ExportMetricsServiceResponse().SerializeToString()
            return b""

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
