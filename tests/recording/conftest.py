"""Shared pieces of the recorded-traffic tests: the wires of the five adapters (the four of
`llm.fault_server` and Bedrock's binary event stream), an environment without any provider key,
and a model moved to a host nobody can reach (host and port are not part of a recorded request's
identity, so replaying against it proves no connection is made)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcore.llm.model import Model
from llm.bedrock_server import BedrockWire
from llm.fault_server import WIRES, FaultServer, Wire

ALL_WIRES: dict[str, Wire] = {**WIRES, "bedrock-converse-stream": BedrockWire()}
"""The wire format of every adapter tested here, by `Model.api`."""

ACCESS_KEY = "AKIASECRET0TEST12345"
SECRET_KEY = "aws-SECRET-access-key-0123456789abcdefXYZ"
SESSION_TOKEN = "SECRET-session-token-ZXhhbXBsZS10b2tlbg=="
NOWHERE = Path("/nonexistent/agentcore-tests/aws")
UNREACHABLE = "https://unreachable.invalid"
"""Where replayed models point: a name that never resolves (`.invalid` is reserved)."""

KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
)


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A region, and the machine's AWS files and metadata out of reach (credentials are set by
    the tests that record)."""
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(NOWHERE / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(NOWHERE / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def set_aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Static AWS credentials, each holding "SECRET"."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)


class Nowhere:
    """Stands in for a server where `Wire.model` wants one: a host that does not exist."""

    url = UNREACHABLE

    def base_url(self, prefix: str = "/v1") -> str:
        return UNREACHABLE + prefix


def offline(model: Model) -> Model:
    """The same model at a host that does not exist."""
    path = "/" + model.base_url.split("://", 1)[-1].partition("/")[2] if model.base_url else ""
    return dataclasses.replace(model, base_url=UNREACHABLE + path.rstrip("/"))


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as started:
        yield started
