"""A remote A2A agent as an `AgentTool`: `a2a_tool(url, ...)`.

The model calls the tool with a `task`; it is sent to the remote agent as a streamed message.
Each streamed event reaches the calling run as a `tool_execution_update` (`partial_result`: the
text that event brought, not the text so far, so that a long stream costs the caller linear
work; `details`: the A2A event as JSON). The final answer is the result, cut with a note after
`MAX_RESULT_CHARS` characters as an MCP tool's; the agent card is read with a byte limit and
every read has a timeout by default.
the remote task's usage, when the agent reports it (an agentcore server does), is the result's
usage. An abort of the calling run cancels the remote task. A remote failure, a refusal, an
unreachable agent or a task that needs input is an error result naming the agent and what went
wrong.

Headers (a bearer token, say) are the caller's: given as a mapping or a function returning one
(called for each call, for tokens that rotate), they are sent with the requests of a call and
kept nowhere else: not in results, details, events or logs. They go only to `url`'s origin:
an interface the agent card names on another origin is refused unless `allowed_origins` lists
it, and redirects are not followed.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import anyio

from .. import (
    AbortSignal,
    AgentTool,
    AgentToolResult,
    ConfigError,
    Cost,
    TextContent,
    ToolExecutionMode,
    ToolUpdateCallback,
    Usage,
    cancel_on_abort,
)
from ..tools import MAX_RESULT_CHARS, capped_content, task_tool
from ._json import plain
from ._sdk import import_sdk_client

__all__ = ["a2a_tool"]

Headers = Mapping[str, str] | Callable[[], Mapping[str, str] | Awaitable[Mapping[str, str]]]

_log = logging.getLogger("agentcore.a2a")

_CANCEL_TIMEOUT = 10.0
_ID_WAIT = 5.0  # how long an aborted call waits for the remote task's id, to cancel it
MAX_CARD_BYTES = 1024 * 1024
"""Bytes of a remote agent card read; a larger card is refused before it is parsed."""
READ_TIMEOUT = 300.0
"""Seconds `a2a_tool` waits for the next bytes from the remote agent by default."""
_CARD_PATH = "/.well-known/agent-card.json"


_TOKEN_FIELDS = ("input", "output", "cache_read", "cache_write")


def _usage(metadata: Any) -> tuple[Usage | None, str | None]:
    """The usage a remote agent reports in `metadata.agentcore.usage` (an agentcore server
    does), and a note when it reported one that cannot be used: only finite, non-negative
    numbers (whole ones for tokens) are taken, since a negative count or a NaN cost would switch
    off the calling run's usage limits. A bad report is ignored as a whole (the note says
    why), never added in part."""
    agentcore = metadata.get("agentcore") if isinstance(metadata, dict) else None
    usage = agentcore.get("usage") if isinstance(agentcore, dict) else None
    if usage is None:
        return None, None
    if not isinstance(usage, dict):
        return None, f"its reported usage is not an object ({type(usage).__name__})"
    cost = usage.get("cost") or {}
    if not isinstance(cost, dict):
        return None, f"its reported cost is not an object ({type(cost).__name__})"
    tokens: dict[str, int] = {}
    for key in _TOKEN_FIELDS:
        value = usage.get(key, 0)
        # JSON (protobuf's Struct) gives every number as a float: a whole one is a count
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None, f"its reported usage.{key} is not a number ({value!r:.40})"
        if not math.isfinite(value) or value < 0 or value != int(value):
            return None, f"its reported usage.{key} is not a whole number >= 0 ({value!r:.40})"
        tokens[key] = int(value)
    dollars: dict[str, float] = {}
    for key in _TOKEN_FIELDS:
        value = cost.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None, f"its reported cost.{key} is not a number ({value!r:.40})"
        if not math.isfinite(value) or value < 0:
            return None, f"its reported cost.{key} is not a finite number >= 0 ({value!r:.40})"
        dollars[key] = float(value)
    return Usage(**tokens, cost=Cost(**dollars)), None


class _Call:
    """One call's view of the remote task, built from the streamed events."""

    def __init__(self) -> None:
        self.task_id: str | None = None
        self.context_id: str | None = None
        self.state: str = "TASK_STATE_SUBMITTED"
        self.artifacts: dict[str, list[str]] = {}  # the chunks, joined once at the end
        self.status_text = ""  # the latest status message
        self.final_text = ""  # the message of a final or interrupted status
        self.metadata: dict[str, Any] = {}

    def text(self) -> str:
        """The answer: a final status's message, else the latest artifact, else the latest
        status message (a remote agent's progress notes count only while nothing else came)."""
        if self.final_text:
            return self.final_text
        if self.artifacts:
            return "".join(list(self.artifacts.values())[-1])
        return self.status_text

    def take(self, event: Any, fmt: Any) -> tuple[dict[str, Any], str]:
        """Fold one `StreamResponse` in; returns it as JSON, and the text it brought (an
        artifact's chunk, a status message, a snapshot's answer, a direct answer)."""
        data: dict[str, Any] = fmt.MessageToDict(event)
        kind = event.WhichOneof("payload")
        fresh = ""
        if kind == "task":
            task = event.task
            self.task_id, self.context_id = task.id, task.context_id
            fresh = self._status(task.status, fmt)
            for artifact in task.artifacts:
                self.artifacts[artifact.artifact_id] = [_text(artifact.parts)]
            self.metadata.update(plain(fmt.MessageToDict(task.metadata)))
            fresh = self.text()
        elif kind == "status_update":
            update = event.status_update
            self.task_id, self.context_id = update.task_id, update.context_id
            fresh = self._status(update.status, fmt)
            self.metadata.update(plain(fmt.MessageToDict(update.metadata)))
        elif kind == "artifact_update":
            update = event.artifact_update
            self.task_id, self.context_id = update.task_id, update.context_id
            key = update.artifact.artifact_id
            fresh = _text(update.artifact.parts)
            if update.append and key in self.artifacts:
                self.artifacts[key].append(fresh)
            else:
                self.artifacts.pop(key, None)  # a replaced artifact is the latest one
                self.artifacts[key] = [fresh]
        elif kind == "message":
            self.state = "TASK_STATE_COMPLETED"  # a direct answer, without a task
            self.final_text = fresh = _text(event.message.parts)
        return data, fresh

    def _status(self, status: Any, fmt: Any) -> str:
        self.state = fmt.MessageToDict(status).get("state", self.state)
        if not status.HasField("message"):
            return ""
        self.status_text = _text(status.message.parts)
        if self.state in _STOPPED:
            self.final_text = self.status_text
        return self.status_text


