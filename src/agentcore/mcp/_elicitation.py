"""MCP elicitation (a server asks the user for structured input during a call) and roots (the
directories the client tells a server it may use).

Elicitation is off unless an `MCPClient` is given `elicitation=handler`: without one the client
does not announce the capability, and a server that asks anyway is refused. The handler sees an
`MCPElicitation` (the server's message and requested JSON schema) and returns an
`MCPElicitationAnswer`: accept with content, decline, or cancel. Accepted content is validated
against the requested schema before it is sent; content that does not match is refused with an
error naming the field (the handler, a UI, can check first with `MCPElicitation.check`).
What a question may show is cut where it enters (`_question`): every surface gets the cut one.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import unicodedata
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .. import ConfigError, OutputSpec, OutputValidationError
from ..approvals import InputRequired, input_answer
from ._question import shown_question
from ._sampling import CallCharge
from ._sdk import types

__all__ = [
    "ElicitationHandler",
    "ask_through_approvals",
    "MCPElicitation",
    "MCPElicitationAnswer",
    "elicit",
    "file_roots",
    "reported_name",
]

_NAME_LIMIT = 64  # characters of a server's reported name shown in its questions


def reported_name(name: object) -> str:
    """A server's own name (`serverInfo.name`) fit to be shown: control and format characters
    left out, spaces at the ends stripped, at most 64 characters (`""` when nothing is left)."""
    if not isinstance(name, str):
        return ""
    kept = "".join(c for c in name if unicodedata.category(c) not in ("Cc", "Cf", "Cs"))
    kept = " ".join(kept.split())
    return kept if len(kept) <= _NAME_LIMIT else kept[: _NAME_LIMIT - 1] + "…"


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPElicitation:
    """A server's request for input from the user (`elicitation/create`, form mode).

    Attributes:
        server: the server's name (`MCPClient.server_name`).
        tool: the server-side name of the tool whose call asked, or None.
        message: what the server asks, for the user.
        schema: the JSON schema the answer's content must match (an object of flat properties:
            strings, numbers, booleans, enums).
    """

    server: str
    tool: str | None
    message: str
    schema: dict[str, Any]

    def check(self, content: Mapping[str, Any]) -> dict[str, Any]:
        """`content` as a dict if it matches `schema`.

        Raises:
            ConfigError: naming each field that does not match, and what was expected.
        """
        if not isinstance(content, Mapping):
            raise ConfigError(
                f"the answer to MCP server {self.server!r} must be an object (a dict), got "
                f"{type(content).__name__}"
            )
        try:
            spec: OutputSpec[Any] = OutputSpec(self.schema)
        except ConfigError as exc:
            raise ConfigError(
                f"MCP server {self.server!r} sent a schema this client cannot check: {exc}"
            ) from exc
        try:
            spec.validate(dict(content))
        except OutputValidationError as exc:
            raise ConfigError(
                f"the answer does not match the schema MCP server {self.server!r} asked for: {exc}"
            ) from exc
        return dict(content)


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPElicitationAnswer:
    """The user's answer to an `MCPElicitation`; build it with `accept`, `decline` or `cancel`.

    Attributes:
        action: `"accept"` (with `content`), `"decline"` (the user said no) or `"cancel"` (the
            user dismissed the question without answering).
        content: the answer's fields, for `"accept"`.
    """

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = field(default=None)

    def __post_init__(self) -> None:
        if self.action not in ("accept", "decline", "cancel"):
            raise ConfigError(
                f"MCPElicitationAnswer.action must be 'accept', 'decline' or 'cancel', got "
                f"{self.action!r}"
            )
        if self.action == "accept" and not isinstance(self.content, dict):
            raise ConfigError("an accepted MCPElicitationAnswer needs its content as a dict")
        if self.action != "accept" and self.content is not None:
            raise ConfigError(f"a {self.action!r} MCPElicitationAnswer carries no content")

    @classmethod
    def accept(cls, content: Mapping[str, Any]) -> MCPElicitationAnswer:
        """Accept, answering with `content` (validated against the requested schema)."""
        return cls(action="accept", content=dict(content))

    @classmethod
    def decline(cls) -> MCPElicitationAnswer:
        """The user declined to answer."""
        return cls(action="decline")

    @classmethod
    def cancel(cls) -> MCPElicitationAnswer:
        """The user dismissed the question."""
        return cls(action="cancel")


ElicitationHandler = Callable[
    [MCPElicitation], MCPElicitationAnswer | Awaitable[MCPElicitationAnswer]
]
"""Asks the user an `MCPElicitation` and returns the answer (sync or async)."""


async def elicit(
    handler: ElicitationHandler | None,
    server: str,
    tool: str | None,
    params: types.ElicitRequestParams,
) -> types.ElicitResult | types.ErrorData:
    """Answer one `elicitation/create`: the handler's answer, validated, or an MCP error."""
    if handler is None:
        return types.ErrorData(
            code=types.INVALID_REQUEST,
            message=f"elicitation is off in this client of MCP server {server!r}",
        )
    if not isinstance(params, types.ElicitRequestFormParams):
        return types.ErrorData(
            code=types.INVALID_REQUEST,
            message="this client answers form elicitations only (no URL mode)",
        )
    shown = shown_question(server, params.message, params.requested_schema)
    if isinstance(shown, str):
        return types.ErrorData(code=types.INVALID_PARAMS, message=shown)
    request = MCPElicitation(server=server, tool=tool, message=shown[0], schema=shown[1])
    answer = handler(request)
    if inspect.isawaitable(answer):
        answer = await answer
    if not isinstance(answer, MCPElicitationAnswer):
        return types.ErrorData(
            code=types.INTERNAL_ERROR,
            message=f"the client's elicitation handler returned {type(answer).__name__}, not an "
            "answer",
        )
    if answer.action != "accept":
        return types.ElicitResult(action=answer.action)
    assert answer.content is not None
    try:
        content = request.check(answer.content)
    except ConfigError as exc:
        return types.ErrorData(code=types.INVALID_PARAMS, message=str(exc))
    return types.ElicitResult(action="accept", content=content)


