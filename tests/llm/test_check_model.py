"""`agentcore.llm.check_model`: is a model usable here, and if not, why (nothing is sent)."""

from __future__ import annotations

import pytest

from agentcore.errors import MissingApiKeyError, UnknownApiError
from agentcore.llm import Model, check_model
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


def test_bedrock_needs_no_api_key() -> None:
    pytest.importorskip("boto3")
    model = Model(id="m", api="bedrock-converse-stream", provider="amazon-bedrock")
    check_model(model)  # credentials come from the AWS chain at request time
