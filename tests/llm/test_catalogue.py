"""The catalogue kept from data: `models.json` is exactly what `scripts/gen-catalogue` makes of
the pinned `genai-prices` data and `scripts/catalogue-overrides.json`, and its capability fields
are what the adapters' rules would have said."""

from __future__ import annotations

import copy
import importlib.machinery
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from agentcore.llm import Model, get_model, get_models, get_providers
from agentcore.llm.model import BedrockCompat
from agentcore.llm.models import model_from_json
from agentcore.llm.thinking import XHIGH_MODELS, XHIGH_SINCE, supports_xhigh

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gen-catalogue"
OVERRIDES = ROOT / "scripts" / "catalogue-overrides.json"
CATALOGUE = ROOT / "src" / "agentcore" / "llm" / "models.json"


def load_generator() -> ModuleType:
    """The generator script as a module (its file has no `.py` suffix)."""
    loader = importlib.machinery.SourceFileLoader("gen_catalogue", str(SCRIPT))
    spec = importlib.util.spec_from_loader("gen_catalogue", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


GEN = load_generator()


def overrides() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(OVERRIDES.read_text("utf-8"))
    return data


def test_the_checked_in_catalogue_is_the_generator_output() -> None:
    assert CATALOGUE.read_text("utf-8") == GEN.generate(), (
        "models.json differs from the generator's output: run scripts/gen-catalogue"
    )
    assert GEN.main(["--check"]) == 0


def test_check_mode_reports_a_stale_catalogue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "models.json"
    text = CATALOGUE.read_text("utf-8")
    stale.write_text(text.replace('"max_tokens": 128000', '"max_tokens": 1'))
    monkeypatch.setattr(GEN, "CATALOGUE", stale)
    monkeypatch.setattr(GEN, "ROOT", tmp_path)
    assert GEN.main(["--check"]) == 1
    assert "run scripts/gen-catalogue" in capsys.readouterr().err


def test_prices_and_windows_come_from_genai_prices() -> None:
    # Not in the overrides: taken from the data (Anthropic's cache write is the 5-minute write).
    raw = {m["id"]: m for m in overrides()["providers"]["anthropic"]["models"]}
    assert "cost" not in raw["claude-sonnet-4-5"]
    sonnet = get_model("anthropic", "claude-sonnet-4-5")
    assert (sonnet.cost.input, sonnet.cost.output) == (3, 15)  # the base tier below 200k
    assert (sonnet.cost.cache_read, sonnet.cost.cache_write) == (0.3, 3.75)
    assert get_model("openai", "gpt-5").context_window == 400_000
    # The alias moved to Mistral Medium 3.5 on 2026-06-16 (a price corrected by the data).
    medium = get_model("mistral", "mistral-medium-latest")
    assert (medium.cost.input, medium.cost.output, medium.cost.cache_read) == (1.5, 7.5, 0.15)


def test_a_price_that_changed_over_time_is_the_one_in_force_on_prices_as_of() -> None:
    data = overrides()
    data["genai_prices"]["prices_as_of"] = "2026-03-15"  # the day before Mistral Small 4
    old = GEN.build(data)
    small = {m["id"]: m for m in old["providers"]["mistral"]["models"]}["mistral-small-latest"]
    assert small["cost"] == {"input": 0.1, "output": 0.3, "cache_read": 0, "cache_write": 0}
    assert get_model("mistral", "mistral-small-latest").cost.output == 0.6


def test_a_time_of_day_price_is_the_peak_one() -> None:
    data = overrides()
    chat = next(m for m in data["providers"]["deepseek"]["models"] if m["id"] == "deepseek-chat")
    del chat["cost"]  # let the data decide: off-peak 0.135, peak 0.27 per million input tokens
    built = GEN.build(data)
    entry = {m["id"]: m for m in built["providers"]["deepseek"]["models"]}["deepseek-chat"]
    assert entry["cost"]["input"] == 0.27


def test_the_local_entry_is_kept_exactly_as_written() -> None:
    hand = overrides()["providers"]["local"]["models"]
    shipped = json.loads(CATALOGUE.read_text("utf-8"))["providers"]["local"]["models"]
    assert shipped == hand and len(hand) == 1
    assert list(shipped[0]) == list(hand[0])  # key order too


def test_the_catalogue_keeps_every_provider_and_has_mistral_models() -> None:
    providers = set(get_providers())
    assert {
        "anthropic", "cerebras", "deepseek", "google", "groq", "local", "mistral", "openai",
        "openrouter", "together", "xai",
    } <= providers  # fmt: skip
    mistral = {m.id for m in get_models("mistral")}
    assert {"mistral-large-latest", "mistral-large-2512", "mistral-small-2603"} <= mistral
    for model in get_models("mistral"):
        assert model.base_url == "https://api.mistral.ai/v1"
        assert model.compat is not None and model.compat.tool_call_id_format == "mistral"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["providers"]["together"]["models"][1].pop("cost"), "has no price"),
        (lambda d: d["providers"]["groq"]["models"][0].pop("context_window"), "no context window"),
        (
            lambda d: d["providers"]["mistral"]["models"][0].update(
                genai_prices_model="mistral-nope"
            ),
            "has no model 'mistral-nope'",
        ),
        (
            lambda d: d["providers"]["openai"]["models"][0].update(max_tokens=10**9),
            "exceeds the context window",
        ),
        (lambda d: d["genai_prices"].update(version="0.0.1"), "overrides pin 0.0.1"),
    ],
)
def test_unsound_overrides_fail_with_a_clear_reason(change: Any, message: str) -> None:
    data = copy.deepcopy(overrides())
    change(data)
    with pytest.raises(GEN.CatalogueError, match=message):
        GEN.build(data)


