"""bankgen/bank.py: the generated ChaosBench-Logic bank is reproducible, complete and balanced."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections import defaultdict

import pytest
from helpers import PROJECT_ROOT as ROOT

from bankgen.bank import (
    CASES_DIR,
    HELDOUT_TEMPLATES,
    BankError,
    build,
    counts_table,
    load_inputs,
    template_table,
    write_bank,
)
from bankgen.systems import load_all
from pytest_reasoning_evals.chaosbench.questions import FAMILIES, SPLITS, load_questions

MANIFEST = json.loads((CASES_DIR / "manifest.json").read_text())
QUESTIONS = [q for q in load_questions(CASES_DIR) if q.dialogue_id is None]
TURNS = [q for q in load_questions(CASES_DIR) if q.dialogue_id is not None]
CATALOG = {s.id: s for s in load_all()}


def run_cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    # bankgen runs from a checkout (it is not installed): the repository root on the path
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "bankgen", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_build_bank_reproduces_the_committed_files_byte_for_byte(tmp_path) -> None:
    result = run_cli("build-bank", "--seed", "42", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "manifest.json").read_text()) == MANIFEST
    for name in MANIFEST["files"]:
        assert (tmp_path / name).read_bytes() == (CASES_DIR / name).read_bytes(), name
    assert (tmp_path / "manifest.json").read_bytes() == (CASES_DIR / "manifest.json").read_bytes()


def test_build_fails_naming_the_system_whose_indicators_contradict_its_label() -> None:
    inputs = load_inputs()
    indicators = {sid: dict(values) for sid, values in inputs.indicators.items()}
    indicators["lorenz63"]["lle"] = -0.5  # as if simulation found a stable equilibrium
    with pytest.raises(BankError, match=r"lorenz63: curated Chaotic=True but computed lle=-0\.5"):
        build(inputs=dataclasses.replace(inputs, indicators=indicators))


def test_build_fails_on_a_simulated_system_with_no_cached_indicators() -> None:
    inputs = load_inputs()
    indicators = {sid: values for sid, values in inputs.indicators.items() if sid != "henon"}
    with pytest.raises(
        BankError, match=r"henon: no cached indicators \(run `python -m bankgen compute-indicators --only henon`\)"
    ):
        build(inputs=dataclasses.replace(inputs, indicators=indicators))


def test_dataset_card_shows_the_manifest_counts() -> None:
    card = (CASES_DIR / "README.md").read_text()
    assert counts_table(MANIFEST) in card
    assert template_table(MANIFEST) in card
    assert f"{MANIFEST['dialogues']} dialogues ({MANIFEST['dialogue_turns']} turns)" in card


def test_another_seed_gives_another_bank(tmp_path) -> None:
    assert write_bank(tmp_path, seed=43)["files"] != MANIFEST["files"]


def test_every_family_and_split_is_non_empty() -> None:
    assert {q.family for q in QUESTIONS} == set(FAMILIES)
    assert {q.split for q in QUESTIONS} == set(SPLITS)
    assert all(MANIFEST["split_totals"][split] > 0 for split in SPLITS)


def test_about_a_thousand_questions_balanced_per_family() -> None:
    assert 900 <= len(QUESTIONS) <= 1100
    for family in FAMILIES:
        golds = [q.ground_truth == "TRUE" for q in QUESTIONS if q.family == family]
        assert 0.45 <= sum(golds) / len(golds) <= 0.55, family


def test_heldout_templates_appear_in_no_other_split() -> None:
    by_template = defaultdict(set)
    for q in QUESTIONS:
        by_template[q.template].add(q.split)
    heldout = {t for t, splits in by_template.items() if "heldout_templates" in splits}
    assert heldout and heldout <= set(HELDOUT_TEMPLATES.values())
    assert all(by_template[t] == {"heldout_templates"} for t in heldout)


def test_heldout_systems_are_imported_systems_never_seen_elsewhere() -> None:
    heldout = {q.system_id for q in QUESTIONS if q.split == "heldout_systems"}
    elsewhere = {q.system_id for q in QUESTIONS if q.split != "heldout_systems"}
    assert heldout and all(CATALOG[s].origin == "dysts" for s in heldout)
    assert not heldout & elsewhere


def test_records_carry_predicates_with_polarity_and_templates() -> None:
    for q in QUESTIONS:
        assert q.template and q.system_id
        for p in q.predicates:
            assert p["polarity"] in ("positive", "negative")
    adversarial = [q for q in QUESTIONS if q.family == "adversarial"]
    assert adversarial and all(q.bias for q in adversarial)
    groups = defaultdict(set)
    for q in QUESTIONS:
        if q.family == "consistency_paraphrase":
            groups[q.extra["group"]].add(q.ground_truth)
    assert groups and all(len(golds) == 1 for golds in groups.values())
    kinds = {q.extra["perturbation"] for q in QUESTIONS if q.family == "perturbation_robustness"}
    assert kinds == {"negation", "distractor", "entity_swap", "paraphrase"}


def test_atomic_golds_agree_with_the_catalog() -> None:
    for q in QUESTIONS:
        if q.family in ("atomic", "extended_systems") and len(q.predicates) == 1:
            p = q.predicates[0]
            value = (q.ground_truth == "TRUE") == (p["polarity"] == "positive")
            assert CATALOG[q.system_id].truth[p["name"]] == value, q.id


def test_at_least_fifty_dialogues_about_one_system_each() -> None:
    dialogues = defaultdict(list)
    for turn in TURNS:
        dialogues[turn.dialogue_id].append(turn)
    assert len(dialogues) >= 50
    for turns in dialogues.values():
        assert 3 <= len(turns) <= 6
        assert [t.turn for t in turns] == list(range(1, len(turns) + 1))
        assert all(len(t.predicates) == 1 for t in turns)
        assert len({t.system_id for t in turns}) == 1
        # every later turn names its system and states what it assumes: it stands alone
        name = CATALOG[turns[0].system_id].name
        for later in turns[1:]:
            assert name in later.question and "previous" not in later.question, later.question


def test_full_scale_has_at_least_40000_balanced_questions() -> None:
    families, dialogue_records = build(seed=42, scale="full")
    total = sum(len(records) for records in families.values())
    assert total >= 40_000
    for family, records in families.items():
        share = sum(r["ground_truth"] == "TRUE" for r in records) / len(records)
        assert 0.45 <= share <= 0.55, family
    # 400: more would repeat the systems' usual facts (the shortcut then reads the turns)
    assert len({r["dialogue_id"] for r in dialogue_records}) >= 400
