"""The model layer: models, one streaming protocol, and the provider adapters behind it."""

from __future__ import annotations

import sys as _sys
import types as _types
import typing as _typing
from importlib import import_module as _import_module

if _typing.TYPE_CHECKING:
    from ._check import check_model as check_model
    from ._env import get_env_api_key as get_env_api_key
    from ._partial_json import describe_invalid_json as describe_invalid_json
    from ._partial_json import parse_partial_json as parse_partial_json
    from .builder import MessageBuilder as MessageBuilder
    from .compatible import openai_compatible_model as openai_compatible_model
    from .events import AssistantMessageEvent as AssistantMessageEvent
    from .events import DoneEvent as DoneEvent
    from .events import ErrorEvent as ErrorEvent
    from .events import StartEvent as StartEvent
    from .events import TextDeltaEvent as TextDeltaEvent
    from .events import TextEndEvent as TextEndEvent
    from .events import TextStartEvent as TextStartEvent
    from .events import ThinkingDeltaEvent as ThinkingDeltaEvent
    from .events import ThinkingEndEvent as ThinkingEndEvent
    from .events import ThinkingStartEvent as ThinkingStartEvent
    from .events import ToolCallDeltaEvent as ToolCallDeltaEvent
    from .events import ToolCallEndEvent as ToolCallEndEvent
    from .events import ToolCallStartEvent as ToolCallStartEvent
    from .fallback import with_fallbacks as with_fallbacks
    from .model import AzureOpenAI as AzureOpenAI
    from .model import BedrockCompat as BedrockCompat
    from .model import GoogleCompat as GoogleCompat
    from .model import InputKind as InputKind
    from .model import Model as Model
    from .model import ModelCost as ModelCost
    from .model import OpenAICompletionsCompat as OpenAICompletionsCompat
    from .model import ThinkingControl as ThinkingControl
    from .model import TokenProvider as TokenProvider
    from .model import VertexAI as VertexAI
    from .models import calculate_cost as calculate_cost
    from .models import get_model as get_model
    from .models import get_models as get_models
    from .models import get_providers as get_providers
    from .models import register_model as register_model
    from .models import unregister_model as unregister_model
    from .overflow import is_context_overflow as is_context_overflow
    from .registry import ApiProvider as ApiProvider
    from .registry import StreamFn as StreamFn
    from .registry import complete as complete
    from .registry import complete_simple as complete_simple
    from .registry import get_api_provider as get_api_provider
    from .registry import register_api_provider as register_api_provider
    from .registry import stream as stream
    from .registry import stream_simple as stream_simple
    from .registry import unregister_api_providers as unregister_api_providers
    from .stream import AssistantMessageEventStream as AssistantMessageEventStream
    from .types import THINKING_LEVELS as THINKING_LEVELS
    from .types import CacheRetention as CacheRetention
    from .types import Context as Context
    from .types import OnPayload as OnPayload
    from .types import OnResponse as OnResponse
    from .types import OutputSchema as OutputSchema
    from .types import ResponseInfo as ResponseInfo
    from .types import SimpleStreamOptions as SimpleStreamOptions
    from .types import StreamOptions as StreamOptions
    from .types import ThinkingBudgets as ThinkingBudgets
    from .types import ThinkingLevel as ThinkingLevel
    from .types import Tool as Tool
    from .types import Transport as Transport

# Each public name, by the module that defines it. A name is imported when it is first used
# (module `__getattr__`), so that importing the package costs next to nothing and a program
# pays only for what it uses. `from agentcore.llm import *` and `dir(agentcore.llm)` see every name.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "_check": ("check_model",),
    "_env": ("get_env_api_key",),
    "_partial_json": (
        "describe_invalid_json",
        "parse_partial_json",
    ),
    "builder": ("MessageBuilder",),
    "compatible": ("openai_compatible_model",),
    "events": (
        "AssistantMessageEvent",
        "DoneEvent",
        "ErrorEvent",
        "StartEvent",
        "TextDeltaEvent",
        "TextEndEvent",
        "TextStartEvent",
        "ThinkingDeltaEvent",
        "ThinkingEndEvent",
        "ThinkingStartEvent",
        "ToolCallDeltaEvent",
        "ToolCallEndEvent",
        "ToolCallStartEvent",
    ),
    "fallback": ("with_fallbacks",),
    "model": (
        "AzureOpenAI",
        "BedrockCompat",
        "GoogleCompat",
        "InputKind",
        "Model",
        "ModelCost",
        "OpenAICompletionsCompat",
        "ThinkingControl",
        "TokenProvider",
        "VertexAI",
    ),
    "models": (
        "calculate_cost",
        "get_model",
        "get_models",
        "get_providers",
        "register_model",
        "unregister_model",
    ),
    "overflow": ("is_context_overflow",),
    "registry": (
        "ApiProvider",
        "StreamFn",
        "complete",
        "complete_simple",
        "get_api_provider",
        "register_api_provider",
        "stream",
        "stream_simple",
        "unregister_api_providers",
    ),
    "stream": ("AssistantMessageEventStream",),
    "types": (
        "THINKING_LEVELS",
        "CacheRetention",
        "Context",
        "OnPayload",
        "OnResponse",
        "OutputSchema",
        "ResponseInfo",
        "SimpleStreamOptions",
        "StreamOptions",
        "ThinkingBudgets",
        "ThinkingLevel",
        "Tool",
        "Transport",
    ),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next lookup is an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


class _Package(_types.ModuleType):
    """This package's module: `stream` is the function, never the submodule of that name
    (importing `agentcore.llm.stream` would otherwise bind the submodule over it, as Python
    binds every submodule on its package)."""

    def __setattr__(self, name: str, value: object) -> None:
        if name == "stream" and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


__all__ = [
    "ApiProvider",
    "AssistantMessageEvent",
    "AssistantMessageEventStream",
    "AzureOpenAI",
    "BedrockCompat",
    "CacheRetention",
    "Context",
    "DoneEvent",
    "ErrorEvent",
    "GoogleCompat",
    "InputKind",
    "MessageBuilder",
    "Model",
    "ModelCost",
    "OnPayload",
    "OnResponse",
    "OpenAICompletionsCompat",
    "OutputSchema",
    "ResponseInfo",
    "SimpleStreamOptions",
    "StartEvent",
    "StreamFn",
    "StreamOptions",
    "THINKING_LEVELS",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingBudgets",
    "ThinkingControl",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingLevel",
    "ThinkingStartEvent",
    "TokenProvider",
    "Tool",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "Transport",
    "VertexAI",
    "calculate_cost",
    "check_model",
    "complete",
    "complete_simple",
    "describe_invalid_json",
    "get_api_provider",
    "get_env_api_key",
    "get_model",
    "get_models",
    "get_providers",
    "is_context_overflow",
    "openai_compatible_model",
    "parse_partial_json",
    "register_api_provider",
    "register_model",
    "stream",
    "stream_simple",
    "unregister_api_providers",
    "unregister_model",
    "with_fallbacks",
]
