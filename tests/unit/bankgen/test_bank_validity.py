"""Measurement validity of the generated bank: no question answerable from its template or its
turn position, golds only where the catalog knows the truth, names that do not give the answer
away, printed numbers that read right, and validate-cases rules that tell a bank from a user's
own file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter, defaultdict

import pytest
from helpers import PROJECT_ROOT as ROOT

from bankgen.bank import CASES_DIR, _fmt, _fmt_k, build, load_inputs, regime_transition
from bankgen.systems import CatalogError, load_all, load_catalog
from pytest_reasoning_evals.chaosbench import ontology
from pytest_reasoning_evals.chaosbench.questions import load_questions

ALL = load_questions(CASES_DIR)
QUESTIONS = [q for q in ALL if q.dialogue_id is None]
TURNS = [q for q in ALL if q.dialogue_id is not None]
CATALOG = {s.id: s for s in load_all()}


@pytest.fixture(scope="module")
def full_bank():
    return build(seed=42, scale="full")


def _records(bank) -> tuple[list[dict], list[dict]]:
    families, dialogue_records = bank
    return [r for rs in families.values() for r in rs], dialogue_records


def _committed() -> tuple[list[dict], list[dict]]:
    def as_dict(q) -> dict:
        return {
            "template": q.template,
            "ground_truth": q.ground_truth,
            "turn": q.turn,
            "dialogue_id": q.dialogue_id,
            "predicates": q.predicates,
            "system_id": q.system_id,
            "family": q.family,
        }

    return [as_dict(q) for q in QUESTIONS], [as_dict(q) for q in TURNS]


def _minority_share(labels: list[str]) -> float:
    true = labels.count("TRUE")
    return min(true, len(labels) - true) / len(labels)


# --- validate-cases: the bank's rules stay out of a team's own file ---


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "bankgen", "validate-cases", *args], capture_output=True, text=True, env=env
    )


def _question(n: int, truth: str, question: str, **extra) -> dict:
    return {
        "id": f"own-{n}",
        "question": question,
        "ground_truth": truth,
        "family": "atomic",
        "split": "core",
        "system_id": f"my_system_{n}",
        "predicates": [{"name": "Chaotic", "polarity": "positive"}],
        "template": "own",
        **extra,
    }


@pytest.mark.parametrize("scale", ["default", "full"])
def test_every_template_gives_both_answers_at_least_35_percent(scale, full_bank) -> None:
    questions, _ = _committed() if scale == "default" else _records(full_bank)
    by_template = defaultdict(list)
    for r in questions:
        by_template[r["template"]].append(r["ground_truth"])
    skewed = {
        t: f"{labels.count('TRUE')}/{len(labels)} TRUE"
        for t, labels in by_template.items()
        if _minority_share(labels) < 0.35
    }
    assert not skewed


def test_a_guesser_that_reads_only_the_template_scores_chance() -> None:
    # the review found ~20% of the old bank answerable from the template alone
    by_template = defaultdict(Counter)
    for q in QUESTIONS:
        by_template[q.template][q.ground_truth] += 1
    majority = {t: c.most_common(1)[0][0] for t, c in by_template.items()}
    accuracy = sum(majority[q.template] == q.ground_truth for q in QUESTIONS) / len(QUESTIONS)
    assert accuracy <= 0.55


@pytest.mark.parametrize("scale", ["default", "full"])
def test_no_dialogue_turn_position_is_one_sided_and_no_predicate_is_asked_twice(scale, full_bank) -> None:
    _, turns = _committed() if scale == "default" else _records(full_bank)
    by_position = defaultdict(list)
    asked = defaultdict(list)
    for r in turns:
        by_position[r["turn"]].append(r["ground_truth"])
        asked[r["dialogue_id"]] += [p["name"] for p in r["predicates"]]
    for position, labels in by_position.items():
        assert 1 - _minority_share(labels) <= 0.65, (position, Counter(labels))
    repeated = {d: names for d, names in asked.items() if len(names) != len(set(names))}
    assert not repeated


def test_no_question_asks_a_property_the_catalog_leaves_unknown() -> None:
    unknown = [
        (q.id, p["name"])
        for q in ALL
        for p in q.predicates
        if q.system_id in CATALOG and CATALOG[q.system_id].truth[p["name"]] is None
    ]
    assert not unknown


def test_believed_but_unproven_ergodicity_and_mixing_are_unknown_not_false() -> None:
    for sid in ("rossler", "chen", "chua", "henon", "lorenz96"):
        assert CATALOG[sid].truth["Mixing"] is None and CATALOG[sid].truth["Ergodic"] is None, sid
    imported = [s for s in CATALOG.values() if s.origin == "dysts"]
    assert imported and all(s.truth["Mixing"] is None and s.truth["Ergodic"] is None for s in imported)
    # proven ones keep their value
    assert CATALOG["lorenz63"].truth["Mixing"] is True and CATALOG["cat_map"].truth["Ergodic"] is True
    # a natural measure on one equilibrium or cycle is trivially ergodic: a convention, not asked
    for sid in ("damped_oscillator", "van_der_pol", "logistic_r3_2"):
        assert CATALOG[sid].truth["Ergodic"] is None, sid


def test_an_unknown_the_axioms_settle_is_a_catalog_error(tmp_path) -> None:
    entry = (ROOT / "cases/chaosbench/systems/core.yaml").read_text().split("\n  - id: ")[1]
    planted = "systems:\n  - id: " + entry.replace("Ergodic: true", "Ergodic: null")  # Lorenz-63 is mixing
    path = tmp_path / "core.yaml"
    path.write_text(planted)
    with pytest.raises(CatalogError, match=r"core.yaml: system lorenz63: Ergodic is null but the axioms make it true"):
        load_catalog(path)


def test_a_system_name_that_gives_a_property_away_is_refused(tmp_path) -> None:
    for sid in ("damped_oscillator", "chua", "rossler_hyperchaos", "random_walk"):
        assert not any(
            word in CATALOG[sid].name for word in ("damped", "double-scroll", "four-dimensional", "random walk")
        )
    entry = (ROOT / "cases/chaosbench/systems/core.yaml").read_text().split("\n  - id: ")[1]
    path = tmp_path / "core.yaml"
    path.write_text(
        "systems:\n  - id: " + entry.replace("name: the Lorenz-63 system", "name: the chaotic Lorenz-63 system")
    )
    with pytest.raises(
        CatalogError, match=r"system lorenz63: name 'the chaotic Lorenz-63 system' gives a property away \('chaotic'\)"
    ):
        load_catalog(path)


def test_definitions_and_labels_agree_on_conservative() -> None:
    assert "invertible" in ontology.PREDICATES["Conservative"].definition
    assert "Invertible" in ontology.requires_closure()["Conservative"]
    for sid in ("tent", "bernoulli", "logistic_r4"):  # keep a smooth measure, but 2-to-1
        assert CATALOG[sid].truth["Conservative"] is False and CATALOG[sid].truth["Invertible"] is False


def test_cross_indicator_questions_include_indicators_that_disagree() -> None:
    cross = [q for q in QUESTIONS if q.family == "cross_indicator"]
    # a finely sampled chaotic orbit: K says regular, the exponent says chaotic, and K is the artefact
    fooled = [
        q
        for q in cross
        if q.extra["indicator"]["k01"] <= 0.2
        and q.extra["indicator"]["lle"] > 2 * q.extra["indicator"]["eps"]
        and "artefact" in q.question
    ]
    assert fooled and all(q.ground_truth == "TRUE" for q in fooled)
    for form in ("face value", "artefact", "noise"):
        golds = Counter(q.ground_truth for q in cross if form in q.question)
        assert golds["TRUE"] and golds["FALSE"], form


def test_printed_values_never_read_as_negative_zero() -> None:
    assert _fmt_k(-0.004) == "0.00" and _fmt_k(-0.306) == "-0.31" and _fmt_k(0.997) == "1.00"
    assert _fmt(-0.0004) == "0.000" and _fmt(-0.004) == "-0.004"
    for q in ALL:
        for token in q.question.replace(",", " ").split():
            assert token.rstrip(".?") not in ("-0.00", "-0.000"), q.id


def test_transitions_are_drafted_in_both_directions() -> None:
    # the old template only stated real changes ("from chaotic to regular": always TRUE)
    by_pair = defaultdict(set)
    for d in regime_transition(load_inputs()):
        if d.template == "regime.transition.v1":
            by_pair[d.question.split(", does")[0]].add(d.truth)
    assert by_pair and all(labels == {True, False} for labels in by_pair.values())


def test_no_question_calls_lorenz_at_rho_24_chaotic() -> None:
    # the strange attractor exists only for rho > 24.06 (Kaplan & Yorke 1979); below, chaos is transient
    inputs = load_inputs()
    point = next(p for p in inputs.sweeps["lorenz_rho"]["points"] if p["value"] == 24.0)
    assert point["regime"] != "chaotic"
    claims = [
        q.id
        for q in QUESTIONS
        if "Lorenz-63" in q.question and "at rho = 24 chaotic?" in q.question and q.ground_truth == "TRUE"
    ]
    assert not claims


def test_a_teams_own_five_unbalanced_questions_validate(tmp_path) -> None:
    own = tmp_path / "own.jsonl"
    rows = [
        _question(1, "TRUE", "Is my pendulum chaotic?"),
        _question(2, "TRUE", "Is my double pendulum chaotic at high energy?"),
        _question(3, "TRUE", "Does my circuit show chaos"),  # no '?': their style, not ours
        _question(4, "TRUE", "Is the the flow chaotic?"),  # nor doubled words
        _question(5, "FALSE", "Is my damped oscillator chaotic?"),
    ]
    own.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = _run(str(own))
    assert result.returncode == 0, result.stdout
    assert "is valid" in result.stdout


def test_a_built_bank_is_held_to_the_building_rules_with_file_and_line(tmp_path) -> None:
    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "manifest.json").write_text("{}")
    rows = [
        _question(n, "TRUE" if n % 2 else "FALSE", f"Is the system number {n} chaotic?", template=f"t{n % 2}")
        for n in range(1, 9)
    ]
    (bank / "atomic.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    turns = [
        {
            "id": f"d-t{t}",
            "question": q,
            "ground_truth": "TRUE",
            "family": "multi_hop",
            "split": "core",
            "system_id": "henon",
            "predicates": [{"name": name, "polarity": "positive"}],
            "template": "dlg",
            "dialogue_id": "d",
            "turn": t,
        }
        for t, (q, name) in enumerate(
            [
                ("Is the Hénon map chaotic?", "Chaotic"),
                ("Given that, is it chaotic?", "Chaotic"),
                ("Is it mixing?", "Mixing"),
            ],
            start=1,
        )
    ]
    (bank / "dialogues.jsonl").write_text("".join(json.dumps(r) + "\n" for r in turns))
    out = _run(str(bank)).stdout
    assert f"{bank}: template t0: 0 TRUE / 4 FALSE (each label must be at least 35%)" in out
    assert f"{bank / 'dialogues.jsonl'}:2: dialogue d asks Chaotic again (first at {bank / 'dialogues.jsonl'}:1)" in out
    assert f"{bank / 'dialogues.jsonl'}:3: henon: asks about Mixing, which the systems catalog leaves unknown" in out
    assert f"{bank}: dialogue turn 1: 1 TRUE / 0 FALSE (no label may exceed 65%)" in out
