"""Dialogues run through pytest: asked as real conversations, one item and one cassette each;
dialogue accuracy, FOL-violation and contradiction rates match an independent count (SPEC 5.4)."""

from __future__ import annotations

import json

import pytest
import yaml
from helpers import (
    DEFAULT_CASES,
    DEFAULT_PROMPTS,
    REFERENCE,
    add_eval_module,
    fake_model_args,
    fake_models,
    read_summary,
    run_dir,
)

from pytest_reasoning_evals.chaosbench import ontology
from pytest_reasoning_evals.chaosbench.dialogues import claims, fol_violations
from pytest_reasoning_evals.chaosbench.prompts import PromptTemplate
from pytest_reasoning_evals.chaosbench.questions import group_dialogues, load_questions
from pytest_reasoning_evals.chaosbench.rows import compact

DIALOGUE_FILE = DEFAULT_CASES / "dialogues.jsonl"
DIALOGUES = group_dialogues(load_questions(DIALOGUE_FILE))
PROMPT = PromptTemplate.load(DEFAULT_PROMPTS, "zeroshot")


def asserted(turn, label: str) -> tuple[str, bool]:
    """(predicate, value) that answering `label` to a one-predicate turn asserts."""
    (pred,) = turn.predicates
    return pred["name"], (label == "TRUE") == (pred["polarity"] == "positive")


def expected_metrics(answers: dict[str, list[str]]) -> dict:
    """Dialogue accuracy, FOL-violation and contradiction rate for the given answers per dialogue,
    straight from the records and the axioms."""
    correct = violations = contradicted = 0
    for dialogue in DIALOGUES:
        labels = answers[dialogue.id]
        correct += all(label == t.ground_truth for t, label in zip(dialogue.turns, labels))
        values: dict[str, set[bool]] = {}
        for turn, label in zip(dialogue.turns, labels):
            name, value = asserted(turn, label)
            values.setdefault(name, set()).add(value)
        contradicted += any(len(v) == 2 for v in values.values())
        violations += len(ontology.violations({p: next(iter(v)) for p, v in values.items() if len(v) == 1}))
    n = len(DIALOGUES)
    return {
        "dialogue_accuracy": correct / n,
        "fol_violation_rate": violations / n,
        "contradiction_rate": contradicted / n,
    }


def dialogue_run(pytester, *args: str):
    add_eval_module(pytester)
    return pytester.runpytest(f"--eval-cases={DIALOGUE_FILE}", "-p", "no:randomly", *args)


# --- a hand-built model over real HTTP that breaks one axiom in one dialogue ---


def conversation_key(messages: list[dict]) -> tuple[str, ...]:
    return tuple(m["content"] for m in messages if m["role"] == "user")


def scripted_answers(flip: tuple[str, int] | None = None) -> dict[tuple[str, ...], str]:
    """Conversation so far (user turns) -> the gold answer, except at the flipped (dialogue, turn)."""
    table = {}
    for d in DIALOGUES:
        for n, turn in enumerate(d.turns, start=1):
            answer = turn.ground_truth
            if flip == (d.id, n):
                answer = "FALSE" if answer == "TRUE" else "TRUE"
            table[tuple(PROMPT.render(t.question) for t in d.turns[:n])] = answer
    return table


def chosen_violation() -> tuple[str, int]:
    """The first dialogue whose turn 2 asks for a consequence of turn 1's true claim: answering
    it FALSE asserts 'opening predicate True, its requirement False'."""
    for d in DIALOGUES:
        implication = d.turns[1]
        if (
            implication.template == "dialogue.implication.v1"
            and implication.ground_truth == "TRUE"
            and implication.predicates[0]["polarity"] == "positive"
        ):
            return d.id, 2
    raise AssertionError("no implication turn in the bank")


def fake_dialogue_run(pytester, url: str, *args: str):
    return dialogue_run(pytester, *fake_model_args(pytester, fake_models(url)), *args)


# --- baselines over the bank's dialogues ---