def _text(parts: Any) -> str:
    return "".join(part.text for part in parts if part.WhichOneof("content") == "text")


_STOPPED = frozenset(
    {
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_AUTH_REQUIRED",
    }
)

_FAILED = {
    "TASK_STATE_FAILED": "failed",
    "TASK_STATE_REJECTED": "rejected the task",
    "TASK_STATE_CANCELED": "cancelled the task",
    "TASK_STATE_INPUT_REQUIRED": "needs input to go on",
    "TASK_STATE_AUTH_REQUIRED": "needs authentication to go on",
}


def a2a_tool(
    url: str,
    *,
    name: str,
    description: str,
    headers: Headers | None = None,
    label: str | None = None,
    timeout: float | None = None,
    execution_mode: ToolExecutionMode | None = None,
    allowed_origins: Sequence[str] = (),
    read_timeout: float | None = READ_TIMEOUT,
) -> AgentTool:
    """A remote A2A agent (an A2A 1.0 server at `url`) as a tool another agent can call with a
    `task` (a string).

    ```python
    helper = a2a_tool("http://127.0.0.1:8001", name="helper",
                      description="Knows the build system.",
                      headers=lambda: {"Authorization": f"Bearer {token_store.current()}"})
    ```

    Args:
        url: the agent's base URL (its card is read from `/.well-known/agent-card.json`).
        name: the tool's name, as for `AgentTool`.
        description: the tool's description.
        headers: HTTP headers for the agent's requests (a mapping, or a function, sync or
            async, returning one, called per call): used for the call's requests only, never
            stored in results, events or logs.
        label: the tool's label.
        timeout: seconds one call may run (then the remote task is cancelled).
        execution_mode: as for `AgentTool`.
        allowed_origins: more origins (`scheme://host[:port]`) the agent card may name an
            interface on. By default only `url`'s own origin is used: an interface the card
            names elsewhere is refused (the call is an error naming it), so a card cannot send
            the caller's headers, or its requests, to another server. An origin listed here
            gets the call's headers too.
        read_timeout: seconds to wait for the next bytes from the agent (its card, or the
            next event of a stream) before the call fails; 300 by default, `None` for no limit
            (`timeout` bounds the whole call).

    Raises:
        ConfigError: `url` is not an http(s) URL, `headers` is neither a mapping nor a
            function, or an entry of `allowed_origins` is not an http(s) origin.
        MissingExtraError: the `[a2a]` extra is not installed (when the tool is first called).
    """
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(f"url must be the agent's http(s) address, got {url!r}")
    if headers is not None and not (isinstance(headers, Mapping) or callable(headers)):
        raise ConfigError(
            "headers must be a mapping of header names to values, or a function returning "
            f"one, got {type(headers).__name__}"
        )
    base = url.rstrip("/")
    if isinstance(allowed_origins, str):
        raise ConfigError("allowed_origins is a list of origins, not one string")
    origins = {_origin(base)} | {_origin_entry(o) for o in allowed_origins}
    if read_timeout is not None and (
        isinstance(read_timeout, bool)
        or not isinstance(read_timeout, int | float)
        or not read_timeout > 0
    ):
        raise ConfigError(f"read_timeout must be seconds > 0 or None, got {read_timeout!r}")
    cards: list[Any] = []

    async def resolve_headers() -> dict[str, str]:
        if headers is None:
            return {}
        given = headers() if callable(headers) else headers
        if inspect.isawaitable(given):
            given = await given
        if not isinstance(given, Mapping):
            raise ConfigError(f"headers() must return a mapping, got {type(given).__name__}")
        return {str(k): str(v) for k, v in given.items()}

    def failed(what: str, call: _Call | None = None) -> AgentToolResult:
        details: dict[str, Any] = {"agent": name, "url": base}
        if call is not None:
            details.update(task_id=call.task_id, state=call.state)
        return AgentToolResult(
            content=capped_content(
                [TextContent(text=f"The A2A agent {name!r} at {base} {what}")], what="the agent"
            ),
            details=details,
            is_error=True,
        )

    async def execute(
        task: str, signal: AbortSignal, on_update: ToolUpdateCallback
    ) -> AgentToolResult:
        sdk = import_sdk_client()
        types, fmt = sdk.a2a_types, sdk.json_format
        call = _Call()
        try:
            sent = await resolve_headers()
        except Exception as exc:
            return failed(f"was not called: the headers could not be made: {exc}")
        # A client per call, so that the headers live only as long as the call; a shared SSL
        # context keeps that cheap (building one is most of what a new client costs).
        http = sdk.httpx.AsyncClient(
            headers=sent,
            timeout=sdk.httpx.Timeout(30.0, read=read_timeout),
            verify=_ssl_context(),
            follow_redirects=False,
        )
        del sent
        try:
            config = sdk.client.ClientConfig(streaming=True, httpx_client=http)
            try:
                if not cards:  # the card is read once (it holds no secret) and kept
                    cards.append(_on_origins(await _read_card(http, base, sdk), origins))
                client = sdk.client.ClientFactory(config).create(cards[0])
            except _CardError as exc:
                return failed(f"was not called: its agent card {exc}")
            except Exception as exc:
                return failed(f"could not be reached: {_reason(exc)}")
            request = types.SendMessageRequest(
                message=types.Message(
                    role=types.Role.ROLE_USER,
                    message_id=str(uuid.uuid4()),
                    parts=[types.Part(text=task)],
                )
            )
            known = anyio.Event()  # the remote task's id arrived
            finished = anyio.Event()
            failure: list[Exception] = []
            aborted = False

            async def consume() -> None:
                try:
                    shown = 0  # characters of text the updates carried
                    async for event in client.send_message(request):
                        data, fresh = call.take(event, fmt)
                        if call.task_id:
                            known.set()
                        fresh = fresh[: max(0, MAX_RESULT_CHARS - shown)]
                        shown += len(fresh)
                        on_update(
                            AgentToolResult(
                                content=[TextContent(text=fresh)] if fresh else [],
                                details={"a2a": data},
                            )
                        )
                except Exception as exc:
                    failure.append(exc)
                finally:
                    finished.set()

            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(consume)
                    with cancel_on_abort(signal):
                        await finished.wait()
                    if not finished.is_set():  # aborted: cancel the remote task, by its id
                        aborted = True
                        with anyio.move_on_after(_ID_WAIT):
                            await known.wait()
                        await _cancel_remote(client, call, types)
                        group.cancel_scope.cancel()
            except anyio.get_cancelled_exc_class():
                await _cancel_remote(client, call, types)  # the tool's timeout, or the run's end
                raise
            if aborted:
                return failed("was cancelled: the calling run was aborted", call)
            if failure:
                return failed(f"failed: {_reason(failure[0])}", call)
        finally:
            with anyio.CancelScope(shield=True):
                await http.aclose()
        usage, usage_problem = _usage(call.metadata)
        details = {
            "agent": name,
            "task_id": call.task_id,
            "context_id": call.context_id,
            "state": call.state,
            "metadata": call.metadata,
        }
        if usage_problem is not None:
            details["usage_ignored"] = f"{usage_problem}: ignored, not counted in the run's usage"
            _log.warning("the A2A agent %r at %s: %s", name, base, details["usage_ignored"])
        if call.state != "TASK_STATE_COMPLETED":
            what = _FAILED.get(call.state, f"ended its task as {call.state}")
            text = call.text()
            result = failed(what + (f": {text}" if text else "."), call)
            result.details.update(details)
            return result
        text = call.text()
        return AgentToolResult(
            content=capped_content([TextContent(text=text)], what="the agent") if text else [],
            details=details,
            usage=usage,
        )

    return task_tool(
        execute,
        name=name,
        description=description,
        label=label,
        timeout=timeout,
        execution_mode=execution_mode,
    )