def _xhigh_by_id(model: Model) -> bool:
    model_id = model.id.lower()
    if any(known in model_id for known in XHIGH_MODELS):
        return True
    for pattern, since in XHIGH_SINCE:
        match = pattern.search(model_id)
        if match is not None:
            return (int(match.group(1)), int(match.group(2) or 0)) >= since
    return False


CATALOGUED = [m for p in get_providers() if p != "local" for m in get_models(p) if m.reasoning]


@pytest.mark.parametrize("model", CATALOGUED, ids=lambda m: f"{m.provider}/{m.id}")
def test_every_reasoning_model_states_its_thinking_capabilities(model: Model) -> None:
    assert model.thinking_control is not None
    assert model.supports_xhigh is not None
    assert model.supports_xhigh == _xhigh_by_id(model)  # the data says what the id rule said
    if model.api == "anthropic-messages":
        assert model.thinking_control in ("budget", "adaptive")
    if model.api == "openai-responses":
        assert model.thinking_control == "effort"
    if model.api == "openai-completions":
        assert (model.thinking_control == "effort") == model.compat.supports_reasoning_effort  # type: ignore[union-attr]


def test_the_stated_capability_wins_over_the_id() -> None:
    by_id = Model(id="claude-opus-4-6", api="anthropic-messages", provider="p")
    assert supports_xhigh(by_id)  # nothing stated: the id rule, as before
    stated = Model(
        id="claude-opus-4-6", api="anthropic-messages", provider="p", supports_xhigh=False
    )
    assert not supports_xhigh(stated)
    renamed = Model(id="my-opus", api="anthropic-messages", provider="p", supports_xhigh=True)
    assert supports_xhigh(renamed)


def test_the_cloud_providers_are_in_the_catalogue_with_their_prices() -> None:
    bedrock = {m.id: m for m in get_models("amazon-bedrock")}
    sonnet = bedrock["us.anthropic.claude-sonnet-4-5-20250929-v1:0"]
    # genai-prices' AWS data: a US (regional) inference profile costs 10% over the global price.
    assert (sonnet.cost.input, sonnet.cost.output, sonnet.cost.cache_write) == (3.3, 16.5, 4.125)
    assert sonnet.api == "bedrock-converse-stream" and sonnet.base_url == ""
    assert sonnet.compat == BedrockCompat(thinking="anthropic", cache_points=True)
    llama = bedrock["us.meta.llama3-3-70b-instruct-v1:0"]
    assert llama.compat == BedrockCompat(thinking="none", cache_points=False)
    assert (llama.context_window, llama.cost.cache_read) == (128_000, 0)
    azure = {m.id: m for m in get_models("azure-openai")}
    assert {"gpt-4.1", "gpt-5", "o4-mini"} <= set(azure)  # other tests register models too
    assert {azure[i].api for i in ("gpt-4.1", "gpt-5", "o4-mini")} == {"openai-responses"}
    assert azure["gpt-5"].context_window == 400_000 and azure["gpt-5"].thinking_control == "effort"
    vertex = {m.id: m for m in get_models("google-vertex")}
    assert {"gemini-2.5-pro", "gemini-2.5-flash"} <= set(vertex)
    assert vertex["gemini-2.5-flash"].cost.output == 2.5
    claude = {m.id: m for m in get_models("google-vertex-anthropic")}
    assert {"claude-sonnet-4-5@20250929", "claude-haiku-4-5@20251001"} <= set(claude)
    assert claude["claude-sonnet-4-5@20250929"].cost.cache_write == 3.75
    for provider in ("amazon-bedrock", "azure-openai", "google-vertex", "google-vertex-anthropic"):
        spec = overrides()["providers"][provider]
        assert spec["base_url"] == "" and spec["source"]


def test_a_bedrock_entry_must_state_its_compat() -> None:
    # What thinking and caching mean for a Bedrock model is data, never read from its id.
    data = overrides()
    data["providers"]["amazon-bedrock"]["models"][2].pop("compat")
    with pytest.raises(GEN.CatalogueError, match=r"llama3-3-70b.*BedrockCompat"):
        GEN.build(data)
    loaded = model_from_json("amazon-bedrock", {"id": "m", "api": "bedrock-converse-stream"})
    assert loaded.compat == BedrockCompat()  # loading never sniffs either
