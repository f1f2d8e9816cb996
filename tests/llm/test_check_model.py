"""`agentcore.llm.check_model`: is a model usable here, and if not, why (nothing is sent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentcore.errors import MissingApiKeyError, UnknownApiError
from agentcore.llm import Model, _check, check_model
from agentcore.testing import FauxProvider


def test_a_model_with_its_key_passes_and_without_one_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = Model(id="gpt-x", api="openai-completions", provider="openai")
    check_model(model, api_key="sk-given")
    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        check_model(model)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    check_model(model)


def test_an_unknown_api_is_named_and_other_adapters_are_only_looked_up() -> None:
    with pytest.raises(UnknownApiError, match="no-such-api"):
        check_model(Model(id="m", api="no-such-api", provider="p"))
    check_model(FauxProvider().model)  # brings what it needs: no SDK, no key


def test_bedrock_needs_no_api_key_but_aws_credentials(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("boto3")
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(_check, "_EC2_VENDOR_FILE", tmp_path / "no-such-file")
    model = Model(id="m", api="bedrock-converse-stream", provider="amazon-bedrock")
    with pytest.raises(MissingApiKeyError, match="AWS_ACCESS_KEY_ID"):
        check_model(model)
    monkeypatch.setenv("AWS_PROFILE", "dev")  # the chain reads the profile at request time
    check_model(model)
