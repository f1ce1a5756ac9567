"""chaosbench/rows.py: a record becomes a typed row of what the summary reads, sharing repeated words."""

from __future__ import annotations

import json

from pytest_reasoning_evals.chaosbench.rows import AskedPredicate, DialogueRow, QuestionRow, TurnRow, compact

QUESTION = {
    "id": "q1",
    "family": "atomic",
    "split": "core",
    "system_id": "lorenz63",
    "bias": None,
    "question": "Is the Lorenz system chaotic?",
    "predicates": [{"name": "Chaotic", "polarity": "positive"}],
    "provider": "openai",
    "model": "m",
    "raw_text": "TRUE",
    "reprompts": 1,
    "reprompt_replies": ["TRUE"],
    "label_from": 1,
    "label": "TRUE",
    "gold": "TRUE",
    "correct": True,
    "status": "correct",
    "input_tokens": 10,
    "output_tokens": 2,
    "thinking_tokens": 0,
    "latency_ms": 1.5,
    "cost_usd": 0.25,
    "finish_reason": "stop",
    "error": None,
    "cassette": "c.yaml",
    "cassette_hit": True,
}


def test_a_question_record_becomes_the_row_of_what_the_summary_reads() -> None:
    row = compact(QUESTION)
    assert row == QuestionRow(
        id="q1",
        family="atomic",
        split="core",
        system_id="lorenz63",
        bias=None,
        predicates=(AskedPredicate("Chaotic", "positive"),),
        label="TRUE",
        gold="TRUE",
        correct=True,
        status="correct",
        error=None,
        provider="openai",
        input_tokens=10,
        output_tokens=2,
        thinking_tokens=0,
        cost_usd=0.25,
        cassette_hit=True,
        reprompts=1,
        label_from=1,
    )
    assert row.kind == "question" and row.calls == (row,)
    assert not hasattr(row, "raw_text") and not hasattr(row, "__dict__")  # completions.jsonl has the texts


def test_a_record_of_a_run_before_reprompts_was_asked_once() -> None:
    before = {k: v for k, v in QUESTION.items() if k not in ("reprompts", "reprompt_replies", "label_from")}
    assert (compact(before).reprompts, compact(before).label_from) == (0, None)


def test_a_dialogue_record_becomes_its_verdict_and_its_turns_rows() -> None:
    turns = [{**QUESTION, "id": f"d1-t{n}", "dialogue_id": "d1", "turn": n} for n in (1, 2)]
    record = {
        "kind": "dialogue",
        "id": "d1",
        "family": "dialogue",
        "split": "core",
        "system_id": "lorenz63",
        "correct": False,
        "status": "wrong",
        "error": None,
        "num_turns": 2,
        "turns": turns,
    }
    row = compact(record)
    assert isinstance(row, DialogueRow) and row.kind == "dialogue"
    assert (row.id, row.family, row.split, row.correct, row.status, row.error) == (
        "d1",
        "dialogue",
        "core",
        False,
        "wrong",
        None,
    )
    assert all(isinstance(t, TurnRow) for t in row.turns) and [t.turn for t in row.turns] == [1, 2]
    assert row.calls == row.turns and (row.turns[0].id, row.turns[0].label, row.turns[0].cost_usd) == (
        "d1-t1",
        "TRUE",
        0.25,
    )


def test_the_rows_the_controller_keeps_share_their_repeated_words_and_predicates() -> None:
    """Under xdist each record arrives as new strings; the rows kept share them."""
    first, second = (compact(json.loads(json.dumps(QUESTION))) for _ in range(2))
    assert first.family is second.family and first.status is second.status and first.provider is second.provider
    assert first.predicates is second.predicates and first.predicates[0].name is second.predicates[0].name
    no_predicates = compact({**QUESTION, "predicates": []})
    assert (
        no_predicates.predicates == ()
        and no_predicates.predicates is compact({**QUESTION, "predicates": []}).predicates
    )