def question_key(params: types.ElicitRequestFormParams) -> str:
    """Identifies a question within a call: the same message and schema, the same key."""
    text = json.dumps([params.message, params.requested_schema], sort_keys=True, default=str)
    return "mcp-elicitation:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def ask_through_approvals(
    server: str, charge: CallCharge | None, params: types.ElicitRequestParams
) -> types.ElicitResult | types.ErrorData:
    """Answer an elicitation from the call's decided input request, if it was answered (the
    call runs again after the decision); else note the question on `charge` (the call then
    waits: `MCPClient.call` raises it) and refuse it here."""
    if not isinstance(params, types.ElicitRequestFormParams):
        return types.ErrorData(
            code=types.INVALID_REQUEST,
            message="this client answers form elicitations only (no URL mode)",
        )
    if charge is None or charge.call_id is None:
        return types.ErrorData(
            code=types.INVALID_REQUEST,
            message="elicitation outside a tool call cannot be asked through approvals",
        )
    shown = shown_question(server, params.message, params.requested_schema)
    if isinstance(shown, str):
        return types.ErrorData(code=types.INVALID_PARAMS, message=shown)
    key = question_key(params)
    # the answers were read in the call's own context (a handshake-era request comes in
    # another task, where the answers being given are not in view)
    answer = charge.answers.get(key) or input_answer(charge.call_id, key)
    if answer is not None:
        if answer.action == "accept":
            return types.ElicitResult(action="accept", content=answer.content)
        return types.ElicitResult(action=answer.action)
    message, schema = shown
    charge.asked = InputRequired(key, f"MCP server {server!r} asks: {message}", schema)
    return types.ErrorData(
        code=types.INVALID_REQUEST, message="the question waits for the user's answer"
    )


def file_roots(roots: Sequence[str | Path] | None) -> list[types.Root] | None:
    """The `Root`s of directories (`file://` URIs of their absolute paths), or None.

    Raises:
        ConfigError: `roots` is a string, or holds something that is not a path.
    """
    if roots is None:
        return None
    if isinstance(roots, str | Path) or not all(isinstance(r, str | Path) for r in roots):
        raise ConfigError(f"roots must be a list of directory paths, got {roots!r}")
    out = []
    for root in roots:
        path = Path(root).expanduser().resolve()
        out.append(types.Root(uri=path.as_uri(), name=path.name or str(path)))  # type: ignore[arg-type]
    return out
