"""MCP sampling: a server asks the client to run a model (`sampling/createMessage`).

Off unless an `MCPClient` is given `sampling=MCPSampling(...)`: without it the client refuses
every request with an MCP error saying sampling is off. With it, a request is checked (text and
images only, no tools), capped (`max_tokens`), optionally put to `approve`, then sent to the
configured model; the answer's usage is added to the tool call that caused it (its
`ToolResultMessage.usage`), so `run_usage` and the run's usage limits see it.

Traced (with `agentcore.tracing.instrument()`) as a `chat` span under the tool's span.

Which call a request belongs to: the client keeps the running calls in a context variable (the
2026-07-28 protocol hands the request to the client inside the call, in the caller's context);
a request that arrives outside the caller's context (a handshake-era server's request, sent on
its own) is charged to the oldest call of that client still running. A request while no call of
the client runs is refused: it would be counted in no run and bounded by no call's caps (a
handshake-era server may send one at any time).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio

from .. import ConfigError, get_instrumentation
from ..approvals import InputAnswer, InputRequired
from ..llm import Context, Model, StreamOptions, complete
from ..messages import AssistantMessage, ImageContent, TextContent, Usage, UserMessage
from ._sdk import types

__all__ = ["CallCharge", "MCPSampling", "MCPSamplingRequest", "current_charge", "sample"]

_log = logging.getLogger("agentcore")


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPSamplingRequest:
    """What an `MCPSampling.approve` callback is shown before the model is called.

    Attributes:
        server: the server's name (`MCPClient.server_name`).
        tool: the server-side name of the tool whose call asked (a request while no call of
            the client runs is refused before it is asked about).
        system_prompt: the system prompt the server sent, if any.
        messages: the server's messages, as agentcore messages (user and assistant).
        max_tokens: the output limit that will be sent (the server's, capped).
    """

    server: str
    tool: str | None
    system_prompt: str
    messages: list[UserMessage | AssistantMessage]
    max_tokens: int


ApproveSampling = Callable[[MCPSamplingRequest], bool | Awaitable[bool]]
"""Asked before each sampling request reaches the model: True lets it run, False refuses it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MCPSampling:
    """Lets an MCP server sample a model through this client (`MCPClient(sampling=...)`).

    Sampling is off by default: a server could otherwise spend the user's tokens and money, and
    see whatever the model says, without the user knowing. Turning it on names the model the
    server may use and bounds what it may spend.

    Args:
        model: the `Model` that answers (any agentcore model: a provider's, the local one, the
            faux one of `agentcore.testing`).
        max_tokens: the most output tokens one request may ask for; a server asking for more
            gets this many.
        max_cost: USD that the sampling requests of one tool call may cost in all (None: no cap).
            Once a call's requests reached it, further ones are refused with an MCP error.
        max_requests: sampling requests one tool call may make (default 10).

    A request that arrives while no tool call of the client runs (a handshake-era server may
    send one at any time) is refused with an MCP error: it would be counted in no run, and no
    call's caps would bound it.
        approve: asked before each request reaches the model (a function of an
            `MCPSamplingRequest`, sync or async, returning True or False); a False answer
            refuses the request. None: no question.
        options: further `StreamOptions` for the model (an API key, headers); its `max_tokens`
            and `temperature` are taken from the request.
    """

    model: Model
    max_tokens: int = 1024
    max_cost: float | None = None
    max_requests: int = 10
    approve: ApproveSampling | None = None
    options: StreamOptions = field(default_factory=StreamOptions)

    def __post_init__(self) -> None:
        if not isinstance(self.model, Model):
            raise ConfigError(
                f"MCPSampling.model must be an agentcore Model, got {type(self.model).__name__}"
            )
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int):
            raise ConfigError(f"MCPSampling.max_tokens must be an int, got {self.max_tokens!r}")
        if self.max_tokens < 1:
            raise ConfigError(f"MCPSampling.max_tokens must be at least 1, got {self.max_tokens}")
        if self.max_cost is not None and (
            isinstance(self.max_cost, bool)
            or not isinstance(self.max_cost, int | float)
            or self.max_cost < 0
        ):
            raise ConfigError(
                f"MCPSampling.max_cost must be a non-negative number of USD or None, got "
                f"{self.max_cost!r}"
            )
        if isinstance(self.max_requests, bool) or not isinstance(self.max_requests, int):
            raise ConfigError(f"MCPSampling.max_requests must be an int, got {self.max_requests!r}")
        if self.max_requests < 1:
            raise ConfigError(
                f"MCPSampling.max_requests must be at least 1, got {self.max_requests}"
            )
        if self.approve is not None and not callable(self.approve):
            raise ConfigError(
                f"MCPSampling.approve must be a function or None, got {type(self.approve).__name__}"
            )


@dataclass(eq=False)
class CallCharge:
    """What the sampling requests of one running tool call used."""

    tool: str
    call_id: str | None = None
    asked: InputRequired | None = None  # a question for the user, when asked via approvals
    answers: dict[str, InputAnswer] = field(default_factory=dict)  # given to its questions
    usage: Usage = field(default_factory=Usage)
    requests: int = 0
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    def add(self, usage: Usage) -> None:
        self.requests += 1
        self.usage = _sum(self.usage, usage)


