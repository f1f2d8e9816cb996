"""Whether a model can be used here, before its first request: `check_model`."""

from __future__ import annotations

from ._env import resolve_api_key
from .model import Model
from .registry import get_api_provider
from .types import StreamOptions

__all__ = ["check_model"]

# The vendor SDK each built-in adapter needs, and the agentcore extra that installs it.
_SDKS: dict[str, tuple[str, str]] = {
    "openai-completions": ("openai", "openai"),
    "openai-responses": ("openai", "openai"),
    "anthropic-messages": ("anthropic", "anthropic"),
    "google-generative-ai": ("google.genai", "google"),
    "bedrock-converse-stream": ("boto3", "bedrock"),
}
_NO_API_KEY = frozenset({"bedrock-converse-stream"})  # the AWS credential chain, not a key


def check_model(model: Model, *, api_key: str | None = None) -> None:
    """Check, without sending anything, that requests to `model` can be made here: an adapter
    serves its api, the adapter's SDK is installed, and an API key is given or in the
    provider's environment variable (for APIs that take one). Adapters of other APIs (faux,
    custom ones) bring what they need and are only looked up.

    Raises:
        UnknownApiError: no adapter serves `model.api`.
        MissingExtraError: the SDK is not installed; the message names the extra to install.
        MissingApiKeyError: no key given and none in the environment; the message names the
            variable.
    """
    get_api_provider(model.api)
    if model.api in _SDKS:
        from ._sdk import import_sdk  # here, not at the top: it brings httpx (tens of ms)

        import_sdk(*_SDKS[model.api])
        if model.api not in _NO_API_KEY:
            resolve_api_key(model, StreamOptions(api_key=api_key))
