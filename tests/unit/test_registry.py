"""The models files' judge panels: the shipped ones name shipped models; a malformed one is one
error naming the file."""

from __future__ import annotations

import re

import pytest

from pytest_reasoning_evals.registry import RegistryError, load_judge_panels, load_registry


def test_the_shipped_panels_seat_distinct_shipped_models_of_three_providers():
    models, panels = load_registry(), load_judge_panels()
    assert panels, "models.yaml ships a judge panel example"
    for name, members in panels.items():
        assert name not in models, f"panel {name!r} would hide the model alias of the same name"
        assert len(set(members)) == len(members) == 3
        assert {models[m].provider for m in members} == {"openai", "anthropic", "gemini"}


def test_a_users_models_file_adds_or_replaces_panels(tmp_path):
    own = tmp_path / "models.yaml"
    own.write_text("models: {}\njudge_panels:\n  cross-provider: [a, b]\n  mine: [c]\n")
    panels = load_judge_panels(own)
    assert panels["cross-provider"] == ["a", "b"] and panels["mine"] == ["c"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("judge_panels: [a, b]", "'judge_panels:' must map a panel name to a list of model aliases"),
        ("judge_panels:\n  trio: a", "judge panel 'trio' must be a non-empty list of model aliases"),
        ("judge_panels:\n  trio: []", "judge panel 'trio' must be a non-empty list of model aliases"),
        ("judge_panels:\n  ../up: [a]", "judge panel '../up' is not a valid model alias"),
    ],
)
def test_a_malformed_panel_is_an_error_naming_the_file(tmp_path, text, message):
    own = tmp_path / "models.yaml"
    own.write_text("models: {}\n" + text + "\n")
    with pytest.raises(RegistryError, match=re.escape("models.yaml: " + message)):
        load_judge_panels(own)


# --- reasoning models ---

ENTRY = "models:\n  thinker:\n    provider: {provider}\n    model_id: m\n    base_url: http://127.0.0.1:1/v1\n{extra}"


def test_the_shipped_registry_marks_its_reasoning_models():
    models = load_registry()
    reasoning = {alias for alias, spec in models.items() if spec.reasoning}
    assert {"o3", "o4-mini", "gpt-5", "gpt-5-mini", "claude-sonnet-4-thinking"} <= reasoning
    assert not {"gpt-4.1", "gpt-4.1-mini", "claude-sonnet-4", "gpt4", "smollm2-135m"} & reasoning
    thinking = models["claude-sonnet-4-thinking"]
    assert (thinking.model_id, thinking.thinking_budget) == (models["claude-sonnet-4"].model_id, 2048)
    assert all(models[alias].price_in > 0 and models[alias].price_out > 0 for alias in reasoning)


def test_a_reasoning_entry_is_read_with_its_thinking_budget(tmp_path):
    own = tmp_path / "models.yaml"
    own.write_text(ENTRY.format(provider="anthropic", extra="    reasoning: true\n    thinking_budget: 1024\n"))
    spec = load_registry(own)["thinker"]
    assert (spec.reasoning, spec.thinking_budget) == (True, 1024)
    assert spec.to_dict()["reasoning"] is True  # the manifest records it


@pytest.mark.parametrize(
    ("provider", "extra", "message"),
    [
        ("openai", "    reasoning: yes please\n", "reasoning must be true or false, got 'yes please'"),
        ("openai", "    reasoning: 1\n", "reasoning must be true or false, got 1"),
        ("openai", "    thinking_budget: 2048\n", "thinking_budget needs reasoning: true"),
        ("openai", "    reasoning: true\n    thinking_budget: 1.5\n", "thinking_budget must be a whole number"),
        (
            "openai",
            "    reasoning: true\n    thinking_budget: 0\n",
            "thinking_budget must be a whole number of tokens >= 1",
        ),
        ("anthropic", "    reasoning: true\n    thinking_budget: 512\n", "tokens >= 1024, got 512"),
        ("anthropic", "    reasoning: true\n", "reasoning: true needs thinking_budget (tokens, >= 1024) for anthropic"),
        (
            "openai_compatible",
            "    reasoning: true\n    thinking_budget: 2048\n",
            "a provider of openai, anthropic, gemini",
        ),
    ],
)
def test_a_bad_reasoning_field_is_an_error_naming_the_file_and_the_alias(tmp_path, provider, extra, message):
    own = tmp_path / "models.yaml"
    own.write_text(ENTRY.format(provider=provider, extra=extra))
    with pytest.raises(RegistryError, match=re.escape(f"{own}: model 'thinker': ") + ".*" + re.escape(message)):
        load_registry(own)
