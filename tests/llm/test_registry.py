"""The API registry on its own: which adapter serves a `Model.api`, registering and removing
adapters, the entry points that dispatch to them, and `StreamFn` calls."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentcore.errors import UnknownApiError
from agentcore.llm import (
    ApiProvider,
    AssistantMessageEventStream,
    Context,
    MessageBuilder,
    Model,
    SimpleStreamOptions,
    StreamOptions,
    complete,
    complete_simple,
    get_api_provider,
    register_api_provider,
    stream,
    stream_simple,
    unregister_api_providers,
)
from agentcore.llm.registry import call_stream_fn

pytestmark = pytest.mark.anyio

API = "test-registry-api"
SOURCE = "test-registry"


def _answer(text: str) -> AssistantMessageEventStream:
    builder = MessageBuilder(Model(id="m", api=API, provider="p"))
    index = builder.text_start().content_index
    events = [builder.start(), builder.text_delta(index, text), *builder.close_open_blocks()]
    return AssistantMessageEventStream.from_events([*events, builder.done("stop")])


def _provider(seen: list[object], source: str | None = SOURCE) -> ApiProvider:
    def plain(model: Model, context: Context, options: StreamOptions) -> Any:
        seen.append(options)
        return _answer("plain")

    def simple(model: Model, context: Context, options: SimpleStreamOptions) -> Any:
        seen.append(options)
        return _answer(f"simple {options.reasoning}")

    return ApiProvider(api=API, stream=plain, stream_simple=simple, source=source)


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    yield
    unregister_api_providers(SOURCE)


MODEL = Model(id="m", api=API, provider="p")


async def test_a_registered_adapter_serves_its_api() -> None:
    seen: list[object] = []
    provider = _provider(seen)
    register_api_provider(provider)
    assert get_api_provider(API) is provider
    assert (await complete(MODEL, Context())).text == "plain"
    assert (await complete_simple(MODEL, Context())).text == "simple None"
    answer = await stream_simple(MODEL, Context(), SimpleStreamOptions(reasoning="low")).result()
    assert answer.text == "simple low"
    assert await stream(MODEL, Context(), StreamOptions(max_tokens=5)).result()
    assert isinstance(seen[0], StreamOptions) and isinstance(seen[1], SimpleStreamOptions)
    assert seen[-1] == StreamOptions(max_tokens=5)


async def test_registering_again_replaces_and_unregistering_removes_by_source() -> None:
    register_api_provider(_provider([]))
    replacement = _provider([], source="other")
    register_api_provider(replacement)
    assert get_api_provider(API) is replacement
    unregister_api_providers(SOURCE)  # not its source: stays
    assert get_api_provider(API) is replacement
    unregister_api_providers("other")
    with pytest.raises(UnknownApiError, match=f"no adapter is registered for api '{API}'"):
        get_api_provider(API)


def test_an_unknown_api_names_the_known_ones() -> None:
    with pytest.raises(UnknownApiError) as caught:
        get_api_provider("no-such-api")
    text = str(caught.value)
    assert "openai-completions" in text and "faux" in text and "register_api_provider" in text


def test_a_built_in_adapter_is_imported_on_first_use() -> None:
    provider = get_api_provider("faux")
    assert provider.api == "faux"
    assert get_api_provider("faux") is provider


async def test_call_stream_fn_takes_a_stream_or_an_awaitable_of_one() -> None:
    def sync_fn(model: Model, context: Context, options: SimpleStreamOptions) -> Any:
        return _answer("sync")

    async def async_fn(model: Model, context: Context, options: SimpleStreamOptions) -> Any:
        return _answer("async")

    options = SimpleStreamOptions()
    assert (await (await call_stream_fn(sync_fn, MODEL, Context(), options)).result()).text == (
        "sync"
    )
    result = await call_stream_fn(async_fn, MODEL, Context(), options)
    assert (await result.result()).text == "async"

    def wrong(model: Model, context: Context, options: SimpleStreamOptions) -> Any:
        return ["not", "a", "stream"]

    with pytest.raises(TypeError, match="returned list; expected an AssistantMessageEventStream"):
        await call_stream_fn(wrong, MODEL, Context(), options)
