"""Azure OpenAI: the `openai` SDK's `AsyncAzureOpenAI` client for a model's deployment, and the
bearer tokens of the cloud adapters kept out of every text.

Both OpenAI adapters send their requests as they always do; only the client differs. Chat
Completions go to the deployment URL (`/openai/deployments/<deployment>/chat/completions`, the
client puts the deployment there from the body's `model`), Responses to the v1 API
(`/openai/v1/responses`, the deployment in the body's `model`). Each request carries
`api-version` as a query parameter and its credential as the `api-key` header or an Entra ID
bearer token.

A token a provider returns is only known once the request is under way, so it is added to the
request's secrets as it is fetched: an error text produced later (a gateway quoting the
`Authorization` header back) is redacted like one quoting an API key.
"""

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING, Any

import anyio

from ...errors import MissingApiKeyError
from .._http import ssl_context
from .._redact import secret_values
from ..interception import intercept_http, replay_key
from ..model import AzureOpenAI

if TYPE_CHECKING:
    from .._request import Request
    from ..model import Model, TokenProvider
    from ..types import StreamOptions

__all__ = [
    "AZURE_PROVIDER",
    "DEFAULT_AZURE_API_VERSION",
    "add_secret",
    "azure_api_key",
    "azure_client",
    "azure_settings",
    "deployment",
    "fetch_token",
]

AZURE_PROVIDER = "azure-openai"
"""The provider id whose models are reached through Azure OpenAI without a `Model.cloud`."""

DEFAULT_AZURE_API_VERSION = "2024-10-21"
"""The Chat Completions API version sent when neither the model nor the environment names one
(the latest generally available one)."""

_KEY_VARIABLE = "AZURE_OPENAI_API_KEY"
_ENDPOINT_VARIABLE = "AZURE_OPENAI_ENDPOINT"
_VERSION_VARIABLES = ("AZURE_OPENAI_API_VERSION", "OPENAI_API_VERSION")


def azure_settings(model: Model) -> AzureOpenAI | None:
    """How `model` is reached through Azure: its `cloud` settings, the defaults for a model of
    the `azure-openai` provider, or None (not through Azure)."""
    if isinstance(model.cloud, AzureOpenAI):
        return model.cloud
    if model.cloud is None and model.provider == AZURE_PROVIDER:
        return AzureOpenAI()
    return None


def azure_api_key(model: Model, options: StreamOptions, settings: AzureOpenAI) -> str | None:
    """The request's key: `options.api_key`, else None when a token provider authenticates,
    else `AZURE_OPENAI_API_KEY`.

    Raises:
        MissingApiKeyError: none of them.
    """
    if options.api_key:
        return options.api_key
    if settings.token_provider is not None:
        return None
    key = os.environ.get(_KEY_VARIABLE) or replay_key()
    if key:
        return key
    raise MissingApiKeyError(
        f"no credential for Azure OpenAI model {model.id!r}: set {_KEY_VARIABLE}, pass api_key "
        "in the stream options, or give the model AzureOpenAI(token_provider=...) for Entra ID"
    )


def _endpoint(model: Model) -> str:
    endpoint = model.base_url or os.environ.get(_ENDPOINT_VARIABLE, "")
    if not endpoint:
        raise ValueError(
            f"no endpoint for Azure OpenAI model {model.id!r}: set the model's base_url to "
            f"https://<resource>.openai.azure.com or set {_ENDPOINT_VARIABLE}"
        )
    endpoint = endpoint.rstrip("/")
    # a base URL given with the SDK's own `/openai` suffix means the same resource
    return endpoint.removesuffix("/openai")


def _api_version(settings: AzureOpenAI) -> str:
    if settings.api_version:
        return settings.api_version
    for name in _VERSION_VARIABLES:
        value = os.environ.get(name)
        if value:
            return value
    return DEFAULT_AZURE_API_VERSION


def add_secret(request: Request, value: str) -> None:
    """Keep `value` (a token fetched during the request) out of the request's texts from now on."""
    found = set(request.secrets) | set(secret_values(value))
    request.secrets = tuple(sorted(found, key=lambda v: (-len(v), v)))


async def fetch_token(provider: TokenProvider, request: Request, what: str) -> str:
    """A token from `provider` (a plain function runs in a worker thread, since refreshing a
    token blocks on the network), added to the request's secrets.

    Raises:
        ValueError: the provider returned something other than a non-empty string.
    """
    if inspect.iscoroutinefunction(provider):
        token: Any = await provider()
    else:
        token = await anyio.to_thread.run_sync(provider, abandon_on_cancel=True)
        if inspect.isawaitable(token):
            token = await token
    if not isinstance(token, str) or not token:
        raise ValueError(
            f"the {what} token provider returned {type(token).__name__}; expected a "
            "non-empty string"
        )
    add_secret(request, token)
    return token


async def azure_client(
    sdk: Any,
    model: Model,
    settings: AzureOpenAI,
    request: Request,
    api_key: str | None,
    headers: dict[str, str],
    *,
    responses: bool,
) -> Any:
    """An `AsyncAzureOpenAI` client for one request, like `sdk_client` makes for OpenAI: the
    SDK's retries off, an HTTP client on the shared TLS context.

    Args:
        sdk: the `openai` module.
        model: the model (its `base_url` is the resource endpoint).
        settings: its Azure settings.
        request: the request (a token fetched for it joins its secrets).
        api_key: the key, or None to authenticate with `settings.token_provider`.
        headers: sent with every request.
        responses: for the Responses API (the v1 path) rather than Chat Completions.
    """
    endpoint = _endpoint(model)
    auth: dict[str, Any]
    provider = settings.token_provider
    if api_key is None and provider is not None:

        async def token() -> str:
            return await fetch_token(provider, request, "Entra ID")

        auth = {"azure_ad_token_provider": token}
    else:
        auth = {"api_key": api_key}
    location: dict[str, Any]
    if responses:
        location = {
            "base_url": f"{endpoint}/openai/v1",
            "api_version": settings.responses_api_version,
        }
    else:
        location = {"azure_endpoint": endpoint, "api_version": _api_version(settings)}
    http_client = intercept_http(sdk.DefaultAsyncHttpxClient(verify=await ssl_context()))
    return sdk.AsyncAzureOpenAI(
        **auth,
        **location,
        max_retries=0,
        default_headers=headers,
        http_client=http_client,
    )


def deployment(model: Model, settings: AzureOpenAI) -> str:
    """The deployment a request goes to: the body's `model` (the Azure client routes Chat
    Completions by it; the v1 API reads it as the model)."""
    return settings.deployment or model.id
