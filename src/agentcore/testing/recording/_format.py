"""The recording file: one exchange per record, bodies as JSON, secrets never written.

```
{
  "exchanges": [
    {
      "request": {"body": {...}, "headers": {...}, "method": "POST", "url": "https://..."},
      "response": {
        "events": [
          {"data": {...}, "event": "message_start"},
          {"text": "[DONE]"}
        ],
        "headers": {"content-type": "text/event-stream"},
        "status": 200
      }
    }
  ],
  "version": 1
}
```

Keys are sorted and nothing that changes from run to run is kept (no timestamps, no request ids,
no SDK version headers), so that recording the same traffic twice writes the same file. A
response body is kept in the form that reads best: server-sent events as one line per event
(`events`), AWS event-stream frames as one line per frame (`frames`), a JSON body as JSON
(`body`), anything else as `text` (or `base64` when it is not UTF-8). Replaying re-encodes it.

Request headers are kept only from a short list of harmless ones; credential headers, AWS
signatures and secret-looking query parameters never reach the file, and every secret value a
request carried is also scrubbed from the whole exchange (a server may quote it back).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import re
import struct
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from secrets import token_hex
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ...errors import AgentCoreError

__all__ = [
    "FORMAT_VERSION",
    "MAX_DEPTH",
    "REDACTED",
    "RecordingError",
    "decode_frames",
    "dump_recording",
    "encode_frames",
    "load_recording",
    "request_record",
    "response_chunks",
    "response_record",
    "scrub",
    "secret_values_of",
    "write_file",
]

FORMAT_VERSION = 1
REDACTED = "<redacted>"
IGNORED = "<ignored>"

_KEPT_REQUEST_HEADERS = frozenset(
    {"accept", "anthropic-beta", "anthropic-version", "content-type", "openai-beta"}
)
_KEPT_RESPONSE_HEADERS = frozenset(
    {"content-type", "retry-after", "retry-after-ms", "x-amzn-errortype", "x-should-retry"}
)
_SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-amz-security-token",
        "cookie",
    }
)
_SECRET_NAME = re.compile(r"key|token|secret|sig|credential|password|auth", re.IGNORECASE)
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
_MIN_SECRET = 8  # shorter values are not scrubbed from text (too many false hits)
EVENT_STREAM = "text/event-stream"
AWS_EVENT_STREAM = "application/vnd.amazon.eventstream"


class RecordingError(AgentCoreError):
    """A recording cannot be used: the file is missing or unreadable, or the mode is unknown."""


# --- requests ---------------------------------------------------------------------------------


def _scrub_url(url: str) -> str:
    parts = urlsplit(url)
    if not parts.query:
        return url
    query = [
        (name, REDACTED if _SECRET_NAME.search(name) else value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit(parts._replace(query=urlencode(query, safe="<>:/")))


def _body_fields(data: bytes) -> dict[str, Any]:
    if not data:
        return {}
    try:
        return {"body": json.loads(data)}
    except ValueError:
        pass
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def request_record(
    method: str,
    url: str,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    ignore_fields: Iterable[str] = (),
) -> dict[str, Any]:
    """The file form of a request: method, URL (secret query values redacted), the harmless
    headers, and the body as JSON (top-level `ignore_fields` replaced by a marker)."""
    kept = {name.lower(): value for name, value in headers if name.lower() in _KEPT_REQUEST_HEADERS}
    record: dict[str, Any] = {"method": method.upper(), "url": _scrub_url(url), "headers": kept}
    record.update(_body_fields(body))
    value = record.get("body")
    if isinstance(value, dict):
        for name in ignore_fields:
            if name in value:
                value[name] = IGNORED
    return record


def secret_values_of(headers: Iterable[tuple[str, str]], url: str = "") -> set[str]:
    """The secret values a request carries: credential headers (a bearer token without its
    scheme), the access key id and signature of an AWS signature, secret query values."""
    found: set[str] = set()
    for name, value in headers:
        lowered = name.lower()
        if lowered not in _SECRET_HEADERS and not lowered.startswith("x-amz-"):
            continue
        if lowered.startswith("x-amz-") and lowered != "x-amz-security-token":
            continue  # dates and content hashes: not secret
        found.add(value)
        _, _, rest = value.partition(" ")
        if rest:
            found.add(rest.strip())
        for match in re.finditer(r"(?:Credential=([^/,\s]+))|(?:Signature=([0-9a-fA-F]+))", value):
            found.update(g for g in match.groups() if g)
    for name, value in parse_qsl(urlsplit(url).query):
        if _SECRET_NAME.search(name):
            found.add(value)
    return {v for v in found if len(v) >= _MIN_SECRET}


def environment_secrets() -> set[str]:
    """Values of environment variables whose names say they hold a secret (API keys, tokens)."""
    return {
        value
        for name, value in os.environ.items()
        if _SECRET_ENV.search(name) and len(value) >= _MIN_SECRET
    }


def scrub(value: Any, secrets: Iterable[str]) -> Any:
    """`value` with every occurrence of a secret in its strings (and keys) redacted."""
    ordered = sorted(set(secrets), key=len, reverse=True)
    if not ordered:
        return value

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            for secret in ordered:
                if secret in item:
                    item = item.replace(secret, REDACTED)
            return item
        if isinstance(item, list):
            return [clean(v) for v in item]
        if isinstance(item, dict):
            return {clean(k): clean(v) for k, v in item.items()}
        return item

    return clean(value)


# --- responses --------------------------------------------------------------------------------


def _media_type(headers: Mapping[str, str]) -> str:
    return headers.get("content-type", "").split(";")[0].strip().lower()


def _sse_records(data: bytes) -> list[dict[str, Any]]:
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    events: list[dict[str, Any]] = []
    for block in text.split("\n\n"):
        name: str | None = None
        lines: list[str] = []
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                lines.append(value)
        if not lines:
            continue
        joined = "\n".join(lines)
        record: dict[str, Any] = {}
        if name is not None:
            record["event"] = name
        try:
            record["data"] = json.loads(joined)
        except ValueError:
            record["text"] = joined
        events.append(record)
    return events


def _sse_bytes(record: Mapping[str, Any]) -> bytes:
    out = f"event: {record['event']}\n" if "event" in record else ""
    if "data" in record:
        text = json.dumps(record["data"], ensure_ascii=False, separators=(",", ":"))
    else:
        text = str(record.get("text", ""))
    out += "".join(f"data: {line}\n" for line in text.split("\n"))
    return (out + "\n").encode("utf-8")


# AWS event-stream frames: total length | headers length | prelude CRC | headers | payload | CRC
_BOOL_TRUE, _BOOL_FALSE, _BYTE, _SHORT, _INT, _LONG, _BYTES, _STRING, _TIME, _UUID = range(10)


def decode_frames(data: bytes) -> list[dict[str, Any]]:
    """The frames of an AWS event stream, each as `{"headers": {...}, "payload": JSON}`
    (`payload_text` or `payload_base64` when the payload is not JSON)."""
    frames: list[dict[str, Any]] = []
    offset = 0
    while offset + 12 <= len(data):
        total, header_length = struct.unpack_from(">II", data, offset)
        if total < 16 or offset + total > len(data):
            break
        headers_end = offset + 12 + header_length
        headers = _decode_headers(data[offset + 12 : headers_end])
        payload = data[headers_end : offset + total - 4]
        frame: dict[str, Any] = {"headers": headers}
        names = {"body": "payload", "text": "payload_text", "base64": "payload_base64"}
        frame.update({names[k]: v for k, v in _body_fields(payload).items()})
        frames.append(frame)
        offset += total
    return frames


def _decode_headers(data: bytes) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    offset = 0
    while offset < len(data):
        name_length = data[offset]
        name = data[offset + 1 : offset + 1 + name_length].decode("utf-8")
        offset += 1 + name_length
        kind = data[offset]
        offset += 1
        value: Any
        if kind in (_BOOL_TRUE, _BOOL_FALSE):
            value = kind == _BOOL_TRUE
        elif kind in (_BYTE, _SHORT, _INT, _LONG):
            size = {_BYTE: 1, _SHORT: 2, _INT: 4, _LONG: 8}[kind]
            value = int.from_bytes(data[offset : offset + size], "big", signed=True)
            offset += size
        elif kind in (_BYTES, _STRING):
            (length,) = struct.unpack_from(">H", data, offset)
            raw = data[offset + 2 : offset + 2 + length]
            value = (
                raw.decode("utf-8")
                if kind == _STRING
                else {"base64": base64.b64encode(raw).decode()}
            )
            offset += 2 + length
        else:  # timestamps and uuids: kept as their bytes
            size = 8 if kind == _TIME else 16
            value = {
                "base64": base64.b64encode(data[offset : offset + size]).decode(),
                "type": kind,
            }
            offset += size
        headers[name] = value
    return headers


def _encode_header(name: str, value: Any) -> bytes:
    key = name.encode("utf-8")
    out = bytes([len(key)]) + key
    if isinstance(value, bool):
        return out + bytes([_BOOL_TRUE if value else _BOOL_FALSE])
    if isinstance(value, int):
        return out + bytes([_LONG]) + value.to_bytes(8, "big", signed=True)
    if isinstance(value, dict) and "type" in value:
        return out + bytes([int(value["type"])]) + base64.b64decode(value["base64"])
    if isinstance(value, dict):
        raw = base64.b64decode(value["base64"])
        return out + bytes([_BYTES]) + struct.pack(">H", len(raw)) + raw
    raw = str(value).encode("utf-8")
    return out + bytes([_STRING]) + struct.pack(">H", len(raw)) + raw


def encode_frames(frames: Iterable[Mapping[str, Any]]) -> Iterator[bytes]:
    """Each frame of `decode_frames` as the bytes of an AWS event-stream message."""
    for frame in frames:
        headers = b"".join(_encode_header(k, v) for k, v in frame.get("headers", {}).items())
        payload = _payload_bytes(frame)
        total = 12 + len(headers) + len(payload) + 4
        prelude = struct.pack(">II", total, len(headers))
        prelude += struct.pack(">I", binascii.crc32(prelude) & 0xFFFFFFFF)
        message = prelude + headers + payload
        yield message + struct.pack(">I", binascii.crc32(message) & 0xFFFFFFFF)


def _payload_bytes(frame: Mapping[str, Any]) -> bytes:
    if "payload" in frame:
        return json.dumps(frame["payload"], ensure_ascii=False, separators=(",", ":")).encode()
    if "payload_text" in frame:
        return str(frame["payload_text"]).encode("utf-8")
    if "payload_base64" in frame:
        return base64.b64decode(frame["payload_base64"])
    return b""


def response_record(status: int, headers: Iterable[tuple[str, str]], body: bytes) -> dict[str, Any]:
    """The file form of a response: status, the headers replays need, and the body read."""
    kept = {
        name.lower(): value for name, value in headers if name.lower() in _KEPT_RESPONSE_HEADERS
    }
    record: dict[str, Any] = {"status": status, "headers": kept}
    media = _media_type(kept)
    if media == EVENT_STREAM and 200 <= status < 300:
        record["events"] = _sse_records(body)
    elif media == AWS_EVENT_STREAM and 200 <= status < 300:
        record["frames"] = decode_frames(body)
    else:
        record.update(_body_fields(body))
    return record


def response_chunks(record: Mapping[str, Any]) -> list[bytes]:
    """The body of a recorded response, as the chunks a replay sends (one per event or frame)."""
    if "events" in record:
        return [_sse_bytes(event) for event in record["events"]]
    if "frames" in record:
        return list(encode_frames(record["frames"]))
    if "body" in record:
        return [json.dumps(record["body"], ensure_ascii=False).encode("utf-8")]
    if "text" in record:
        return [str(record["text"]).encode("utf-8")]
    if "base64" in record:
        return [base64.b64decode(record["base64"])]
    return []


# --- the file ---------------------------------------------------------------------------------

_ONE_LINE_ITEMS = frozenset({"events", "frames"})


def _dump(value: Any, indent: int, one_line: bool) -> str:
    if one_line or not isinstance(value, (dict, list)) or not value:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, list):
        items = [inner + _dump(item, indent + 2, False) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    lines = []
    for key in sorted(value):
        item = value[key]
        if key in _ONE_LINE_ITEMS and isinstance(item, list) and item:
            rows = [inner + "  " + _dump(row, 0, True) for row in item]
            text = "[\n" + ",\n".join(rows) + "\n" + inner + "]"
        else:
            text = _dump(item, indent + 2, False)
        lines.append(f"{inner}{json.dumps(key, ensure_ascii=False)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n" + pad + "}"


def dump_recording(exchanges: list[dict[str, Any]]) -> str:
    """The text of a recording file (pretty JSON; one line per streamed event or frame)."""
    return _dump({"exchanges": exchanges, "version": FORMAT_VERSION}, 0, False) + "\n"


MAX_DEPTH = 200
"""How deep a recording's JSON may nest (request bodies nest a dozen levels; a file nested far
deeper is refused before it is parsed, rather than overflowing the parser's stack)."""
_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _nesting(text: str) -> int:
    """How deep the brackets of a JSON text nest (strings skipped), in one pass."""
    depth = deepest = 0
    for match in _BRACKETS.finditer(text):
        char = match.group()
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def write_file(path: Path, text: str) -> None:
    """Write `text` to `path` atomically: into a new file of a random name in the same folder,
    created exclusively (never through a link or over a file planted there), then renamed
    over `path` (a link at `path` is replaced, not followed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(100):
        temporary = path.with_name(f".{path.name}.{token_hex(8)}.tmp")
        try:
            fd = os.open(temporary, _EXCLUSIVE | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - 100 random names taken
        raise RecordingError(f"cannot write the recording {path}: no free temporary name")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(text.encode("utf-8"))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def load_recording(path: Path) -> list[dict[str, Any]]:
    """The exchanges of a recording file.

    Raises:
        RecordingError: the file cannot be read, is not JSON, or is not a recording.
    """
    try:
        text = path.read_text(encoding="utf-8")
        depth = _nesting(text)
        if depth > MAX_DEPTH:
            raise RecordingError(
                f"cannot read the recording {path}: it nests {depth:,} levels deep; "
                f"a recording nests at most {MAX_DEPTH}"
            )
        data = json.loads(text)
    except FileNotFoundError:
        raise RecordingError(
            f"no recording at {path}: record it first (mode='missing' or 'rerecord'; "
            "`pytest --agentcore-record=missing`; `agentcore run ... --record FILE`)"
        ) from None
    except (OSError, ValueError) as exc:
        raise RecordingError(f"cannot read the recording {path}: {exc}") from exc
    exchanges = data.get("exchanges") if isinstance(data, dict) else None
    version = data.get("version") if isinstance(data, dict) else None
    if not isinstance(exchanges, list) or version != FORMAT_VERSION:
        raise RecordingError(
            f"{path} is not an agentcore recording (expected a JSON object with "
            f'"version": {FORMAT_VERSION} and a list of "exchanges")'
        )
    for index, exchange in enumerate(exchanges):
        if not (
            isinstance(exchange, dict)
            and isinstance(exchange.get("request"), dict)
            and isinstance(exchange.get("response"), dict)
        ):
            raise RecordingError(
                f"{path}: exchange {index + 1} is not an object with a request and a response"
            )
    return exchanges
