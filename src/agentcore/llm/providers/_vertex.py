"""Google Vertex AI: the project, location and access token of a request, for Gemini (the
`google-genai` client in Vertex mode) and Claude (the `anthropic` SDK's `AsyncAnthropicVertex`).

Vertex has no API key: every request carries an OAuth access token as `Authorization: Bearer`.
The token comes from, in order: the request's `api_key` (an access token the caller already
holds, e.g. from the agent loop's `get_api_key`), the model's `VertexAI.token_provider`, its
`VertexAI.credentials`, or the application-default credentials (`google.auth.default`). Loading
and refreshing credentials read files and call Google's token endpoint, so both run in a worker
thread. Whatever the source, the token joins the request's secrets before anything is sent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from ...abort import cancel_on_abort
from .._retry import RequestAborted, RequestTimedOut
from .._sdk import import_sdk
from ..interception import replay_token
from ..model import VertexAI
from ._azure import add_secret, fetch_token

if TYPE_CHECKING:
    from .._request import Request
    from ..model import Model

__all__ = [
    "CLAUDE_PROVIDER",
    "GEMINI_PROVIDER",
    "VertexAccess",
    "fetch_vertex_access",
    "vertex_access",
    "vertex_settings",
]

GEMINI_PROVIDER = "google-vertex"
"""The provider id whose Gemini models are reached through Vertex AI without a `Model.cloud`."""

CLAUDE_PROVIDER = "google-vertex-anthropic"
"""The provider id whose Claude models are reached through Vertex AI without a `Model.cloud`."""

DEFAULT_LOCATION = "global"
_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


def vertex_settings(model: Model) -> VertexAI | None:
    """How `model` is reached through Vertex AI: its `cloud` settings, the defaults for a model of
    the `google-vertex` or `google-vertex-anthropic` provider, or None (not through Vertex)."""
    if isinstance(model.cloud, VertexAI):
        return model.cloud
    if model.cloud is None and model.provider in (GEMINI_PROVIDER, CLAUDE_PROVIDER):
        return VertexAI()
    return None


@dataclass(frozen=True, slots=True)
class VertexAccess:
    """Where a Vertex request goes and what it is authorised with.

    Attributes:
        project: the Google Cloud project.
        location: the region (`global`, `us-east5`, ...).
        token: the access token.
        credentials: the `google.auth` credentials the token came from, or credentials holding
            just the token (what the genai client takes).
    """

    project: str
    location: str
    token: str
    credentials: Any


def _first_env(*names: str) -> str:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return ""


def _google_auth() -> Any:
    return import_sdk("google.auth", "vertex")


def _default_credentials() -> tuple[Any, str | None]:
    """`google.auth.default` (blocking: it reads files and may ask the metadata server)."""
    result: tuple[Any, str | None] = _google_auth().default(scopes=_SCOPES)
    return result


def _refresh(credentials: Any) -> None:
    """Refresh `credentials` (blocking: it calls Google's token endpoint)."""
    transport = import_sdk("google.auth.transport.requests", "vertex")
    credentials.refresh(transport.Request())


def _token_credentials(token: str) -> Any:
    oauth2 = import_sdk("google.oauth2.credentials", "vertex")
    return oauth2.Credentials(token=token)


async def vertex_access(settings: VertexAI, request: Request, *, claude: bool) -> VertexAccess:
    """The project, location and token of a Vertex request; the token joins its secrets.

    Args:
        settings: the model's Vertex settings.
        request: the request (its `api_key`, if given, is the token).
        claude: for Claude (`ANTHROPIC_VERTEX_PROJECT_ID` is read too).

    Raises:
        ValueError: no project could be found, or a token provider returned no token.
        Exception: what loading or refreshing the credentials raised (`google.auth`'s
            `DefaultCredentialsError`, `RefreshError`).
    """
    project = settings.project or _first_env(
        "GOOGLE_CLOUD_PROJECT", *(("ANTHROPIC_VERTEX_PROJECT_ID",) if claude else ())
    )
    location = (
        settings.location
        or _first_env("GOOGLE_CLOUD_LOCATION", "CLOUD_ML_REGION")
        or DEFAULT_LOCATION
    )
    token = request.options.api_key or replay_token() or ""  # a replay fetches no token
    credentials: Any = None
    if not token and settings.token_provider is not None:
        token = await fetch_token(settings.token_provider, request, "Vertex AI")
    elif not token:
        credentials = settings.credentials
        if credentials is None:
            credentials, found = await anyio.to_thread.run_sync(
                _default_credentials, abandon_on_cancel=True
            )
            project = project or found or ""
        if not credentials.valid or not credentials.token:
            await anyio.to_thread.run_sync(_refresh, credentials, abandon_on_cancel=True)
        token = str(credentials.token or "")
        if not token:
            raise ValueError("the Google credentials gave no access token after a refresh")
    add_secret(request, token)
    if not project:
        variables = "GOOGLE_CLOUD_PROJECT" + (" or ANTHROPIC_VERTEX_PROJECT_ID" if claude else "")
        raise ValueError(
            f"no Google Cloud project for Vertex AI model {request.model.id!r}: set "
            f"VertexAI(project=...) on the model or {variables}"
        )
    if credentials is None:
        credentials = _token_credentials(token)
    return VertexAccess(project=project, location=location, token=token, credentials=credentials)


async def fetch_vertex_access(
    settings: VertexAI, request: Request, *, claude: bool
) -> VertexAccess:
    """`vertex_access` under the request's abort signal and within its `request_timeout`
    (credentials are fetched before the first attempt, and a slow token endpoint is as much a
    stalled request as a slow server).

    Raises:
        RequestAborted: the abort signal fired.
        RequestTimedOut: no token within `request_timeout`.
    """
    options = request.options
    with cancel_on_abort(options.signal):
        try:
            with anyio.fail_after(options.request_timeout):
                return await vertex_access(settings, request, claude=claude)
        except TimeoutError:
            raise RequestTimedOut(options.request_timeout or 0.0) from None
    raise RequestAborted()
