"""bankgen/cues.py and the cue checks of validate-cases: the bank cannot be answered from its
surface (a bag-of-words model, the shortcut baseline, "not", the property asked), and the
defects an audit found are gone."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from bankgen import cues
from bankgen.bank import CASES_DIR, MULTISTABLE_POINTS, build
from bankgen.systems import load_all
from bankgen.validate import validate
from pytest_reasoning_evals.chaosbench.shortcut import decide

CATALOG = {s.id: s for s in load_all()}
TRUTH = {s.id: s.truth for s in CATALOG.values()}
FAMILY_FILES = sorted(p for p in CASES_DIR.glob("*.jsonl") if p.name != "dialogues.jsonl")
QUESTIONS = [json.loads(line) for path in FAMILY_FILES for line in path.read_text().splitlines()]
TURNS = [json.loads(line) for line in (CASES_DIR / "dialogues.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def full_questions() -> list[dict]:
    families, _ = build(seed=42, scale="full")
    return [r for records in families.values() for r in records]


def _copy(tmp_path):
    bank = tmp_path / "bank"
    shutil.copytree(CASES_DIR, bank, ignore=shutil.ignore_patterns("prompts", "systems", "*.json", "README.md"))
    (bank / "manifest.json").write_text("{}")  # a built bank: the cue checks are its rules
    return bank


def _rewrite(path, change) -> None:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    kept = [r for r in (change(r) for r in records) if r is not None]
    path.write_text("".join(json.dumps(r) + "\n" for r in kept))


def _messages(bank) -> list[str]:
    return [p.message for p in validate(bank, TRUTH)]


# --- the committed and the full-scale bank ---


@pytest.mark.parametrize("scale", ["default", "full"])
def test_a_bag_of_words_model_stays_near_chance_held_out(scale, full_questions) -> None:
    questions = QUESTIONS if scale == "default" else full_questions
    score = cues.surface_model(questions)
    assert score["accuracy"] <= cues.SURFACE_MAX
    for family, row in score["families"].items():
        if row["n"] >= cues.FAMILY_MIN_ITEMS:
            assert row["accuracy"] <= cues.FAMILY_MAX, (family, row)


@pytest.mark.parametrize("scale", ["default", "full"])
def test_the_shortcut_baseline_stays_near_chance(scale, full_questions) -> None:
    questions = QUESTIONS if scale == "default" else full_questions
    score = cues.shortcut_score(questions)
    assert score["accuracy"] <= cues.SURFACE_MAX
    assert all(row["accuracy"] <= cues.FAMILY_MAX for row in score["families"].values()), score


def test_the_shortcut_baseline_gains_nothing_on_dialogue_turns() -> None:
    assert cues.shortcut_score(TURNS)["accuracy"] <= cues.SURFACE_MAX


def test_every_polarity_of_every_template_has_both_labels() -> None:
    balance = cues.polarity_balance(QUESTIONS)
    # negated conclusions are asked in the templates that had them one-sided before
    for template in ("fol.implication.v1", "multi_hop.chain_stated.v1", "fol.consistency.v1"):
        assert balance[(template, "negative")][0] and balance[(template, "negative")][1], template
        assert balance[(template, "positive")][0] and balance[(template, "positive")][1], template
    assert all(true and false for true, false in balance.values()), balance


def test_systems_with_the_rarer_value_are_asked_as_often() -> None:
    coverage = cues.minority_coverage(QUESTIONS, TRUTH)
    for name, row in coverage.items():
        assert row["asked_true"] == row["asked_false"], (name, row)
    # the imported systems' minority facts are asked
    extended = [q for q in QUESTIONS if q["family"] == "extended_systems"]
    asked = {(q["system_id"], q["predicates"][0]["name"]) for q in extended if q["predicates"]}
    hyper = {s.id for s in CATALOG.values() if s.origin == "dysts" and s.truth["Hyperchaotic"]}
    assert {sid for sid, p in asked if p == "Hyperchaotic"} & hyper
    assert {q["template"] for q in extended} >= {
        "extended_systems.dimension.v1",
        "extended_systems.separates_faster.v1",
    }


def test_no_text_twice_in_the_bank_dialogue_turns_included() -> None:
    texts = [" ".join(r["question"].lower().split()) for r in QUESTIONS + TURNS]
    assert len(texts) == len(set(texts))


def test_dialogue_turns_stand_alone() -> None:
    for turn in TURNS:
        assert "previous answer" not in turn["question"].lower(), turn["id"]
        assert CATALOG[turn["system_id"]].name in turn["question"], turn["id"]
    openings = {(t["system_id"], t["predicates"][0]["name"]) for t in TURNS if t["turn"] == 1}
    assert len(openings) == len({t["dialogue_id"] for t in TURNS})


# --- the audit's defects ---


def test_the_multistable_duffing_point_is_not_asked() -> None:
    assert ("duffing_gamma", 0.54) in MULTISTABLE_POINTS
    for q in QUESTIONS:
        if q.get("sweep") == "duffing_gamma":
            assert 0.54 not in (q.get("value"), q.get("from"), q.get("to")), q["id"]


def test_every_printed_exponent_carries_its_resolution_and_is_clear_of_it() -> None:
    for q in QUESTIONS:
        indicator = q.get("indicator", {})
        if "lle" not in indicator or "eps" not in indicator:
            continue
        assert "\u00b1" in q["question"], q["id"]
        eps = indicator["eps"]
        # beyond twice the resolution, or zero within it: never in between
        for lle in indicator["lle"] if isinstance(indicator["lle"], list) else [indicator["lle"]]:
            assert abs(lle) > 2 * eps or abs(lle) <= eps, q["id"]
    # each printed exponent is followed by its resolution
    printed = {
        "indicator.exponent_resolution.v1": 1,
        "indicator.two_points.v1": 2,
        "indicator.hyperchaos.v1": 2,
        "cross.explain_k.v1": 1,
    }
    for q in QUESTIONS:
        if "Lyapunov exponent" in q["question"] and q["family"] in ("indicator_diagnostics", "cross_indicator"):
            assert q["question"].count("\u00b1") == printed.get(q["template"], 0), q["question"]


def test_conventions_no_prompt_states_are_not_asked() -> None:
    for q in QUESTIONS + TURNS:
        truth = TRUTH.get(q["system_id"])
        if truth is None or len(q["predicates"]) != 1:
            continue
        name = q["predicates"][0]["name"]
        assert not (truth["Stochastic"] and name in ("Invertible", "Dissipative", "Bounded")), q["id"]
        assert not (name == "Conservative" and truth["DiscreteTime"] and truth["Invertible"] is False), q["id"]
        assert not (name in ("Ergodic", "Mixing") and truth["Conservative"] and truth[name] is False), q["id"]
        assert not (name == "Bounded" and CATALOG[q["system_id"]].origin == "dysts"), q["id"]


def test_the_integration_distractor_is_attached_only_to_flows() -> None:
    for q in QUESTIONS:
        if q["question"].startswith("Researchers have simulated it with several different integration schemes"):
            truth = TRUTH[q["system_id"]]
            assert truth["ContinuousTime"] and truth["Deterministic"], q["id"]


# --- the checks catch what they are for ---


def test_a_word_that_gives_the_label_away_is_caught(tmp_path) -> None:
    bank = _copy(tmp_path)
    for path in bank.glob("*.jsonl"):
        if path.name != "dialogues.jsonl":
            _rewrite(
                path,
                lambda r: (
                    {**r, "question": r["question"][:-1] + ", as is well known?"} if r["ground_truth"] == "TRUE" else r
                ),
            )
    messages = _messages(bank)
    assert any(re.match(r"a bag-of-words model .* scores 100\.0% of 960 questions", m) for m in messages), messages


def test_golds_a_shortcut_can_guess_are_caught(tmp_path) -> None:
    bank = _copy(tmp_path)
    for path in bank.glob("*.jsonl"):
        if path.name != "dialogues.jsonl":
            _rewrite(path, lambda r: {**r, "ground_truth": decide(r["question"]).label})
    messages = _messages(bank)
    assert "the shortcut baseline scores 100.0% of 960 questions from surface cues (at most 60%)" in messages


def test_a_template_whose_negated_items_are_all_true_is_caught(tmp_path) -> None:
    bank = _copy(tmp_path)
    _rewrite(
        bank / "atomic.jsonl",
        lambda r: None if r["template"] == "atomic.negated.v1" and r["ground_truth"] == "FALSE" else r,
    )
    messages = _messages(bank)
    assert any(m.startswith("template atomic.negated.v1: every negative conclusion is TRUE") for m in messages)


def test_a_property_asked_only_of_its_usual_systems_is_caught(tmp_path) -> None:
    bank = _copy(tmp_path)
    stochastic = {sid for sid, truth in TRUTH.items() if truth["Stochastic"]}
    for path in bank.glob("*.jsonl"):
        _rewrite(
            path,
            lambda r: (
                None if r["system_id"] in stochastic and [p["name"] for p in r["predicates"]] == ["Stochastic"] else r
            ),
        )
    messages = _messages(bank)
    assert any(m.startswith("Stochastic: systems with its rarer value (True) asked 0 times") for m in messages)


def test_a_dialogue_turn_that_repeats_a_question_is_caught(tmp_path) -> None:
    bank = _copy(tmp_path)
    first = QUESTIONS[0]["question"]
    _rewrite(bank / "dialogues.jsonl", lambda r: {**r, "question": first} if r["id"] == "dlg-0001-t2" else r)
    assert any(m.startswith("duplicate question of") for m in _messages(bank))
