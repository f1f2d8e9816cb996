"""A hook's shape is read once per function, not once per config: an `Agent` builds a config for
itself, and reading a signature was most of what building one cost."""

from __future__ import annotations

import gc
import inspect
import weakref
from typing import Any

import pytest

from agentcore import AgentLoopConfig, ConfigError
from agentcore._engine.hooks import hook_arity
from agentcore.llm import Model

MODEL = Model(id="m", api="faux", provider="faux")


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    seen: list[Any] = []
    real = inspect.signature

    def signature(fn: Any, *args: Any, **kwargs: Any) -> inspect.Signature:
        seen.append(fn)
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(inspect, "signature", signature)
    return seen


def test_a_hooks_signature_is_read_once_for_many_configs(monkeypatch: pytest.MonkeyPatch) -> None:
    def before(ctx: Any, signal: Any) -> None:
        return None

    def prepare(ctx: Any) -> None:
        return None

    seen = _counting(monkeypatch)
    for _ in range(3):
        config = AgentLoopConfig(model=MODEL, before_tool_call=before, prepare_next_turn=prepare)
        assert config.before_tool_call is before
    assert seen.count(before) == 1 and seen.count(prepare) == 1


def test_a_method_and_a_function_keep_their_own_arity() -> None:
    class Holder:
        def hook(self, ctx: Any) -> None:
            return None

    def plain(ctx: Any, signal: Any = None) -> None:
        return None

    holder = Holder()
    for _ in range(2):
        assert hook_arity("before_tool_call", holder.hook) == 1
        assert hook_arity("before_tool_call", Holder.hook) == 2  # unbound: (self, ctx)
        assert hook_arity("before_tool_call", plain) == 2
        assert hook_arity("convert_to_llm", plain) == 1  # the same function, another hook


def test_a_wrong_shape_is_refused_every_time() -> None:
    def three(a: Any, b: Any, c: Any) -> None:
        return None

    for _ in range(2):
        with pytest.raises(ConfigError, match="before_tool_call has the wrong shape"):
            AgentLoopConfig(model=MODEL, before_tool_call=three)


def test_a_hook_made_for_one_config_is_not_kept() -> None:
    hook = lambda ctx: None  # noqa: E731
    AgentLoopConfig(model=MODEL, prepare_next_turn=hook)
    ref = weakref.ref(hook)
    del hook
    gc.collect()
    assert ref() is None
