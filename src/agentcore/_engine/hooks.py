"""A config's hooks, normalised once, when the `AgentLoopConfig` is built.

Hooks that may take the run's `AbortSignal` as an optional second argument (`before_tool_call`,
`after_tool_call`, `prepare_next_turn`, `should_stop_after_turn`, `transform_context`) are
adapted here to one calling shape, `(arg, signal)`, so the loop calls every hook the same way and
never inspects a signature or looks a hook up by name while a run goes. Every hook's shape is
checked at the same moment, so a hook of the wrong shape is a `ConfigError` of the config, not a
failure of some later run.
"""

from __future__ import annotations

import inspect
import types
import weakref
from collections.abc import Callable
from typing import Any, TypeAlias

from ..abort import AbortSignal
from ..errors import ConfigError

__all__ = ["HOOK_SHAPES", "Hooks", "SignalHook", "config_hooks", "hook_arity"]

SignalHook: TypeAlias = Callable[[Any, AbortSignal], Any]
"""A hook in its normalised shape: `(arg, signal)`, returning a value or an awaitable."""

HOOK_SHAPES: dict[str, tuple[int, int, str]] = {
    "before_tool_call": (1, 2, "(ctx: BeforeToolCallContext[, signal])"),
    "after_tool_call": (1, 2, "(ctx: AfterToolCallContext[, signal])"),
    "prepare_next_turn": (1, 2, "(ctx: PrepareNextTurnContext[, signal])"),
    "should_stop_after_turn": (1, 2, "(ctx: PrepareNextTurnContext[, signal])"),
    "convert_to_llm": (1, 1, "(messages)"),
    "transform_context": (1, 2, "(messages[, signal])"),
    "get_api_key": (1, 1, "(provider: str)"),
    "get_steering_messages": (0, 0, "()"),
    "get_follow_up_messages": (0, 0, "()"),
    "on_payload": (2, 2, "(payload, model)"),
    "on_response": (2, 2, "(response: ResponseInfo, model)"),
}
"""Hook name -> (fewest positional arguments, most, the shape named in errors)."""


# The arity found for each plain function (and each method, by its function), per hook name: an
# Agent builds a config for itself, and reading a signature is most of what that costs. Weak
# keys, so that a lambda made for one config is not kept for ever.
_arities: weakref.WeakKeyDictionary[Callable[..., Any], dict[str, int]] = (
    weakref.WeakKeyDictionary()
)


def hook_arity(name: str, fn: Callable[..., Any]) -> int:
    """How many positional arguments to pass to hook `name`; checks its shape.

    Raises:
        ConfigError: `fn` is not callable or cannot take the hook's arguments.
    """
    if type(fn) is types.FunctionType:
        key: Any = fn
    elif type(fn) is types.MethodType and type(fn.__func__) is types.FunctionType:
        key, name = fn.__func__, "method " + name  # the same function bound takes one less
    else:
        return _arity(name, fn)
    known = _arities.get(key)
    if known is None:
        known = _arities[key] = {}
    arity = known.get(name)
    if arity is None:
        arity = known[name] = _arity(name.removeprefix("method "), fn)
    return arity


def _arity(name: str, fn: Callable[..., Any]) -> int:
    low, high, shape = HOOK_SHAPES[name]
    if not callable(fn):
        raise ConfigError(f"{name} must be a function {shape}, got {type(fn).__name__}")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return high
    for n in range(high, low - 1, -1):
        try:
            sig.bind(*range(n))
        except TypeError:
            continue
        return n
    raise ConfigError(f"{name} has the wrong shape: expected a function {shape}, got {fn!r}{sig}")


def _with_signal(name: str, fn: Callable[..., Any] | None) -> SignalHook | None:
    """`fn` as an `(arg, signal)` hook (None stays None)."""
    if fn is None:
        return None
    if hook_arity(name, fn) == 2:
        return fn

    def call(arg: Any, signal: AbortSignal) -> Any:
        return fn(arg)

    return call


class Hooks:
    """The signal-taking hooks of one config, each `(arg, signal)` or None (not set)."""

    __slots__ = (
        "after_tool_call",
        "before_tool_call",
        "prepare_next_turn",
        "should_stop_after_turn",
        "transform_context",
    )

    after_tool_call: SignalHook | None
    before_tool_call: SignalHook | None
    prepare_next_turn: SignalHook | None
    should_stop_after_turn: SignalHook | None
    transform_context: SignalHook | None

    def __init__(self, config: Any) -> None:
        """Check every hook of `config` and adapt the signal-taking ones.

        Raises:
            ConfigError: a hook that is not a function, or of the wrong shape.
        """
        for name in HOOK_SHAPES:
            fn = getattr(config, name)
            if name in Hooks.__slots__:
                setattr(self, name, _with_signal(name, fn))
            elif fn is not None:
                hook_arity(name, fn)  # checked now; it has one shape to be called with


def config_hooks(config: Any) -> Hooks:
    """The normalised hooks of an `AgentLoopConfig`, built with it (a copy or an unpickled
    config, which lost them, gets them rebuilt here)."""
    try:
        hooks: Hooks = config._hooks
    except AttributeError:
        hooks = Hooks(config)
        object.__setattr__(config, "_hooks", hooks)
    return hooks