@pytest.mark.parametrize("model", ["oracle", "always-true", "always-false"])
def test_baseline_dialogue_metrics_match_an_independent_count(pytester, model: str) -> None:
    dialogue_run(pytester, "--model", model)
    summary = read_summary(pytester, model)
    answer = {"oracle": None, "always-true": "TRUE", "always-false": "FALSE"}[model]
    answers = {d.id: [answer or t.ground_truth for t in d.turns] for d in DIALOGUES}
    expected = expected_metrics(answers)
    assert {k: summary[k] for k in expected} == pytest.approx(expected)
    if model == "oracle":
        assert expected == {"dialogue_accuracy": 1.0, "fol_violation_rate": 0.0, "contradiction_rate": 0.0}
    if model == "always-true":
        # no dialogue asks a predicate twice, so saying TRUE to everything contradicts no claim
        # directly: it breaks axioms instead ("it is hyperchaotic" after "it is not chaotic")
        assert expected["contradiction_rate"] == 0.0 and expected["fol_violation_rate"] > 0
    details = summary["dialogue_details"]
    turns = [t for d in DIALOGUES for t in d.turns]
    expected_turns = sum((answer or t.ground_truth) == t.ground_truth for t in turns) / len(turns)
    assert details["turn_accuracy"] == pytest.approx(expected_turns)
    assert details["total_dialogues"] == len(DIALOGUES) and details["total_turns"] == len(turns)
    assert sum(details["violation_breakdown"].values()) == len(DIALOGUES)
    assert summary["total_questions"] == 0, "dialogue turns are not single questions"


def test_a_model_breaking_one_axiom_in_one_dialogue(pytester, server) -> None:
    flip = chosen_violation()
    table = scripted_answers(flip)
    server.responder = lambda body: table[conversation_key(body["messages"])]
    result = fake_dialogue_run(pytester, server.openai_base, "--eval-record-mode", "once")
    assert result.ret == 0, result.stdout.str()
    summary = read_summary(pytester, "fake")
    dialogue = next(d for d in DIALOGUES if d.id == flip[0])
    opening, required = dialogue.turns[0].predicates[0]["name"], dialogue.turns[1].predicates[0]["name"]
    answers = {d.id: [t.ground_truth for t in d.turns] for d in DIALOGUES}
    answers[flip[0]][1] = "FALSE"
    expected = expected_metrics(answers)
    assert expected["fol_violation_rate"] > 0
    assert {k: summary[k] for k in expected} == pytest.approx(expected)
    assert summary["contradiction_rate"] == 0.0
    assert summary["dialogue_details"]["dialogues_with_violations"] == 1
    assert summary["dialogue_accuracy"] == pytest.approx((len(DIALOGUES) - 1) / len(DIALOGUES))
    result.stdout.fnmatch_lines([f"*test_dialogue[[]{flip[0]}[]] - turn 2: expected TRUE, got FALSE: 'FALSE'"])
    record = next(
        json.loads(line)
        for line in (run_dir(pytester, "fake") / "completions.jsonl").open()
        if json.loads(line)["id"] == flip[0]
    )
    found = fol_violations(claims(compact(record)))
    assert found and f"{opening}=True requires {required}" in found[0]


def test_turns_are_sent_as_one_conversation_with_the_full_history(pytester, server) -> None:
    server.responder = lambda body: f"TRUE (reply to turn {len(body['messages']) // 2 + 1})"
    dialogue = DIALOGUES[0]
    result = fake_dialogue_run(pytester, server.openai_base, "--eval-record-mode", "once", "-k", dialogue.id)
    assert result.ret == 0, result.stdout.str()
    sent = [r["body"]["messages"] for r in server.requests]
    assert len(sent) == len(dialogue.turns)
    for n, messages in enumerate(sent, start=1):
        assert [m["role"] for m in messages] == ["user", "assistant"] * (n - 1) + ["user"]
        assert [m["content"] for m in messages if m["role"] == "user"] == [
            PROMPT.render(t.question) for t in dialogue.turns[:n]
        ]
        assert [m["content"] for m in messages if m["role"] == "assistant"] == [
            f"TRUE (reply to turn {k})" for k in range(1, n)
        ]
    # one cassette for the whole dialogue, every turn in it
    cassette = pytester.path / "cassettes" / "fake" / "dialogues-zeroshot" / f"{dialogue.id}.yaml"
    assert len(yaml.safe_load(cassette.read_text())["interactions"]) == len(dialogue.turns)
    (record,) = [json.loads(line) for line in (run_dir(pytester, "fake", subset=True) / "completions.jsonl").open()]
    assert [t["turn"] for t in record["turns"]] == list(range(1, len(dialogue.turns) + 1))
    assert record["cassette"] == f"fake/dialogues-zeroshot/{dialogue.id}.yaml"

    server.close()  # replay with the server gone: the same record
    replayed = fake_dialogue_run(pytester, "http://127.0.0.1:9/v1", "-k", dialogue.id)
    assert replayed.ret == 0, replayed.stdout.str()
    (again,) = [json.loads(line) for line in (run_dir(pytester, "fake", subset=True) / "completions.jsonl").open()]

    def strip(r: dict) -> str:
        return json.dumps([{k: v for k, v in t.items() if k not in ("cassette_hit", "latency_ms")} for t in r["turns"]])

    assert strip(again) == strip(record)
    assert all(t["cassette_hit"] for t in again["turns"]) and not any(t["cassette_hit"] for t in record["turns"])