def _origin(url: str) -> str:
    """`scheme://host:port` of an http(s) URL (the port spelled out), lower case."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or {"http": 80, "https": 443}.get(scheme)
    host = (parts.hostname or "").lower()
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def _origin_entry(entry: object) -> str:
    if not isinstance(entry, str) or not entry.startswith(("http://", "https://")):
        raise ConfigError(
            f"allowed_origins are http(s) origins such as 'https://agents.example:8443', "
            f"got {entry!r}"
        )
    parts = urlsplit(entry)
    if not parts.hostname or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ConfigError(
            f"an entry of allowed_origins is scheme://host[:port] only, got {entry!r}"
        )
    return _origin(entry)


class _CardError(Exception):
    """The agent card is refused: too large, or naming interfaces only on origins the caller
    did not allow."""


async def _read_card(http: Any, base: str, sdk: Any) -> Any:
    """The agent card at `base`, read with at most `MAX_CARD_BYTES` bytes before parsing."""
    url = base + _CARD_PATH
    async with http.stream("GET", url, headers={"Accept": "application/json"}) as response:
        if response.status_code != 200:
            raise RuntimeError(f"its agent card at {url} answered HTTP {response.status_code}")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_CARD_BYTES:
            raise _CardError(f"is {int(declared):,} bytes, more than {MAX_CARD_BYTES:,}: refused")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_CARD_BYTES:
                raise _CardError(f"is more than {MAX_CARD_BYTES:,} bytes: refused")
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise _CardError(f"is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _CardError(f"is not a JSON object (a {type(data).__name__})")
    try:
        return sdk.card_resolver.parse_agent_card(data)
    except Exception as exc:
        raise _CardError(f"is not a valid agent card: {_reason(exc)}") from None


def _on_origins(card: Any, origins: set[str]) -> Any:
    """`card` with only the interfaces on `origins` (the configured one and the allowed ones);
    raises `_ElsewhereError` naming the others when none is left."""
    kept = [i for i in card.supported_interfaces if _origin(i.url) in origins]
    refused = sorted({_origin(i.url) for i in card.supported_interfaces} - origins)
    if not kept:
        named = ", ".join(refused[:5]) or "none"
        raise _CardError(
            f"names its interfaces on another origin ({named}), not on the configured one: "
            "refused, so that the call's headers stay where they were meant to go (allow an "
            "origin with a2a_tool(allowed_origins=[...]))"
        )
    if refused:
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(kept)
    return card


async def _cancel_remote(client: Any, call: _Call, types: Any) -> None:
    if call.task_id is None:
        return
    with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_TIMEOUT):
        try:
            await client.cancel_task(types.CancelTaskRequest(id=call.task_id))
        except Exception:  # a task that already ended cannot be cancelled
            return


@functools.cache
def _ssl_context() -> Any:
    return import_sdk_client().httpx.create_ssl_context()


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 500 else text[:500] + "…"