def _sum(a: Usage, b: Usage) -> Usage:
    from ..messages import Cost

    return Usage(
        input=a.input + b.input,
        output=a.output + b.output,
        cache_read=a.cache_read + b.cache_read,
        cache_write=a.cache_write + b.cache_write,
        cost=Cost(
            input=a.cost.input + b.cost.input,
            output=a.cost.output + b.cost.output,
            cache_read=a.cost.cache_read + b.cost.cache_read,
            cache_write=a.cost.cache_write + b.cost.cache_write,
        ),
    )


current_charge: ContextVar[CallCharge | None] = ContextVar("agentcore_mcp_call", default=None)
"""The tool call running in this context (set by `MCPClient.call`)."""


def _refuse(text: str) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message=text)


def _content(block: Any) -> TextContent | ImageContent | None:
    if isinstance(block, types.TextContent):
        return TextContent(text=block.text)
    if isinstance(block, types.ImageContent):
        return ImageContent(data=block.data, mime_type=block.mime_type)
    return None


def _messages(
    params: types.CreateMessageRequestParams,
) -> list[UserMessage | AssistantMessage] | str:
    """The server's messages as agentcore messages, or the text of a refusal."""
    out: list[UserMessage | AssistantMessage] = []
    for i, message in enumerate(params.messages):
        blocks = message.content if isinstance(message.content, list) else [message.content]
        content: list[TextContent | ImageContent] = []
        for block in blocks:
            converted = _content(block)
            if converted is None:
                kind = getattr(block, "type", type(block).__name__)
                return (
                    f"message {i} holds {kind!r} content: this client samples text and images only"
                )
            content.append(converted)
        if message.role == "user":
            out.append(UserMessage(content=content))
        else:
            texts = [b for b in content if isinstance(b, TextContent)]
            if len(texts) != len(content):
                return f"message {i} (assistant) holds an image: an answer can only be text"
            out.append(AssistantMessage(content=list(texts)))
    if not out:
        return "the request has no messages"
    return out


async def sample(
    config: MCPSampling | None,
    server: str,
    charge: CallCharge | None,
    params: types.CreateMessageRequestParams,
) -> types.CreateMessageResult | types.ErrorData:
    """Answer one `sampling/createMessage`: refused (an MCP error naming why) or the model's
    answer; the usage is added to `charge`. The requests of one call are answered one at a
    time (a server may send several at once), so that each sees what the previous ones cost."""
    if charge is None:
        return await _sample(config, server, None, params)
    async with charge.lock:
        return await _sample(config, server, charge, params)


async def _sample(
    config: MCPSampling | None,
    server: str,
    charge: CallCharge | None,
    params: types.CreateMessageRequestParams,
) -> types.CreateMessageResult | types.ErrorData:
    if config is None:
        return _refuse(
            f"sampling is off in this client of MCP server {server!r}: the application did not "
            "allow it (MCPClient(sampling=MCPSampling(model=...)))"
        )
    if charge is None:
        return _refuse(
            f"sampling refused: MCP server {server!r} sent a sampling request while none of its "
            "tool calls runs; this client samples only for a running tool call (whose usage "
            "and caps count it)"
        )
    if params.tools or params.tool_choice is not None:
        return _refuse("this client does not sample with tools")
    messages = _messages(params)
    if isinstance(messages, str):
        return _refuse(messages)
    if charge.requests >= config.max_requests:
        return _refuse(
            f"sampling refused: this tool call already made {charge.requests} sampling "
            f"requests (the client allows {config.max_requests} per call)"
        )
    if config.max_cost is not None and charge.usage.cost.total >= config.max_cost:
        return _refuse(
            f"sampling refused: this tool call's sampling already cost "
            f"${charge.usage.cost.total:.6f} (the client allows ${config.max_cost:g} per call)"
        )
    max_tokens = min(params.max_tokens, config.max_tokens)
    request = MCPSamplingRequest(
        server=server,
        tool=charge.tool,
        system_prompt=params.system_prompt or "",
        messages=messages,
        max_tokens=max_tokens,
    )
    if config.approve is not None:
        answer = config.approve(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is not True:
            return _refuse("sampling refused: the user did not approve the request")
    options = _options(config.options, max_tokens, params.temperature)
    context = Context(system_prompt=request.system_prompt, messages=list(messages))
    message = await _traced_complete(config.model, context, options)
    charge.add(message.usage)
    if message.stop_reason in ("error", "aborted"):
        return _refuse(f"the model failed: {message.error_message or message.stop_reason}")
    stop = {"stop": "endTurn", "length": "maxTokens"}.get(message.stop_reason, message.stop_reason)
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=message.text),
        model=config.model.id,
        stop_reason=stop,
    )


def _options(base: StreamOptions, max_tokens: int, temperature: float | None) -> StreamOptions:
    from dataclasses import replace

    return replace(
        base,
        max_tokens=max_tokens,
        temperature=temperature if temperature is not None else base.temperature,
    )


async def _traced_complete(
    model: Model, context: Context, options: StreamOptions
) -> AssistantMessage:
    """`complete`, as a `chat` span under the current one (the tool's) when tracing is on
    (`agentcore.tracing.instrument()`)."""
    start = getattr(get_instrumentation(), "start_request", None)
    observer = start(model, context) if callable(start) else None
    if observer is None:
        return await complete(model, context, options)
    try:
        message = await complete(model, context, options)
    except BaseException as exc:
        observer.end_request(None, exc)
        raise
    observer.end_request(message, None)
    return message
