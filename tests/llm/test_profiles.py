"""Capabilities as data: adapters read the catalogue's facts and the APIs' profiles, and the rules
for models built by hand live in one module (`llm/_profiles.py`), agreeing with the data."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from agentcore.llm import GoogleCompat, Model, ThinkingBudgets, get_models
from agentcore.llm._profiles import (
    bedrock_compat,
    google_compat,
    on_api_service,
    thinking_control,
)
from agentcore.llm.providers import google
from agentcore.llm.providers._anthropic_request import supports_adaptive_thinking

LLM = Path(__file__).resolve().parents[2] / "src" / "agentcore" / "llm"
GEMINI = "google-generative-ai"


@pytest.mark.parametrize("provider", ["google", "google-vertex"])
def test_the_catalogue_states_what_the_id_rules_would_say(provider: str) -> None:
    for model in get_models(provider):
        assert isinstance(model.compat, GoogleCompat), model.id
        by_id = Model(id=model.id, api=model.api, provider="hand-made")
        assert google_compat(by_id) == model.compat, model.id
        assert thinking_control(by_id) == model.thinking_control, model.id


def test_stated_facts_win_over_the_model_id() -> None:
    budgets = ThinkingBudgets(minimal=1, low=2, medium=3, high=4)
    proxy = Model(
        id="gemini-2.5-pro",  # the id says: at least 128, the 2.5 Pro ranges
        api=GEMINI,
        provider="proxy",
        reasoning=True,
        thinking_control="budget",
        compat=GoogleCompat(thinking_budgets=budgets, min_thinking_budget=0),
    )
    assert google.thinking_config(proxy, "off") == {"thinking_budget": 0}
    assert google.thinking_config(proxy, "medium") == {
        "include_thoughts": True,
        "thinking_budget": 3,
    }
    levels = Model(
        id="my-model",
        api=GEMINI,
        provider="proxy",
        reasoning=True,
        thinking_control="level",
        compat=GoogleCompat(thinking_levels="low_high"),
    )
    assert google.thinking_config(levels, "medium") == {
        "include_thoughts": True,
        "thinking_level": "HIGH",
    }
    claude = Model(
        id="claude-opus-4-6", api="anthropic-messages", provider="x", thinking_control="budget"
    )
    assert not supports_adaptive_thinking(claude)


def test_the_api_service_is_a_profile_not_a_url_check_per_adapter() -> None:
    def model(api: str, base_url: str) -> Model:
        return Model(id="m", api=api, provider="p", base_url=base_url)

    assert on_api_service(model("openai-completions", ""))
    assert on_api_service(model("openai-responses", "https://api.openai.com/v1"))
    assert on_api_service(model("anthropic-messages", "https://api.anthropic.com"))
    assert not on_api_service(model("openai-responses", "http://127.0.0.1:9/v1"))
    assert not on_api_service(model("anthropic-messages", "https://proxy.example.com"))
    assert not on_api_service(model("faux", ""))


def test_a_hand_made_bedrock_model_gets_its_compat_from_the_rule() -> None:
    claude = Model(
        id="eu.anthropic.claude-x", api="bedrock-converse-stream", provider="b", reasoning=True
    )
    assert bedrock_compat(claude).thinking == "anthropic"
    assert not bedrock_compat(claude).cache_points


def _sniffing(path: Path) -> list[str]:
    """Host checks and model-id tests in a module: `urlsplit`/`.hostname`, and `.startswith`,
    `in` or `.lower()` applied to `<something>.id`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr == "hostname":
            found.append(f"{path.name}:{node.lineno}: .hostname")
        elif isinstance(node, ast.Name) and node.id == "urlsplit":
            found.append(f"{path.name}:{node.lineno}: urlsplit")
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.In) for op in node.ops):
            for side in node.comparators:
                if isinstance(side, ast.Attribute) and side.attr == "id":
                    found.append(f"{path.name}:{node.lineno}: ... in <model>.id")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "lower")
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr == "id"
        ):
            found.append(f"{path.name}:{node.lineno}: <model>.id.{node.func.attr}()")
    return found


def test_no_adapter_sniffs_hosts_or_model_ids() -> None:
    # (`thinking.supports_xhigh` keeps its public, documented id rule for hand-made models)
    modules = [*sorted((LLM / "providers").glob("*.py")), LLM / "_env.py"]
    offenders = [hit for path in modules for hit in _sniffing(path)]
    assert offenders == []
    # the rules are where they belong (and the check sees them)
    assert _sniffing(LLM / "_profiles.py")


def test_a_session_keeps_a_hand_made_models_google_compat() -> None:
    from agentcore.sessions._base import model_from_json, model_to_json

    compat = GoogleCompat(
        thinking_budgets=ThinkingBudgets(minimal=1, low=2, medium=3, high=4),
        requires_tool_call_id=True,
    )
    model = Model(id="proxy-gemini", api=GEMINI, provider="proxy", compat=compat)
    restored, _ = model_from_json(json.loads(json.dumps(model_to_json(model))), "test")
    assert restored.compat == compat
