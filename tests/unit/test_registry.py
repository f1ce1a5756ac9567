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
