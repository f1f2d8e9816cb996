"""Hooks are normalised once, when the `AgentLoopConfig` is built (issue 9): a hook's shape is
read then and never during a run, and the normalised form stays out of the dataclass's public
behaviour (`fields`, `asdict`, `==`, `replace`, copies)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from typing import Any

import pytest

from agentcore import AgentContext, AgentLoopConfig, ConfigError, NextTurn
from agentcore.testing import FauxProvider, faux_text, faux_tool_call
from support import echo_tool, run

pytestmark = pytest.mark.anyio


class CountedHook:
    """A `(ctx, signal)` hook that counts how often its signature is read and it is called."""

    def __init__(self, result: Any = None) -> None:
        self.signature_reads = 0
        self.calls: list[tuple[Any, Any]] = []
        self.result = result

    @property
    def __signature__(self) -> inspect.Signature:
        self.signature_reads += 1
        return inspect.signature(lambda ctx, signal: None)

    def __call__(self, ctx: Any, signal: Any) -> Any:
        self.calls.append((ctx, signal))
        return self.result


async def test_a_hooks_shape_is_read_when_the_config_is_built_not_per_run() -> None:
    faux = FauxProvider([faux_tool_call("echo", {}), faux_text("a"), faux_text("b")])
    before, after, prepare = CountedHook(), CountedHook(), CountedHook(NextTurn())
    config = AgentLoopConfig(
        model=faux.model, before_tool_call=before, after_tool_call=after, prepare_next_turn=prepare
    )
    reads = (before.signature_reads, after.signature_reads, prepare.signature_reads)
    assert reads == (1, 1, 1)
    await run("one", AgentContext(tools=[echo_tool()]), config)
    await run("two", AgentContext(tools=[echo_tool()]), config)
    assert (before.signature_reads, after.signature_reads, prepare.signature_reads) == reads
    assert len(before.calls) == len(after.calls) == 1
    assert len(prepare.calls) == 3  # one per turn
    assert all(signal is not None for _ctx, signal in before.calls + prepare.calls)


async def test_one_argument_hooks_get_no_signal() -> None:
    seen: list[Any] = []
    faux = FauxProvider([faux_text("a")])
    config = AgentLoopConfig(
        model=faux.model,
        transform_context=lambda messages: seen.append(len(messages)) or messages,
        should_stop_after_turn=lambda ctx: seen.append(ctx.message.stop_reason) or True,
    )
    await run("hi", config=config)
    assert seen == [1, "stop"]


async def test_normalised_hooks_stay_out_of_the_dataclass() -> None:
    faux = FauxProvider([faux_text("a"), faux_text("b")])
    hook = CountedHook()
    config = AgentLoopConfig(model=faux.model, before_tool_call=hook)
    names = [f.name for f in dataclasses.fields(config)]
    assert "_hooks" not in names
    assert "_hooks" not in dataclasses.asdict(config)
    assert config == AgentLoopConfig(model=faux.model, before_tool_call=hook)
    changed = dataclasses.replace(config, before_tool_call=None, max_turns=3)
    assert changed.before_tool_call is None and changed.max_turns == 3
    assert hook.signature_reads == 2  # the replace built (and checked) a new config
    with pytest.raises(ConfigError, match="after_tool_call has the wrong shape"):
        dataclasses.replace(config, after_tool_call=lambda a, b, c: None)
    for copied in (copy.copy(config), copy.deepcopy(changed)):
        r = await run("hi", config=copied)  # a copy lost the normalised hooks: rebuilt
        assert r.result[-1].stop_reason == "stop"
