"""Whether a model can be used here, before its first request: `check_model`.

Nothing is imported to find out: an SDK is looked up with `importlib.util.find_spec` (importing
`anthropic` alone takes seconds), and AWS credentials are looked for where the AWS credential
chain reads them (the environment, the shared files, a container or EC2 instance role) without
importing boto3.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from ..errors import MissingApiKeyError, MissingExtraError
from ._env import resolve_api_key
from .interception import replay_key
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
_AWS_API = "bedrock-converse-stream"  # the AWS credential chain, not an API key

# Variables any of which gives the AWS chain credentials (or a way to get them).
_AWS_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",  # ECS task role
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",  # EKS service account
)
_EC2_VENDOR_FILE = Path("/sys/devices/virtual/dmi/id/sys_vendor")  # "Amazon EC2": instance role


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing or broken
        return False


def _aws_credentials_found() -> bool:
    """Whether the AWS credential chain can find something here (cheaply: no boto3, no network)."""
    if any(os.environ.get(name) for name in _AWS_ENV):
        return True
    home = Path.home() / ".aws"
    files = (
        os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or home / "credentials",
        os.environ.get("AWS_CONFIG_FILE") or home / "config",
    )
    if any(Path(f).expanduser().is_file() for f in files):
        return True
    try:
        return _EC2_VENDOR_FILE.read_text().strip().startswith("Amazon EC2")
    except OSError:
        return False


def check_model(model: Model, *, api_key: str | None = None) -> None:
    """Check, without sending anything, that requests to `model` can be made here: an adapter
    serves its api, the adapter's SDK is installed, and an API key is given or in the
    provider's environment variable (for APIs that take one). Bedrock takes AWS credentials
    instead: one of `AWS_ACCESS_KEY_ID`, `AWS_PROFILE`, `AWS_BEARER_TOKEN_BEDROCK` (or a container
    role's variables) set, `~/.aws/credentials` or `~/.aws/config` present, or an EC2 instance.
    Adapters of other APIs (faux, custom ones) bring what they need and are only looked up.
    Nothing is imported: this is fast enough to check a whole catalogue.

    Raises:
        UnknownApiError: no adapter serves `model.api`.
        MissingExtraError: the SDK is not installed; the message names the extra to install.
        MissingApiKeyError: no key given and none in the environment; the message names the
            variable (for Bedrock: no AWS credentials found, and where to put them).
    """
    get_api_provider(model.api)
    if model.api not in _SDKS:
        return
    module, extra = _SDKS[model.api]
    if not _installed(module):
        raise MissingExtraError(
            f"the {module!r} package is needed for this model but is not installed: "
            f"pip install 'agentcore-loop[{extra}]'"
        )
    if model.api != _AWS_API:
        resolve_api_key(model, StreamOptions(api_key=api_key))
    elif not _aws_credentials_found() and replay_key() is None:
        raise MissingApiKeyError(
            f"no AWS credentials for provider {model.provider!r} (model {model.id!r}): set "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or AWS_BEARER_TOKEN_BEDROCK, "
            "or write ~/.aws/credentials (aws configure)"
        )