def test_a_failed_turn_leaves_the_later_turns_unasked(pytester, server) -> None:
    from fakeprovider import status

    dialogue = DIALOGUES[0]
    server.script(*[status(400)])  # turn 1 fails for good (a 400 is not retried)
    result = fake_dialogue_run(pytester, server.openai_base, "--eval-record-mode", "once", "-k", dialogue.id)
    # a failed call is an UNKNOWN answer, not a harness error; an outage fails the session by its gate
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "gate failed-calls: FAILED (1 items (100.0%) ended in failed calls (1 provider errors, 0 cassette misses), allowed 5%*"
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert len(server.requests) == 1
    (record,) = [json.loads(line) for line in (run_dir(pytester, "fake", subset=True) / "completions.jsonl").open()]
    assert record["status"] == "unknown" and record["error"].startswith("HTTP 400")
    assert [t["error"] for t in record["turns"][1:]] == ["not asked: an earlier turn of this dialogue failed"] * (
        len(dialogue.turns) - 1
    )


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_turn_refused_after_a_paid_turn_keeps_that_turn_and_its_cost(pytester, server, workers) -> None:
    """A refused key stops the run; the turns a stopped dialogue paid for stay in its record,
    summary.json and run_meta.json's spent_usd (issue 38: they were reported as 0.0)."""
    from fakeprovider import status

    later = lambda body: status(401) if len(body["messages"]) > 1 else None  # noqa: E731 - turn 2 on: refused
    server.fault_for = later
    models = fake_models(server.openai_base, price_in=1250.0)  # 12 prompt tokens: $0.015 a call
    add_eval_module(pytester)
    args = fake_model_args(pytester, models, DIALOGUE_FILE)
    result = pytester.runpytest_subprocess(*args, "-p", "no:randomly", "--eval-record-mode", "once", "-n", workers)
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    paid = 0.015 * sum(later(r["body"]) is None for r in server.requests)
    assert paid > 0
    folder = run_dir(pytester, "fake")
    records = [json.loads(line) for line in (folder / "completions.jsonl").open()]
    assert sum(r["cost_usd"] for r in records) == pytest.approx(paid)
    assert read_summary(pytester, "fake")["cost_usd"] == pytest.approx(paid)
    assert json.loads((folder / "run_meta.json").read_text())["spent_usd"] == pytest.approx(paid)
    stopped = [r for r in records if r["turns"][0]["cost_usd"]]
    assert stopped and all("refused the key" in r["error"] for r in stopped)
    assert all(r["turns"][0]["raw_text"] == "TRUE" and r["turns"][2]["error"].startswith("not asked") for r in stopped)


# --- upstream v1 dialogues ---


def test_upstream_v1_dialogues_load_and_the_oracle_is_consistent(pytester) -> None:
    path = REFERENCE / "chaosbench" / "upstream_v1_dialogues_sample.jsonl"
    if not path.exists():
        pytest.skip("../shared/reference is not beside this checkout")
    dialogues = group_dialogues(load_questions(path))
    assert len(dialogues) == 10 and sum(len(d.turns) for d in dialogues) == 30
    add_eval_module(pytester)
    result = pytester.runpytest("--model", "oracle", f"--eval-cases={path}")
    assert result.ret == 0, result.stdout.str()
    summary = read_summary(pytester, "oracle")
    # upstream v1 turns carry no predicates: nothing was checked, so the rates are null, not 0
    assert (summary["dialogue_accuracy"], summary["fol_violation_rate"], summary["contradiction_rate"]) == (
        1.0,
        None,
        None,
    )
    assert summary["dialogue_details"]["total_dialogues"] == 10
    result.stdout.fnmatch_lines(["*10 passed*"])
