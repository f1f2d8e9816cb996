"""API keys from options and the environment; lazy SDK imports."""

from __future__ import annotations

import pytest

from agentcore.errors import MissingApiKeyError, MissingExtraError
from agentcore.llm import Model, StreamOptions, get_env_api_key
from agentcore.llm._env import ENV_KEYS, NO_KEY_PLACEHOLDER, resolve_api_key
from agentcore.llm._sdk import import_sdk


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [*ENV_KEYS.values(), "GOOGLE_API_KEY"]:
        monkeypatch.delenv(name, raising=False)


def test_env_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_env_api_key("openai") is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert get_env_api_key("openai") == "sk-test"
    monkeypatch.setenv("GOOGLE_API_KEY", "g-fallback")
    assert get_env_api_key("google") == "g-fallback"
    monkeypatch.setenv("GEMINI_API_KEY", "g-main")
    assert get_env_api_key("google") == "g-main"
    assert get_env_api_key("nobody") is None


def test_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    model = Model(id="m", api="openai-completions", provider="groq")
    assert resolve_api_key(model, StreamOptions(api_key="given")) == "given"
    with pytest.raises(MissingApiKeyError, match="GROQ_API_KEY"):
        resolve_api_key(model, StreamOptions())
    monkeypatch.setenv("GROQ_API_KEY", "from-env")
    assert resolve_api_key(model, StreamOptions()) == "from-env"


def test_keyless_servers() -> None:
    local = Model(id="m", api="openai-completions", provider="local")
    assert resolve_api_key(local, StreamOptions()) == NO_KEY_PLACEHOLDER
    on_localhost = Model(
        id="m", api="openai-completions", provider="mine", base_url="http://localhost:8000/v1"
    )
    assert resolve_api_key(on_localhost, StreamOptions()) == NO_KEY_PLACEHOLDER
    remote = Model(id="m", api="openai-completions", provider="mine", base_url="https://x.io/v1")
    with pytest.raises(MissingApiKeyError, match="'mine'"):
        resolve_api_key(remote, StreamOptions())


def test_import_sdk() -> None:
    assert import_sdk("json", "none").__name__ == "json"
    with pytest.raises(MissingExtraError, match=r"pip install 'agentcore-loop\[openai\]'"):
        import_sdk("agentcore_no_such_sdk", "openai")
