"""chaosbench/dialogues.py and the bank's dialogues: turns ordered, claims follow polarity, a
contradiction is one claim both ways, a violation is an axiom the asserted assignment breaks."""

from __future__ import annotations

import pytest
from helpers import (
    DEFAULT_CASES,
    question,
    write_jsonl,
)

from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.chaosbench.dialogues import claims, contradictions, fol_violations
from pytest_reasoning_evals.chaosbench.questions import group_dialogues, load_questions
from pytest_reasoning_evals.chaosbench.rows import AskedPredicate, DialogueRow, TurnRow

DIALOGUE_FILE = DEFAULT_CASES / "dialogues.jsonl"
DIALOGUES = group_dialogues(load_questions(DIALOGUE_FILE))


# --- claims, contradictions, violations on hand-made dialogue rows ---


def turn_row(turn: int, predicate: str, polarity: str, label: str | None, system: str = "lorenz63") -> TurnRow:
    spend = {"provider": "fake", "input_tokens": 0, "output_tokens": 0, "thinking_tokens": 0, "cost_usd": 0.0}
    return TurnRow(
        id=f"d1-t{turn}",
        family="dialogue",
        split="core",
        system_id=system,
        bias=None,
        predicates=(AskedPredicate(predicate, polarity),),
        label=label,
        gold=None,
        correct=None,
        status="no_gold",
        error=None,
        cassette_hit=None,
        turn=turn,
        **spend,
    )


def dialogue(*turns: TurnRow) -> DialogueRow:
    return DialogueRow(
        id="d1", family="dialogue", split="core", correct=None, status="no_gold", error=None, turns=turns
    )


# --- the bank and the loader ---


def test_the_bank_has_at_least_fifty_dialogues_of_three_to_six_turns_with_one_predicate_each() -> None:
    assert len(DIALOGUES) >= 50
    assert all(3 <= len(d.turns) <= 6 for d in DIALOGUES)
    assert all(len(t.predicates) == 1 for d in DIALOGUES for t in d.turns)


def test_turns_are_ordered_and_gaps_are_errors_with_file_and_line(tmp_path) -> None:
    turn = lambda n: question(f"d1-t{n}", dialogue_id="d1", turn=n)  # noqa: E731
    path = write_jsonl(tmp_path / "d.jsonl", [turn(2), turn(1), turn(3)])
    (dialogue,) = group_dialogues(load_questions(path))
    assert [t.turn for t in dialogue.turns] == [1, 2, 3]
    path = write_jsonl(tmp_path / "gap.jsonl", [turn(1), turn(3)])
    with pytest.raises(CaseFileError, match=r"gap\.jsonl:1: dialogue 'd1' has turns \[1, 3\]; expected 1\.\.2"):
        group_dialogues(load_questions(path))


def test_claims_follow_polarity_and_skip_unknown_answers() -> None:
    record = dialogue(
        turn_row(1, "Chaotic", "positive", "TRUE"),
        turn_row(2, "Chaotic", "negative", "TRUE"),
        turn_row(3, "Periodic", "negative", "FALSE"),
        turn_row(4, "Mixing", "positive", None),
    )
    assert [(c.predicate, c.value, c.turn) for c in claims(record)] == [
        ("Chaotic", True, 1),
        ("Chaotic", False, 2),
        ("Periodic", True, 3),
    ]


def test_contradiction_is_the_same_claim_both_ways_and_not_counted_again_as_a_violation() -> None:
    record = dialogue(turn_row(1, "Chaotic", "positive", "TRUE"), turn_row(2, "Chaotic", "negative", "TRUE"))
    assert contradictions(claims(record)) == ["lorenz63: Chaotic asserted at turn 1 and denied at turn 2"]
    assert fol_violations(claims(record)) == []


def test_violation_is_an_axiom_broken_by_the_asserted_assignment() -> None:
    record = dialogue(turn_row(1, "Chaotic", "positive", "TRUE"), turn_row(2, "Deterministic", "positive", "FALSE"))
    assert fol_violations(claims(record)) == ["lorenz63: Chaotic=True requires Deterministic, but Deterministic=False"]
    assert contradictions(claims(record)) == []
    other_system = dialogue(
        turn_row(1, "Chaotic", "positive", "TRUE"),
        turn_row(2, "Deterministic", "positive", "FALSE", system="logistic_r4"),
    )
    assert fol_violations(claims(other_system)) == [], "axioms bind claims about one system"
